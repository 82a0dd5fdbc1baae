// The real alerting loop: the lab's real Prometheus Alertmanager, routed to `icewarden
// serve`'s webhook with http_config credentials, is posted an alert (POST /api/v2/alerts);
// the proposal it opens quotes the alert, Alertmanager's re-sends (repeat_interval) change
// nothing, and the alert resolved withdraws the proposal.
#include <gtest/gtest.h>
#include <httplib.h>

#include <regex>

#include "tests/e2e/lab_stack.h"

namespace icewarden::testing {
namespace {

using nlohmann::json;

constexpr const char* kWebhookToken = "e2e-alertmanager-webhook-token";

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
    options_.extra_env = {{"ICEWARDEN_WEBHOOK_TOKEN", kWebhookToken}};
  }

  // Alertmanager's webhook notifications sent so far (its own /metrics).
  int WebhookNotifications() {
    httplib::Client c(stack_->alertmanager_url());
    auto res = c.Get("/metrics");
    if (!res || res->status != 200) return -1;
    std::smatch m;
    static const std::regex kLine(
        R"(alertmanager_notifications_total\{integration="webhook"\} (\d+))");
    if (!std::regex_search(res->body, m, kLine)) return 0;
    return std::stoi(m[1]);
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

  json Failovers() { return stack_->Api("GET", "/api/v1/failovers", "", "viewer").body; }
  std::size_t AuditCount() {
    return stack_->Api("GET", "/api/v1/audit?limit=1000", "", "admin").body["events"].size();
  }
};

TEST_F(AlertmanagerWebhookE2eTest, AFiringAlertProposesItsResolutionWithdrawsRepeatsChangeNothing) {
  const std::string url = stack_->serve_url() + "/api/v1/webhooks/alertmanager";
  ASSERT_TRUE(
      stack_->alertmanager().Reconfigure("route:\n"
                                         "  receiver: icewarden\n"
                                         "  group_by: [alertname, region]\n"
                                         "  group_wait: 0s\n"
                                         "  group_interval: 1s\n"
                                         "  repeat_interval: 2s\n"
                                         "receivers:\n"
                                         "  - name: icewarden\n"
                                         "    webhook_configs:\n"
                                         "      - url: " +
                                         url +
                                         "\n"
                                         "        send_resolved: true\n"
                                         "        http_config:\n"
                                         "          authorization: {credentials: " +
                                         kWebhookToken + "}\n"));
  // The guards want a healthy target: wait for the probes to say so.
  ASSERT_TRUE(Eventually([&] {
    for (const auto& r : stack_->Api("GET", "/api/v1/regions", "", "viewer").body["regions"])
      if (r["health"] != "healthy") return false;
    return true;
  }));

  ASSERT_EQ(stack_->alertmanager().PostAlerts(Alert("")), 200);
  json proposal;
  ASSERT_TRUE(Eventually([&] {
    for (const auto& f : Failovers()["failovers"])
      if (f["proposed_by"] == "webhook:alertmanager") proposal = f;
    return !proposal.is_null();
  })) << "no proposal; serve log: "
      << stack_->serve_log();
  EXPECT_EQ(proposal["phase"], "proposed");
  EXPECT_EQ(proposal["from"], kLabUs);
  EXPECT_EQ(proposal["to"], kLabEu);
  const std::string reason = proposal["reason"];
  EXPECT_NE(reason.find("IcebergCatalogDown"), std::string::npos) << reason;
  EXPECT_NE(reason.find("catalog us-east-1 does not answer"), std::string::npos) << reason;
  EXPECT_NE(reason.find("http://127.0.0.1:9090/graph"), std::string::npos) << reason;

  // Alertmanager re-sends the same alert every repeat_interval: nothing changes.
  const std::size_t audit = AuditCount();
  const int sent = WebhookNotifications();
  ASSERT_TRUE(Eventually([&] { return WebhookNotifications() >= sent + 2; }))
      << "Alertmanager did not re-send within 30 s";
  EXPECT_EQ(Failovers()["failovers"].size(), 1u);
  EXPECT_EQ(AuditCount(), audit) << "a re-delivery wrote to the audit log";

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
}

}  // namespace
}  // namespace icewarden::testing
