// alert.webhook: tells people (or a paging service) what a failover is doing.
//
// Params: url, format (generic|slack|pagerduty, default generic), routing_key (pagerduty
// only, required there), severity (critical|error|warning|info, default critical), summary
// (default: one line naming the failover, scope and regions), details (a mapping), headers,
// hmac_secret (signs the body: X-Icewarden-Signature: sha256=<hex HMAC-SHA256>).
//
// Idempotent: every call carries Idempotency-Key, and PagerDuty's dedup_key is the same key,
// so a re-run after a crash updates the same incident instead of opening a second one.
// Webhook URLs often carry their token in the path (Slack's do), so results name only the
// URL's origin; the routing key and HMAC secret never leave the request.
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <nlohmann/json.hpp>

#include "actions/alert_actions.h"
#include "actions/http_call.h"
#include "actions/param_reader.h"
#include "actions/parsed_action.h"
#include "actions/preflight.h"

namespace icewarden {
namespace {

const std::vector<std::string> kWebhookParams = {
    "url", "format", "routing_key", "severity", "summary", "details", "headers", "hmac_secret"};

struct WebhookSpec {
  std::string url;
  std::string format = "generic";
  std::string routing_key;
  std::string severity = "critical";
  std::optional<std::string> summary;
  nlohmann::json details = nlohmann::json::object();
  std::map<std::string, std::string> headers;
  std::string hmac_secret;
};

std::optional<WebhookSpec> ParseWebhook(const nlohmann::json& params,
                                        std::vector<ParamError>& errors) {
  ParamReader r(&errors);
  if (!r.RequireObject(params, "")) return std::nullopt;
  r.RejectUnknown(params, "", kWebhookParams);
  WebhookSpec s;
  if (auto url = ReadHttpUrl(params, "", "url", r)) s.url = *url;
  if (auto f = r.OneOf(params, "", "format", {"generic", "slack", "pagerduty"}, false))
    s.format = *f;
  if (auto k = r.String(params, "", "routing_key", s.format == "pagerduty")) {
    if (s.format != "pagerduty")
      r.Error("routing_key", "only used with format: pagerduty");
    else
      s.routing_key = *k;
  }
  if (auto sev = r.OneOf(params, "", "severity", {"critical", "error", "warning", "info"}, false))
    s.severity = *sev;
  s.summary = r.String(params, "", "summary", false);
  if (const nlohmann::json* d = r.Member(params, "", "details", false)) {
    if (d->is_object())
      s.details = *d;
    else
      r.Error("details", "expected a mapping, got " + DescribeJsonType(*d));
  }
  if (auto h = r.StringMap(params, "", "headers", false)) s.headers = *h;
  if (auto secret = r.String(params, "", "hmac_secret", false)) {
    if (secret->empty())
      r.Error("hmac_secret", "must not be empty (leave it out to send unsigned)");
    else
      s.hmac_secret = *secret;
  }
  if (!r.ok()) return std::nullopt;
  return s;
}

std::string DefaultSummary(const ActionContext& ctx) {
  return "icewarden failover " + ctx.failover_id + ": " + ctx.scope + " from " + ctx.from + " to " +
         ctx.to;
}

nlohmann::json GenericBody(const WebhookSpec& s, const std::string& summary,
                           const ActionContext& ctx) {
  return {{"failover_id", ctx.failover_id},
          {"step_id", ctx.step_id},
          {"from", ctx.from},
          {"to", ctx.to},
          {"scope", ctx.scope},
          {"summary", summary},
          {"severity", s.severity},
          {"details", s.details}};
}

// Slack's incoming-webhook shape (also accepted by Mattermost and Rocket.Chat): a plain
// text fallback for notifications and blocks for the message itself.
nlohmann::json SlackBody(const WebhookSpec& s, const std::string& summary,
                         const ActionContext& ctx) {
  const std::string headline = "[" + s.severity + "] " + summary;
  nlohmann::json blocks = nlohmann::json::array();
  blocks.push_back(
      {{"type", "section"}, {"text", {{"type", "mrkdwn"}, {"text", "*" + headline + "*"}}}});
  auto field = [](const std::string& name, const std::string& value) {
    return nlohmann::json{{"type", "mrkdwn"}, {"text", "*" + name + "*\n" + value}};
  };
  blocks.push_back(
      {{"type", "section"},
       {"fields",
        {field("Failover", "`" + ctx.failover_id + "`"), field("Step", "`" + ctx.step_id + "`"),
         field("From → to", ctx.from + " → " + ctx.to), field("Scope", ctx.scope)}}});
  if (!s.details.empty()) {
    std::string text;
    for (auto it = s.details.begin(); it != s.details.end(); ++it) {
      text += (text.empty() ? "" : " · ") + it.key() + ": " +
              (it->is_string() ? it->get<std::string>() : it->dump());
    }
    if (text.size() > 2000) text = text.substr(0, 2000) + "…";
    blocks.push_back({{"type", "context"}, {"elements", {{{"type", "mrkdwn"}, {"text", text}}}}});
  }
  return {{"text", headline}, {"blocks", blocks}};
}

// PagerDuty Events API v2 (https://events.pagerduty.com/v2/enqueue).
nlohmann::json PagerDutyBody(const WebhookSpec& s, const std::string& summary,
                             const ActionContext& ctx) {
  nlohmann::json custom = s.details;
  for (const auto& [key, value] :
       std::vector<std::pair<std::string, std::string>>{{"failover_id", ctx.failover_id},
                                                        {"step_id", ctx.step_id},
                                                        {"from", ctx.from},
                                                        {"to", ctx.to},
                                                        {"scope", ctx.scope}}) {
    if (!custom.contains(key)) custom[key] = value;
  }
  return {{"routing_key", s.routing_key},
          {"event_action", "trigger"},
          {"dedup_key", ctx.idempotency_key},
          {"payload",
           {{"summary", summary.substr(0, 1024)},
            {"source", "icewarden"},
            {"severity", s.severity},
            {"custom_details", custom}}}};
}

class AlertWebhookAction final : public ParsedAction<WebhookSpec>, public ActionPreflight {
 public:
  // Readiness: the webhook's endpoint answers (its path is often its secret: not shown).
  std::vector<std::string> Preflight(const nlohmann::json& params,
                                     const ActionContext& ctx) const override {
    std::vector<ParamError> errors;
    auto s = Read(params, errors);
    if (!s) return {"alert.webhook: " + FirstParamError(errors)};
    HttpCall call;
    call.url = s->url;
    call.headers = s->headers;
    if (auto why =
            EndpointAnswers(s->format + " alert webhook", call, ctx, /*path_is_secret=*/true))
      return {*why};
    return {};
  }

  std::string_view kind() const override { return "alert.webhook"; }
  bool idempotent() const override { return true; }

 protected:
  std::optional<WebhookSpec> Read(const nlohmann::json& params,
                                  std::vector<ParamError>& errors) const override {
    return ParseWebhook(params, errors);
  }

  std::string PlanSpec(const WebhookSpec& s) const override {
    // The origin only: a webhook's path is often its secret.
    std::string why;
    auto url = ParseHttpUrl(s.url, &why);
    std::string line =
        "send a " + s.severity + " " + s.format + " alert to " + (url ? url->Origin() : s.url);
    line += s.summary ? ": \"" + *s.summary + "\"" : std::string(" with the default summary");
    if (!s.hmac_secret.empty()) line += ", signed with HMAC-SHA256";
    return line;
  }

  ActionResult RunSpec(const WebhookSpec& s, const ActionContext& ctx) override {
    const std::string summary = s.summary.value_or(DefaultSummary(ctx));
    nlohmann::json body = s.format == "slack"       ? SlackBody(s, summary, ctx)
                          : s.format == "pagerduty" ? PagerDutyBody(s, summary, ctx)
                                                    : GenericBody(s, summary, ctx);
    HttpCall call;
    call.method = "POST";
    call.url = s.url;
    call.headers = s.headers;
    call.body = DumpJson(body);
    call.content_type = "application/json";
    if (!s.hmac_secret.empty())
      call.headers["X-Icewarden-Signature"] = WebhookSignature(s.hmac_secret, call.body);
    HttpReply reply = SendHttp(call, ctx);
    return HttpResult(s.format + " alert", call, ExpectStatus{}, reply, /*path_is_secret=*/true);
  }
};

}  // namespace

std::string WebhookSignature(const std::string& secret, const std::string& body) {
  unsigned char mac[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  HMAC(EVP_sha256(), secret.data(), static_cast<int>(secret.size()),
       reinterpret_cast<const unsigned char*>(body.data()), body.size(), mac, &len);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out = "sha256=";
  for (unsigned int i = 0; i < len; ++i) {
    out += kHex[mac[i] >> 4];
    out += kHex[mac[i] & 0x0f];
  }
  return out;
}

std::unique_ptr<Action> MakeAlertWebhookAction(const ActionEnv&) {
  return std::make_unique<AlertWebhookAction>();
}

}  // namespace icewarden
