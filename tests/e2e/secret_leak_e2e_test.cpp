// No secret leaves the process in anything icewarden writes or answers (issue 30, item 4): the
// lab stack with known secrets (the four API tokens, the TSIG key the DNS steps sign with, the
// Alertmanager webhook's bearer token, a generic webhook's HMAC secret), through a shadow drill,
// an Alertmanager webhook that proposes a failover, and that failover run to `completed`; then
// every log line, plan, report, journal, audit event, metric, drill report and the state
// database's own bytes are searched for each secret.
#include <gtest/gtest.h>
#include <httplib.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "tests/e2e/failover_e2e_fixture.h"

namespace icewarden::testing {
namespace {

constexpr const char* kLeakWebhookToken = "e2e-leak-webhook-token-5c1d";
constexpr const char* kLeakGenericSecret = "e2e-leak-generic-hmac-secret-77ab";

class SecretLeakE2eTest : public FailoverE2eTest {
 protected:
  void SetUp() override {
    options_.extra_yaml =
        "webhooks:\n"
        "  alertmanager:\n"
        "    - {name: lab-alertmanager, token_env: LEAK_WEBHOOK_TOKEN}\n"
        "  generic:\n"
        "    - {name: ci, secret_env: LEAK_GENERIC_SECRET}\n"
        "  rules:\n"
        "    - name: catalog-down\n"
        "      match: {alertname: IcebergCatalogDown, severity: critical, region: us-east-1}\n"
        "      effect: propose_failover\n"
        "      route: us-east-1-to-eu-central-1\n"
        "drills:\n"
        "  - name: shadow\n"
        "    route: us-east-1-to-eu-central-1\n"
        "    mode: shadow\n"
        "    targets: {dns_name: drill-writer.lake.lab., namespace: drill}\n";
    options_.extra_env = {{"LEAK_WEBHOOK_TOKEN", kLeakWebhookToken},
                          {"LEAK_GENERIC_SECRET", kLeakGenericSecret}};
    FailoverE2eTest::SetUp();
  }

  std::vector<std::pair<std::string, std::string>> Secrets() const {
    std::vector<std::pair<std::string, std::string>> out{
        {"DNS TSIG secret", LabStack::tsig_key().secret},
        {"Alertmanager webhook token", kLeakWebhookToken},
        {"generic webhook secret", kLeakGenericSecret}};
    for (const char* role : {"viewer", "operator", "approver", "admin"})
      out.push_back({std::string(role) + " API token", stack_->token(role)});
    return out;
  }

  static std::string ReadWhole(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }

  // name -> text, for everything the run wrote or the API and CLI answer.
  std::map<std::string, std::string> Everything(const std::string& failover_id,
                                                const std::string& drill_id) {
    std::map<std::string, std::string> out;
    out["serve.log"] = ReadWhole(stack_->serve_log());
    for (const auto& entry : std::filesystem::directory_iterator(stack_->dir()))
      if (entry.path().filename().string().rfind("state.db", 0) == 0)
        out[entry.path().filename().string()] = ReadWhole(entry.path().string());
    out["failover"] = stack_->Api("GET", "/api/v1/failovers/" + failover_id).text;
    out["failover report"] =
        stack_->Api("GET", "/api/v1/failovers/" + failover_id + "/report").text;
    out["failover report (CLI)"] = stack_->Cli({"failover", "report", failover_id}).out;
    out["failover show (CLI)"] = stack_->Cli({"failover", "show", failover_id}).out;
    out["failovers"] = stack_->Api("GET", "/api/v1/failovers").text;
    out["drill report"] = stack_->Cli({"drill", "report", drill_id, "-o", "json"}).out;
    out["metrics"] = stack_->Api("GET", "/metrics", "", "").text;
    out["status"] = stack_->Cli({"status", "-o", "json"}).out;
    out["readiness"] = stack_->Api("GET", "/api/v1/readiness").text;
    std::string audit;
    for (long long after = 0;;) {
      HttpReply r =
          stack_->Api("GET", "/api/v1/audit?limit=1000&after_seq=" + std::to_string(after));
      if (r.status != 200 || r.body["events"].empty()) break;
      audit += r.text;
      after = r.body["events"].back()["seq"].get<long long>();
    }
    out["audit"] = audit;
    return out;
  }
};

TEST_F(SecretLeakE2eTest, NoSecretIsInAnyLogPlanReportAuditEventOrMetric) {
  WaitUntilSettled();
  // The drill's canary, in us-east-1's catalog (replicated to eu-central-1).
  httplib::Client catalog(stack_->region_url(kLabUs));
  auto ns = catalog.Post("/v1/lab/namespaces", R"({"namespace":["drill"]})", "application/json");
  ASSERT_TRUE(ns && ns->status == 200);
  auto t = catalog.Post("/v1/lab/namespaces/drill/tables",
                        R"({"name":"canary","schema":{"type":"struct","fields":)"
                        R"([{"id":1,"name":"id","type":"long","required":true}]}})",
                        "application/json");
  ASSERT_TRUE(t && t->status == 200);
  ASSERT_TRUE(Eventually([&] { return Ownership().count("drill.canary") == 1; }, 30s));
  CommandResult drill = stack_->Cli({"drill", "run", "shadow", "-o", "json"}, "operator");
  ASSERT_EQ(drill.exit_code, 0) << drill.out << drill.err;
  const std::string drill_id = json::parse(drill.out)["run"]["id"];
  // The drill moved the canary there and back: the rpo guard wants its lag measured again.
  WaitUntilSettled();

  // us-east-1 goes down; its alert, posted as Alertmanager posts it, proposes the failover.
  ASSERT_EQ(stack_->LabAdmin("POST", "/lab/regions/us-east-1/stop").status, 200);
  ASSERT_TRUE(Eventually([&] { return Health(kLabUs) == "unreachable"; }, 30s));
  json alert = {
      {"labels",
       {{"alertname", "IcebergCatalogDown"}, {"region", kLabUs}, {"severity", "critical"}}},
      {"annotations", {{"summary", "catalog us-east-1 does not answer"}}},
      {"startsAt", "2026-12-07T10:00:00Z"},
      {"endsAt", "0001-01-01T00:00:00Z"},
      {"generatorURL", "http://127.0.0.1:9090/graph"},
      {"fingerprint", "5c1d77ab0e2e0001"},
      {"status", "firing"}};
  json body = {{"version", "4"},
               {"groupKey", "{}:{alertname=\"IcebergCatalogDown\"}"},
               {"status", "firing"},
               {"receiver", "icewarden"},
               {"groupLabels", {{"alertname", "IcebergCatalogDown"}}},
               {"commonLabels", alert["labels"]},
               {"commonAnnotations", alert["annotations"]},
               {"externalURL", "http://127.0.0.1:9093"},
               {"alerts", json::array({alert})}};
  httplib::Client serve(stack_->serve_url());
  auto posted = serve.Post("/api/v1/webhooks/alertmanager",
                           {{"Authorization", std::string("Bearer ") + kLeakWebhookToken}},
                           body.dump(), "application/json");
  ASSERT_TRUE(posted && posted->status / 100 == 2) << (posted ? posted->body : "no answer");
  const json answered = json::parse(posted->body, nullptr, false);
  ASSERT_TRUE(answered.is_object()) << posted->body;
  const std::string id = answered["alerts"][0].value("failover_id", "");
  ASSERT_EQ(id.rfind("fo-", 0), 0u) << "the alert proposed a failover: " << posted->body;
  CommandResult approved =
      stack_->Cli({"failover", "approve", id, "--reason", "agreed", "--yes"}, "approver");
  ASSERT_EQ(approved.exit_code, 0) << approved.out << approved.err;
  CommandResult watched = stack_->Cli({"failover", "watch", id, "--timeout", "90"}, "viewer", 100s);
  ASSERT_EQ(watched.exit_code, 0) << watched.out << watched.err;
  ASSERT_EQ(Phase(id), "completed");

  const auto texts = Everything(id, drill_id);
  // The search looks where the run left its traces: each place holds what it should.
  EXPECT_NE(texts.at("serve.log").find(id), std::string::npos);
  EXPECT_NE(texts.at("audit").find("webhook:alertmanager"), std::string::npos);
  EXPECT_NE(texts.at("failover report").find("dns"), std::string::npos);
  EXPECT_NE(texts.at("drill report").find(drill_id), std::string::npos);
  EXPECT_NE(texts.at("metrics").find("icewarden_failovers"), std::string::npos);
  ASSERT_TRUE(texts.count("state.db"));
  const std::string db =
      texts.at("state.db") + (texts.count("state.db-wal") ? texts.at("state.db-wal") : "");
  EXPECT_NE(db.find(id), std::string::npos) << "the database (or its WAL) holds the failover";
  for (const auto& [what, secret] : Secrets()) {
    ASSERT_GE(secret.size(), 12u) << what;
    for (const auto& [where, text] : texts)
      EXPECT_EQ(text.find(secret), std::string::npos) << "the " << what << " is in " << where;
  }
}

}  // namespace
}  // namespace icewarden::testing
