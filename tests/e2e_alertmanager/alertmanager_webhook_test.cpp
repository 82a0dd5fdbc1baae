// The real alerting loop: the lab's real Prometheus Alertmanager, routed to `icewarden
// serve`'s webhook with http_config credentials, is posted an alert (POST /api/v2/alerts);
// the proposal it opens quotes the alert, Alertmanager's re-sends (repeat_interval) change
// nothing, and the alert resolved withdraws the proposal. The same receiver also posts to a
// recorder: what this Alertmanager sends is written to the test's folder and checked against
// the fields icewarden relies on and against the captured fixtures in tests/compat/.
#include <gtest/gtest.h>
#include <httplib.h>

#include <algorithm>
#include <fstream>
#include <regex>
#include <sstream>

#include "orchestrator/api/api.h"
#include "orchestrator/webhooks/webhooks.h"
#include "tests/e2e/lab_stack.h"
#include "tests/fakes/recording_http_server.h"

namespace icewarden::testing {
namespace {

using nlohmann::json;

constexpr const char* kAmWebhookToken = "e2e-alertmanager-webhook-token";

class AlertmanagerWebhookE2eTest : public LabStackTest {
 protected:
  AlertmanagerWebhookE2eTest() {
    options_.extra_yaml =
        "webhooks:\n"
        "  alertmanager:\n"
        "    - {name: lab-alertmanager, token_env: ICEWARDEN_WEBHOOK_TOKEN}\n"
        "  rules:\n"
        "    - name: catalog-down\n"
        "      match: {alertname: IcebergCatalogDown, severity: critical}\n"
        "      effect: propose_failover\n"
        "      route: us-east-1-to-eu-central-1\n";
    options_.extra_env = {{"ICEWARDEN_WEBHOOK_TOKEN", kAmWebhookToken}};
  }

  // A webhook counter of Alertmanager's own /metrics (`family`{integration="webhook"}), -1
  // when it cannot be read: notifications sent (alertmanager_notifications_total) or failed
  // (..._failed_total; a 4xx is not retried, so that page is lost).
  int WebhookCounter(const std::string& family) {
    httplib::Client c(stack_->alertmanager_url());
    auto res = c.Get("/metrics");
    if (!res || res->status != 200) return -1;
    std::smatch m;
    const std::regex line(family + R"(\{integration="webhook"\} (\d+))");
    if (!std::regex_search(res->body, m, line)) return 0;
    return std::stoi(m[1]);
  }
  int WebhookNotifications() { return WebhookCounter("alertmanager_notifications_total"); }
  int FailedWebhookNotifications() {
    return WebhookCounter("alertmanager_notifications_failed_total");
  }

  json Alert(const std::string& ends_at) {
    json a = {{"labels",
               {{"alertname", "IcebergCatalogDown"}, {"region", kLabUs}, {"severity", "critical"}}},
              {"annotations", {{"summary", "catalog us-east-1 does not answer"}}},
              {"generatorURL", "http://127.0.0.1:9090/graph?g0.expr=probe_success%3D%3D0"},
              {"startsAt", "2026-01-05T10:00:00Z"}};
    if (!ends_at.empty()) a["endsAt"] = ends_at;
    return json::array({a});
  }

  static json Fixture(const std::string& name) {
    std::ifstream in(SourceDir() + "/tests/compat/alertmanager/" + name, std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    return json::parse(s.str(), nullptr, false);
  }

  // Every key of `fixture` is in `posted`, and each alert's keys too: the captured
  // fixture is a faithful sample of what this Alertmanager sends.
  static void ExpectKeysOf(const json& fixture, const json& posted) {
    for (const auto& [key, value] : fixture.items())
      EXPECT_TRUE(posted.contains(key)) << "Alertmanager no longer sends " << key;
    for (const auto& [key, value] : fixture["alerts"][0].items())
      EXPECT_TRUE(posted["alerts"][0].contains(key))
          << "Alertmanager no longer sends alerts[]." << key;
  }

  std::string ServeLog() const {
    std::ifstream in(stack_->serve_log());
    return std::string(std::istreambuf_iterator<char>(in), {});
  }

  // Alertmanager's route: every alert to two webhooks with the token, serve's and `recorder`.
  bool RouteToServeAndRecorder(RecordingHttpServer& recorder, bool send_resolved,
                               const std::string& group_wait, const std::string& repeat) {
    auto webhook = [&](const std::string& to) {
      return "      - url: " + to +
             "\n        send_resolved: " + (send_resolved ? "true" : "false") +
             "\n        http_config:\n          authorization: {credentials: " + kAmWebhookToken +
             "}\n";
    };
    return stack_->alertmanager().Reconfigure(
        "route:\n  receiver: icewarden\n  group_by: [alertname, region]\n  group_wait: " +
        group_wait + "\n  group_interval: 1s\n  repeat_interval: " + repeat +
        "\nreceivers:\n  - name: icewarden\n    webhook_configs:\n" +
        webhook(stack_->serve_url() + "/api/v1/webhooks/alertmanager") +
        webhook(recorder.Url("/recorded")));
  }

  // The guards want a healthy target: the probes say every region is.
  bool RegionsHealthy() {
    return Eventually([&] {
      const json regions = stack_->Api("GET", "/api/v1/regions", "", "viewer").body;
      if (!regions.contains("regions") || regions["regions"].empty()) return false;
      for (const auto& r : regions["regions"])
        if (r["health"] != "healthy") return false;
      return true;
    });
  }

  json Failovers() { return stack_->Api("GET", "/api/v1/failovers", "", "viewer").body; }
  // What the webhook wrote to the audit log (a region's health may change under load, and
  // that is audited too, by the prober).
  std::size_t AuditCount() {
    const json events = stack_->Api("GET", "/api/v1/audit?limit=1000", "", "admin").body["events"];
    std::size_t n = 0;
    for (const json& e : events)
      if (e.value("actor", "").rfind("webhook:", 0) == 0 ||
          e.value("action", "").rfind("webhook.", 0) == 0)
        ++n;
    return n;
  }
};

TEST_F(AlertmanagerWebhookE2eTest, AFiringAlertProposesItsResolutionWithdrawsRepeatsChangeNothing) {
  RecordingHttpServer recorder;
  ASSERT_TRUE(RouteToServeAndRecorder(recorder, true, "0s", "2s"));
  // The guards want a healthy target: wait for the probes to say so.
  ASSERT_TRUE(RegionsHealthy());

  ASSERT_EQ(stack_->alertmanager().PostAlerts(Alert("")), 200);
  json proposal;
  ASSERT_TRUE(Eventually([&] {
    const json list = Failovers();
    for (const auto& f : list["failovers"])
      if (f["proposed_by"] == "webhook:alertmanager") proposal = f;
    return !proposal.is_null();
  })) << "no proposal; serve log: "
      << ServeLog();
  EXPECT_EQ(proposal["phase"], "proposed");
  EXPECT_EQ(proposal["from"], kLabUs);
  EXPECT_EQ(proposal["to"], kLabEu);
  const std::string reason = proposal["reason"];
  EXPECT_NE(reason.find("IcebergCatalogDown"), std::string::npos) << reason;
  EXPECT_NE(reason.find("catalog us-east-1 does not answer"), std::string::npos) << reason;
  EXPECT_NE(reason.find("http://127.0.0.1:9090/graph"), std::string::npos) << reason;

  // Alertmanager re-sends the same alert every repeat_interval: nothing changes. Its counter
  // covers both webhooks of the receiver (serve and the recorder), so two re-sends to each.
  const std::size_t audit = AuditCount();
  const int sent = WebhookNotifications();
  const std::size_t recorded = recorder.RequestCount();
  ASSERT_TRUE(Eventually([&] {
    return WebhookNotifications() >= sent + 4 && recorder.RequestCount() >= recorded + 2;
  })) << "Alertmanager did not re-send within 30 s";
  EXPECT_EQ(Failovers()["failovers"].size(), 1u);
  EXPECT_EQ(AuditCount(), audit)
      << "a re-delivery wrote to the audit log: "
      << stack_->Api("GET", "/api/v1/audit?limit=20", "", "admin").body.dump(1);

  // Resolved (endsAt in the past): the proposal nobody approved is withdrawn.
  ASSERT_EQ(stack_->alertmanager().PostAlerts(Alert("2026-01-05T10:05:00Z")), 200);
  const std::string id = proposal["id"];
  json withdrawn;
  ASSERT_TRUE(Eventually([&] {
    withdrawn = stack_->Api("GET", "/api/v1/failovers/" + id, "", "viewer").body;
    return withdrawn["phase"] == "aborted";
  }));
  EXPECT_NE(withdrawn["last_reason"].get<std::string>().find("resolved"), std::string::npos)
      << withdrawn.dump();
  auto cli = stack_->Cli({"failover", "list"}, "viewer");
  EXPECT_EQ(cli.exit_code, 0) << cli.err;
  EXPECT_NE(cli.out.find(id), std::string::npos) << cli.out;

  // What Alertmanager posted, as the recorder received it: kept in the test's folder, and
  // version 4 with every field icewarden reads.
  ASSERT_TRUE(Eventually([&] {
    for (const RecordedRequest& r : recorder.Requests())
      if (json::parse(r.body, nullptr, false).value("status", "") == "resolved") return true;
    return false;
  })) << "the recorder got no resolved notification";
  const std::vector<RecordedRequest> posted = recorder.Requests();
  json firing, resolved;
  for (std::size_t i = 0; i < posted.size(); ++i) {
    const RecordedRequest& r = posted[i];
    std::ofstream(stack_->dir() + "/alertmanager-posted-" + std::to_string(i) + ".json",
                  std::ios::binary)
        << r.body;
    SCOPED_TRACE("notification " + std::to_string(i) + ": " + r.body);
    EXPECT_EQ(r.method, "POST");
    EXPECT_EQ(r.Header("Authorization"), std::string("Bearer ") + kAmWebhookToken);
    EXPECT_EQ(r.Header("User-Agent").rfind("Alertmanager/", 0), 0u) << r.Header("User-Agent");
    auto parsed = ParseAlertmanagerPayload(r.body);
    ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
    EXPECT_EQ(parsed->version, "4");
    EXPECT_EQ(parsed->receiver, "icewarden");
    EXPECT_EQ(parsed->group_key, "{}:{alertname=\"IcebergCatalogDown\", region=\"us-east-1\"}");
    EXPECT_EQ(parsed->truncated_alerts, 0);
    ASSERT_EQ(parsed->alerts.size(), 1u);
    const AlertmanagerAlert& a = parsed->alerts[0];
    EXPECT_EQ(a.labels.at("alertname"), "IcebergCatalogDown");
    EXPECT_EQ(a.labels.at("region"), kLabUs);
    EXPECT_EQ(a.labels.at("severity"), "critical");
    EXPECT_EQ(a.annotations.at("summary"), "catalog us-east-1 does not answer");
    EXPECT_EQ(a.starts_at, "2026-01-05T10:00:00Z");
    EXPECT_EQ(a.generator_url, "http://127.0.0.1:9090/graph?g0.expr=probe_success%3D%3D0");
    EXPECT_FALSE(a.fingerprint.empty());
    json doc = json::parse(r.body);
    EXPECT_TRUE(doc["truncatedAlerts"].is_number_integer()) << "truncatedAlerts is sent";
    (a.status == "firing" ? firing : resolved) = doc;
    if (a.status == "resolved") {
      EXPECT_EQ(a.ends_at, "2026-01-05T10:05:00Z");
    }
  }
  ASSERT_FALSE(firing.is_null());
  ASSERT_FALSE(resolved.is_null());
  // The fixtures the unit tests and the benchmark replay were captured from this
  // Alertmanager: the same fields, and the same alert (its fingerprint hashes the labels).
  const json fixture_firing = Fixture("am-0.25-firing.json");
  const json fixture_resolved = Fixture("am-0.25-resolved.json");
  ExpectKeysOf(fixture_firing, firing);
  ExpectKeysOf(fixture_resolved, resolved);
  EXPECT_EQ(firing["alerts"][0]["fingerprint"], fixture_firing["alerts"][0]["fingerprint"]);
  EXPECT_EQ(firing["groupKey"], fixture_firing["groupKey"]);
}

TEST_F(AlertmanagerWebhookE2eTest, AGroupOfThreeThousandAlertsIsDeliveredNotRefusedAsTooLarge) {
  // Alertmanager posts a group whole and drops a notification its receiver answers with a
  // 4xx. 3,000 alerts of one group make a body over the API's 1 MiB bound.
  RecordingHttpServer recorder;
  ASSERT_TRUE(RouteToServeAndRecorder(recorder, false, "1s", "1h"));
  ASSERT_TRUE(RegionsHealthy());
  const int failed_before = FailedWebhookNotifications();
  ASSERT_GE(failed_before, 0);

  json alerts = json::array();
  for (int i = 0; i < 3000; ++i) {
    json a = Alert("")[0];
    a["labels"]["table"] = "analytics.events_" + std::to_string(i);
    a["annotations"]["description"] =
        "the catalog of us-east-1 did not answer for table analytics.events_" + std::to_string(i);
    alerts.push_back(a);
  }
  ASSERT_EQ(stack_->alertmanager().PostAlerts(alerts), 200);

  ASSERT_TRUE(Eventually([&] {
    for (const RecordedRequest& r : recorder.Requests())
      if (json::parse(r.body, nullptr, false)["alerts"].size() == 3000) return true;
    return false;
  })) << "Alertmanager did not send the group of 3,000 to the recorder";
  std::size_t body_bytes = 0;
  for (const RecordedRequest& r : recorder.Requests())
    body_bytes = std::max(body_bytes, r.body.size());
  EXPECT_GT(body_bytes, kApiMaxBodyBytes) << "the group must not fit the API's own bound";

  json proposal;
  ASSERT_TRUE(Eventually([&] {
    const json list = Failovers();
    for (const auto& f : list["failovers"])
      if (f["proposed_by"] == "webhook:alertmanager") proposal = f;
    return !proposal.is_null();
  })) << "no proposal from the group; serve log: "
      << ServeLog();
  EXPECT_EQ(proposal["from"], kLabUs);
  // One proposal for the group's 3,000 alerts of one route, and no delivery failed.
  EXPECT_EQ(Failovers()["failovers"].size(), 1u);
  EXPECT_EQ(FailedWebhookNotifications(), failed_before);
}

}  // namespace
}  // namespace icewarden::testing
