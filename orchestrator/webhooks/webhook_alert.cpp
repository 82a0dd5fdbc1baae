#include "orchestrator/webhooks/webhook_alert.h"

#include <spdlog/spdlog.h>

#include <nlohmann/json.hpp>

#include "state/json_text.h"

namespace icewarden {

using nlohmann::json;

WebhookAlert WebhookAlert::From(const AlertmanagerPayload& payload, const AlertmanagerAlert& am) {
  WebhookAlert a;
  a.key = AlertmanagerDeliveryKey(payload.group_key, am);
  a.source = "alertmanager";
  a.actor = "webhook:alertmanager";
  a.id = am.fingerprint;
  a.status = am.status;
  a.starts_at = am.starts_at;
  a.ends_at = am.ends_at;
  a.labels = am.labels;
  a.annotations = am.annotations;
  a.url = am.generator_url;
  return a;
}

std::string WebhookAlert::Describe() const {
  std::string name;
  std::string selector;
  for (const auto& [k, v] : labels) {
    if (k == "alertname") {
      name = v;
    } else if (k == "region" || k == "severity") {
      selector += (selector.empty() ? "" : ",") + k + "=" + v;
    }
  }
  return "alert " + (name.empty() ? id : name) + (selector.empty() ? "" : "{" + selector + "}") +
         " " + status + " (" + (via_alertmanager ? "fingerprint " : "id ") + id + ")";
}

void WebhookTally::Add(const WebhookAlert& a, const std::string& result,
                       const std::string& decision, const std::string& failover_id) {
  // Every decision is logged: a refused proposal or an ignored alert writes nothing else.
  // Re-deliveries only at debug: Alertmanager re-sends every repeat_interval.
  if (result == "failed") {
    spdlog::warn("webhook {} via {}: {}: {}", a.source, a.via, a.Describe(), decision);
  } else if (result == "duplicate") {
    if (spdlog::should_log(spdlog::level::debug))  // Describe() is not free
      spdlog::debug("webhook {} via {}: {}: {}", a.source, a.via, a.Describe(), decision);
  } else {
    spdlog::info("webhook {} via {}: {}", a.source, a.via, decision);
  }
  alerts.push_back(Row{a.id, a.status, result, decision, failover_id});
}

void WebhookTally::Failed(const WebhookAlert& a, const Status& why) {
  ++failed;
  if (first_failure.empty()) first_failure = a.Describe() + ": " + why.message();
  Add(a, "failed", "nothing recorded: " + why.message(), "");
}

WebhookReply WebhookTally::Reply(std::int64_t truncated_alerts) const {
  if (failed > 0 && recorded == 0)
    return ErrorReply(503, "unavailable",
                      "nothing was recorded; retry the delivery: " + first_failure);
  // Written directly rather than through a json tree: every re-delivery gets this reply, and
  // building the tree cost as much as the rest of the request (tests/bench/webhook_bench).
  auto text = [](const std::string& s) { return DumpJson(json(s)); };
  std::string out = "{\"received\":" + std::to_string(alerts.size());
  out += ",\"recorded\":" + std::to_string(recorded);
  out += ",\"duplicates\":" + std::to_string(duplicates);
  out += ",\"failed\":" + std::to_string(failed);
  out += ",\"truncated_alerts\":" + std::to_string(truncated_alerts);
  out += ",\"alerts\":[";
  for (size_t i = 0; i < alerts.size(); ++i) {
    const Row& r = alerts[i];
    if (i > 0) out += ',';
    out += "{\"id\":" + text(r.id);
    out += ",\"status\":" + text(r.status);
    out += ",\"result\":" + text(r.result);
    out += ",\"decision\":" + text(r.decision);
    if (!r.failover_id.empty()) out += ",\"failover_id\":" + text(r.failover_id);
    out += '}';
  }
  out += "]}";
  return WebhookReply{200, std::move(out)};
}

WebhookReply ErrorReply(int status, const std::string& code, const std::string& message) {
  return WebhookReply{status, DumpJson(json{{"error", {{"code", code}, {"message", message}}}})};
}

}  // namespace icewarden
