// The http family: http.request (call any endpoint) and fence.http (call an external
// fencing endpoint, e.g. one that revokes the old owner's write credentials).
//
// Both kinds share params and behaviour (actions/http_call.h) and differ in what they
// promise: fence.http is declared idempotent, because a fencing endpoint must be (it is
// re-run after a crash, with the same Idempotency-Key); http.request is not, because its
// default method, POST, is not. An http.request with GET, PUT or DELETE is idempotent by
// HTTP semantics, but the interface asks per kind, so the executor treats every
// http.request as non-idempotent; use PUT with an endpoint that honours Idempotency-Key,
// or fence.http, when a step must be safely re-runnable.
#include <nlohmann/json.hpp>

#include "actions/action_kinds.h"
#include "actions/http_call.h"
#include "actions/param_reader.h"
#include "actions/parsed_action.h"
#include "actions/preflight.h"

namespace icewarden {
namespace {

class HttpEndpointAction final : public ParsedAction<HttpRequestSpec>, public ActionPreflight {
 public:
  HttpEndpointAction(std::string kind, bool idempotent, std::string what)
      : kind_(std::move(kind)), idempotent_(idempotent), what_(std::move(what)) {}

  // Readiness: the endpoint answers a GET with our headers (never the step's own method).
  std::vector<std::string> Preflight(const nlohmann::json& params,
                                     const ActionContext& ctx) const override {
    std::vector<ParamError> errors;
    auto spec = Read(params, errors);
    if (!spec) return {kind_ + ": " + FirstParamError(errors)};
    if (auto why = EndpointAnswers(what_ + " endpoint", spec->call, ctx)) return {*why};
    return {};
  }

  std::string_view kind() const override { return kind_; }
  bool idempotent() const override { return idempotent_; }

 protected:
  std::optional<HttpRequestSpec> Read(const nlohmann::json& params,
                                      std::vector<ParamError>& errors) const override {
    ParamReader r(&errors);
    if (!r.RequireObject(params, "")) return std::nullopt;
    r.RejectUnknown(params, "", kHttpRequestParams);
    auto spec = ReadHttpRequestSpec(params, "", r);
    if (!r.ok()) return std::nullopt;
    return spec;
  }

  std::string PlanSpec(const HttpRequestSpec& spec) const override {
    const HttpCall& c = spec.call;
    std::string line = what_ + ": " + c.method + " " + c.url;
    std::string extras;
    if (!c.body.empty())
      extras += (c.content_type == "application/json" ? "JSON body, " : "text body, ") +
                std::to_string(c.body.size()) + " bytes";
    if (!c.headers.empty()) {
      std::string names;
      for (const auto& [name, value] : c.headers) names += (names.empty() ? "" : ", ") + name;
      extras += (extras.empty() ? "" : "; ") + std::string("headers ") + names;
    }
    if (!extras.empty()) line += " (" + extras + ")";
    line += ", expecting " + spec.expect.ToString();
    if (!idempotent_) {
      const bool safe = c.method == "GET" || c.method == "PUT" || c.method == "DELETE";
      line += safe ? "; idempotent by HTTP semantics" : "; not idempotent";
    }
    return line;
  }

  ActionResult RunSpec(const HttpRequestSpec& spec, const ActionContext& ctx) override {
    HttpReply reply = SendHttp(spec.call, ctx);
    return HttpResult(what_, spec.call, spec.expect, reply);
  }

 private:
  std::string kind_;
  bool idempotent_;
  std::string what_;  // starts Plan lines and reasons
};

}  // namespace

Status registerHttpActions(ActionRegistry& r, const ActionEnv&) {
  Status s = r.Register(std::make_unique<HttpEndpointAction>("http.request", false, "HTTP"));
  if (!s.ok()) return s;
  return r.Register(std::make_unique<HttpEndpointAction>("fence.http", true, "fence"));
}

}  // namespace icewarden
