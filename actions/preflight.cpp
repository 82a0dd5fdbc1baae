#include "actions/preflight.h"

#include "actions/catalog_session.h"
#include "actions/http_call.h"

namespace icewarden {

std::optional<std::string> EndpointAnswers(const std::string& what, const HttpCall& call,
                                           const ActionContext& ctx, bool path_is_secret) {
  // A GET has no effect by HTTP semantics; the real call's method and body are not sent.
  HttpCall probe;
  probe.method = "GET";
  probe.url = call.url;
  probe.headers = call.headers;
  ActionContext bounded = ctx;
  bounded.idempotency_key.clear();
  std::string why;
  auto url = ParseHttpUrl(call.url, &why);
  if (!url) return what + ": " + why;
  const std::string shown = path_is_secret ? url->Origin() : url->Redacted();
  HttpReply reply = SendHttp(probe, bounded);
  if (reply.delivery != HttpReply::Delivery::kAnswered)
    return what + " " + shown + " does not answer: " + reply.error;
  if (reply.status == 401 || reply.status == 403)
    return what + " " + shown + " refuses our credentials: GET answered " +
           std::to_string(reply.status);
  if (reply.status >= 500)
    return what + " " + shown + " answers with a server error: GET answered " +
           std::to_string(reply.status);
  return std::nullopt;
}

std::optional<std::string> CatalogAcceptsUs(const ActionEnv& env, const std::string& region,
                                            const ActionContext& ctx) {
  CatalogSession session(env);
  auto client = session.Client(region);
  if (!client.ok()) return "catalog of " + region + ": " + client.status().message();
  auto config = GetConfigNow(session, **client, ctx);
  if (!config) return "catalog of " + region + ": GET /v1/config did not answer in time";
  if (!config->ok())
    return "catalog of " + region +
           " does not accept our credentials or does not answer: GET /v1/config failed: " +
           config->status().ToString();
  return std::nullopt;
}

}  // namespace icewarden
