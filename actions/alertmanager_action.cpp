// alert.alertmanager: raises an alert in Prometheus Alertmanager, so a failover shows up
// where the rest of the platform's alerts are routed, silenced and inhibited.
//
// Params: url (the Alertmanager base, e.g. http://127.0.0.1:9093), labels (mapping;
// alertname defaults to IcewardenFailover; failover_id is always added), annotations
// (mapping), ends_in (duration: the alert resolves by itself that long after it is sent;
// without it Alertmanager resolves it after its resolve_timeout unless re-sent),
// generator_url, headers (e.g. Authorization for an Alertmanager behind a proxy).
//
// Sends POST {url}/api/v2/alerts with a JSON list of one postable alert. Idempotent:
// Alertmanager identifies an alert by its label set, so sending it again updates the same
// alert rather than adding one.
#include <cctype>
#include <nlohmann/json.hpp>

#include "actions/alert_actions.h"
#include "actions/http_call.h"
#include "actions/param_reader.h"
#include "actions/parsed_action.h"
#include "actions/preflight.h"

namespace icewarden {
namespace {

const std::vector<std::string> kAlertmanagerParams = {"url",     "labels",        "annotations",
                                                      "ends_in", "generator_url", "headers"};
constexpr const char* kDefaultAlertName = "IcewardenFailover";

struct AlertmanagerSpec {
  std::string url;
  std::map<std::string, std::string> labels;
  std::map<std::string, std::string> annotations;
  std::optional<std::chrono::milliseconds> ends_in;
  std::string generator_url;
  std::map<std::string, std::string> headers;
};

bool ValidLabelName(const std::string& name) {
  if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0]))) return false;
  for (char c : name)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) return false;
  return true;
}

std::optional<AlertmanagerSpec> ParseAlertmanager(const nlohmann::json& params,
                                                  std::vector<ParamError>& errors) {
  ParamReader r(&errors);
  if (!r.RequireObject(params, "")) return std::nullopt;
  r.RejectUnknown(params, "", kAlertmanagerParams);
  AlertmanagerSpec s;
  if (auto url = ReadHttpUrl(params, "", "url", r)) s.url = *url;
  if (auto labels = r.StringMap(params, "", "labels", false)) s.labels = *labels;
  for (const auto& [name, value] : s.labels) {
    if (!ValidLabelName(name))
      r.Error(ParamPath("labels", name),
              "not a valid Prometheus label name (letters, digits and _, not starting with a "
              "digit)");
    if (value.empty()) r.Error(ParamPath("labels", name), "must not be empty");
  }
  if (auto a = r.StringMap(params, "", "annotations", false)) s.annotations = *a;
  s.ends_in = r.Duration(params, "", "ends_in", false);
  if (s.ends_in && s.ends_in->count() == 0) r.Error("ends_in", "must be longer than 0s");
  if (params.contains("generator_url")) {
    if (auto g = ReadHttpUrl(params, "", "generator_url", r)) s.generator_url = *g;
  }
  if (auto h = r.StringMap(params, "", "headers", false)) s.headers = *h;
  if (!r.ok()) return std::nullopt;
  if (!s.labels.count("alertname")) s.labels["alertname"] = kDefaultAlertName;
  return s;
}

std::string AlertsUrl(const std::string& base) {
  std::string url = base.substr(0, base.find('?'));
  while (!url.empty() && url.back() == '/') url.pop_back();
  return url + "/api/v2/alerts";
}

class AlertmanagerAction final : public ParsedAction<AlertmanagerSpec>, public ActionPreflight {
 public:
  explicit AlertmanagerAction(std::shared_ptr<Clock> clock) : clock_(std::move(clock)) {}

  // Readiness: Alertmanager's v2 API answers (GET /api/v2/status reads, never alerts).
  std::vector<std::string> Preflight(const nlohmann::json& params,
                                     const ActionContext& ctx) const override {
    std::vector<ParamError> errors;
    auto s = Read(params, errors);
    if (!s) return {"alert.alertmanager: " + FirstParamError(errors)};
    std::string url = s->url.substr(0, s->url.find('?'));
    while (!url.empty() && url.back() == '/') url.pop_back();
    HttpCall call;
    call.method = "GET";
    call.url = url + "/api/v2/status";
    call.headers = s->headers;
    ActionContext bounded = ctx;
    bounded.idempotency_key.clear();
    HttpReply reply = SendHttp(call, bounded);
    if (reply.delivery != HttpReply::Delivery::kAnswered)
      return {"Alertmanager at " + url + " does not answer: " + reply.error};
    if (reply.status < 200 || reply.status > 299)
      return {"Alertmanager at " + url + " answers GET /api/v2/status with " +
              std::to_string(reply.status)};
    return {};
  }

  std::string_view kind() const override { return "alert.alertmanager"; }
  bool idempotent() const override { return true; }

 protected:
  std::optional<AlertmanagerSpec> Read(const nlohmann::json& params,
                                       std::vector<ParamError>& errors) const override {
    return ParseAlertmanager(params, errors);
  }

  std::string PlanSpec(const AlertmanagerSpec& s) const override {
    std::string labels;
    for (const auto& [name, value] : s.labels)
      labels += (labels.empty() ? "" : ", ") + name + "=\"" + value + "\"";
    std::string line =
        "raise Alertmanager alert {" + labels + ", failover_id} at " + AlertsUrl(s.url);
    line += s.ends_in ? ", resolving after " + FormatParamDuration(*s.ends_in)
                      : std::string(", until Alertmanager's resolve_timeout");
    return line;
  }

  ActionResult RunSpec(const AlertmanagerSpec& s, const ActionContext& ctx) override {
    nlohmann::json labels(s.labels);
    labels["failover_id"] = ctx.failover_id;
    const UnixMillis now = clock_->Now();
    nlohmann::json alert = {{"labels", labels},
                            {"annotations", nlohmann::json(s.annotations)},
                            {"startsAt", FormatUnixMillis(now)}};
    if (s.ends_in) alert["endsAt"] = FormatUnixMillis(now + s.ends_in->count());
    if (!s.generator_url.empty()) alert["generatorURL"] = s.generator_url;

    HttpCall call;
    call.method = "POST";
    call.url = AlertsUrl(s.url);
    call.headers = s.headers;
    call.body = DumpJson(nlohmann::json::array({alert}));
    call.content_type = "application/json";
    HttpReply reply = SendHttp(call, ctx);
    return HttpResult("Alertmanager alert " + s.labels.at("alertname"), call, ExpectStatus{},
                      reply);
  }

 private:
  std::shared_ptr<Clock> clock_;
};

}  // namespace

std::unique_ptr<Action> MakeAlertmanagerAction(const ActionEnv& env) {
  return std::make_unique<AlertmanagerAction>(env.clock ? env.clock : SystemClock());
}

}  // namespace icewarden
