// Drills against the real lab stack (BIND 9, Alertmanager, the lab's catalogs, icewarden
// serve), through the real CLI: a shadow run of the lab's failover route moves only the canary
// table and the drill's DNS name, leaves production ownership and DNS exactly as they were, and
// cleans up; a plan run shows the guards.
#include <gtest/gtest.h>
#include <httplib.h>

#include "tests/e2e/failover_e2e_fixture.h"

namespace icewarden::testing {
namespace {

class DrillE2eTest : public FailoverE2eTest {
 protected:
  void SetUp() override {
    options_.extra_yaml =
        "drills:\n"
        "  - name: shadow\n"
        "    route: us-east-1-to-eu-central-1\n"
        "    mode: shadow\n"
        "    rto_target: 2m\n"
        "    targets: {dns_name: drill-writer.lake.lab., namespace: drill}\n";
    FailoverE2eTest::SetUp();
  }

  // drill.canary in us-east-1's catalog; the lab replicates it to eu-central-1.
  void CreateCanary() {
    httplib::Client catalog(stack_->region_url(kLabUs));
    auto ns = catalog.Post("/v1/lab/namespaces", R"({"namespace":["drill"]})", "application/json");
    ASSERT_TRUE(ns && ns->status == 200) << (ns ? ns->body : "no answer");
    auto t = catalog.Post("/v1/lab/namespaces/drill/tables",
                          R"({"name":"canary","schema":{"type":"struct","fields":)"
                          R"([{"id":1,"name":"id","type":"long","required":true}]}})",
                          "application/json");
    ASSERT_TRUE(t && t->status == 200) << (t ? t->body : "no answer");
    ASSERT_TRUE(Eventually([&] { return Ownership().count("drill.canary") == 1; }, 30s))
        << "icewarden records the canary's owner";
  }
};

TEST_F(DrillE2eTest, ShadowRunLeavesProductionOwnershipAndDnsUntouched) {
  WaitUntilSettled();
  CreateCanary();
  if (HasFatalFailure()) return;
  auto production = Ownership();
  production.erase("drill.canary");
  const auto writer = stack_->Dig("writer.lake.lab", "CNAME");
  ASSERT_EQ(writer, std::vector<std::string>{"catalog.us-east-1.lake.lab."});
  const long long canary_epoch = Ownership()["drill.canary"].second;

  CommandResult run = stack_->Cli({"drill", "run", "shadow", "--output", "json"}, "operator");
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  json report = json::parse(run.out);
  EXPECT_EQ(report["verdict"]["result"], "passed") << report.dump(2);
  for (const json& s : report["steps"]) {
    const std::string id = s.value("id", "");
    if (id == "point-writers-at-new-owner") {
      EXPECT_EQ(s["status"], "succeeded") << s.dump();
      EXPECT_EQ(s["params"]["records"][0]["name"], "drill-writer.lake.lab.");
      EXPECT_EQ(s["cleanup"], "done");
    }
    if (id == "transfer-ownership") {
      EXPECT_EQ(s["cleanup"], "done") << s.dump();
    }
  }

  auto after = Ownership();
  EXPECT_EQ(after["drill.canary"].first, kLabUs) << "the canary is moved back";
  EXPECT_EQ(after["drill.canary"].second, canary_epoch + 2) << "there and back: two epochs";
  after.erase("drill.canary");
  EXPECT_EQ(after, production) << "no production table moved or changed epoch";
  EXPECT_EQ(stack_->Dig("writer.lake.lab", "CNAME"), writer) << "production DNS untouched";
  EXPECT_TRUE(stack_->Dig("drill-writer.lake.lab", "CNAME").empty())
      << "the drill's DNS name is put back as it was (absent)";
  EXPECT_EQ(stack_->Api("GET", "/api/v1/failovers", "", "viewer").body["failovers"].size(), 0u)
      << "a shadow drill is not a failover";

  const std::string id = report["run"]["id"];
  CommandResult note = stack_->Cli({"drill", "note", id, "clean run"}, "operator");
  EXPECT_EQ(note.exit_code, 0) << note.err;
  CommandResult text = stack_->Cli({"drill", "report", id}, "viewer");
  EXPECT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("verdict        passed"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("clean run"), std::string::npos) << text.out;
  CommandResult list = stack_->Cli({"drill", "list"}, "viewer");
  EXPECT_NE(list.out.find(id), std::string::npos) << list.out;
  HttpReply metrics = stack_->Api("GET", "/metrics", "", "");
  EXPECT_NE(metrics.text.find("icewarden_drill_last_success_timestamp_seconds{drill=\"shadow\"}"),
            std::string::npos);
}

TEST_F(DrillE2eTest, PlanRunWithTheTargetDownFailsOnItsGuard) {
  WaitUntilSettled();
  ASSERT_EQ(stack_->LabAdmin("POST", "/lab/regions/eu-central-1/stop").status, 200);
  ASSERT_TRUE(Eventually([&] { return Health(kLabEu) == "unreachable"; }, 30s));
  CommandResult run =
      stack_->Cli({"drill", "run", "shadow", "--mode", "plan", "--output", "json"}, "operator");
  EXPECT_EQ(run.exit_code, 1) << run.out << run.err;
  json report = json::parse(run.out);
  EXPECT_EQ(report["verdict"]["failing_step"], "guard:target_healthy") << report["verdict"];
}

}  // namespace
}  // namespace icewarden::testing
