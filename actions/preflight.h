// ActionPreflight: the optional readiness capability of an action kind (DESIGN.md,
// "readiness"): whether a step of this kind could work right now with these params, found
// out with no effect at all. A kind that can check something implements this interface
// besides Action; PreflightOf finds it. Kinds without it are reported as "not checked".
//
// What each built-in kind checks:
//   dns.rfc2136              an UPDATE whose only content is a prerequisite: the server
//                            answers, authenticates our TSIG key and lets it update the zone
//   verify.dns               the server answers a query for the name
//   alert.alertmanager       GET {url}/api/v2/status answers 2xx
//   alert.webhook            the URL answers a GET (any status but 401, 403 and 5xx: a
//   http.request, fence.http webhook or fencing endpoint need not serve GET, but a refusal
//                            of our credentials or a server error means the real call fails)
//   ownership.transfer       the target region's catalog accepts our credentials
//                            (GET /v1/config through the catalog client)
//   verify.catalog_healthy,  the named region's catalog accepts our credentials
//   verify.replica_caught_up,
//   verify.ownership_markers
// fence.catalog_quiet has no preflight on purpose: it watches the old owner, which is
// usually down when a failover is needed; requiring it to answer would make every route
// unready exactly when it is wanted.
//
// Contract: Preflight never changes anything anywhere, returns by ctx.deadline, and
// returns one sentence per problem (empty: nothing stands in the way). Secrets are never
// put into a sentence.
// Thread-safety: as Action (concurrent calls allowed).
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <vector>

#include "actions/action.h"

namespace icewarden {

struct HttpCall;

class ActionPreflight {
 public:
  virtual ~ActionPreflight() = default;
  virtual std::vector<std::string> Preflight(const nlohmann::json& params,
                                             const ActionContext& ctx) const = 0;
};

// The kind's preflight, or nullptr when it has none.
inline const ActionPreflight* PreflightOf(const Action& action) {
  return dynamic_cast<const ActionPreflight*>(&action);
}

// Shared checks (preflight.cpp).
//
// A GET of `call.url` with `call.headers` (method and body ignored): nullopt when the endpoint
// answered with a status other than 401, 403 and 5xx; else why not, starting with `what`.
// `path_is_secret`: name only the URL's origin.
std::optional<std::string> EndpointAnswers(const std::string& what, const HttpCall& call,
                                           const ActionContext& ctx, bool path_is_secret = false);
// GET /v1/config on `region`'s catalog with its configured credentials (OAuth2 token
// included): nullopt when it answered with a config; else why not.
std::optional<std::string> CatalogAcceptsUs(const ActionEnv& env, const std::string& region,
                                            const ActionContext& ctx);

}  // namespace icewarden
