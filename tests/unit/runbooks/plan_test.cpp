// PlanRunbook and its renderings: run order, resolved bindings, parameter defaults and
// errors, and that no secret ever reaches a plan's text or JSON.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "actions/action.h"
#include "runbooks/plan.h"
#include "runbooks/runbook_parser.h"
#include "tests/fakes/fake_action.h"
#include "tests/fakes/test_paths.h"

namespace icewarden {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr char kRunbook[] = R"(name: plan-me
description: for the plan tests
parameters:
  - {name: zone, default: lake.example.com.}
  - {name: ttl, type: integer, default: 30}
  - {name: region_tag, required: true}
  - {name: settle, type: duration, default: 10s}
guards:
  - kind: target_healthy
  - kind: max_lag
    max_staleness: 5m
fence:
  - id: fence-writers
    action: fence.http
    params:
      url: https://gw.${from}/pause/${failover.id}
      headers: {Authorization: "Bearer ${env.FENCE_TOKEN}"}
    retry: {attempts: 3, initial_backoff: 1s, max_backoff: 4s}
  - id: settle
    action: wait
    params: {duration: "${params.settle}"}
promote:
  - id: transfer
    action: ownership.transfer
    params: {scope: "${scope}", concurrency: 4}
    parallel: cutover
  - id: dns
    action: dns.rfc2136
    params:
      server: 127.0.0.1:53
      zone: ${params.zone}
      tsig_secret: ${file:tsig.key}
      records:
        - {name: "w.${params.zone}", type: CNAME, value: "w.${to}.${params.zone}", ttl: "${params.ttl}"}
    parallel: cutover
    on_failure: compensate
    compensate:
      action: dns.rfc2136
      params:
        server: 127.0.0.1:53
        zone: ${params.zone}
        tsig_secret: ${file:tsig.key}
        records:
          - {name: "w.${params.zone}", type: CNAME, value: "w.${from}.${params.zone}"}
verify:
  - id: healthy
    action: verify.catalog_healthy
    params: {region: "${to}-${params.region_tag}"}
compensate:
  - id: tell
    action: alert.webhook
    params: {url: "https://hooks/x", hmac_secret: "${env.HOOK_SECRET}"}
    on_failure: continue
)";

class PlanTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::MakeTempDir("plan_test");
    std::ofstream(dir_ + "/tsig.key") << "VFNJRy1LRVktU0VDUkVU\n";
    RunbookLoad load = ParseRunbook(kRunbook, dir_ + "/rb.yaml", registry_);
    ASSERT_TRUE(load.ok()) << load.errors[0].ToString();
    runbook_ = *load.runbook;
    bindings_.failover_id = "f-42";
    bindings_.from = "us-east";
    bindings_.to = "us-west";
    bindings_.scope = "sales.*";
    bindings_.base_dir = dir_;
    bindings_.params = {{"region_tag", "blue"}};
    bindings_.env = [](const std::string& name) -> std::optional<std::string> {
      if (name == "FENCE_TOKEN") return "FENCE-TOKEN-SECRET";
      if (name == "HOOK_SECRET") return "HOOK-HMAC-SECRET";
      return std::nullopt;
    };
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string dir_;
  ActionRegistry registry_ = testing::FakeBuiltinRegistry();
  Runbook runbook_;
  TemplateBindings bindings_;
};

TEST_F(PlanTest, StepsComeInRunOrderWithTheirSettings) {
  auto plan = PlanRunbook(runbook_, registry_, bindings_);
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  std::vector<std::string> order;
  for (const auto& e : plan->entries) {
    order.push_back(std::to_string(e.number) + " " + RunbookSectionName(e.section) + " " +
                    e.step_id + " " + e.action);
  }
  EXPECT_THAT(
      order,
      ElementsAre("1 fence fence-writers fence.http", "2 fence settle wait",
                  "3 promote transfer ownership.transfer", "4 promote dns dns.rfc2136",
                  "5 verify healthy verify.catalog_healthy", "6 compensate tell alert.webhook"));
  const auto& fence = plan->entries[0];
  EXPECT_EQ(fence.retry.attempts, 3);
  EXPECT_EQ(fence.timeout, std::chrono::seconds(60));
  const auto& dns = plan->entries[3];
  EXPECT_EQ(dns.parallel_group, "cutover");
  EXPECT_EQ(dns.on_failure, OnFailure::kCompensate);
  ASSERT_TRUE(dns.compensation.has_value());
  EXPECT_EQ(dns.compensation->params["records"][0]["value"], "w.us-east.lake.example.com.");
  EXPECT_EQ(plan->entries[5].on_failure, OnFailure::kContinue);
  EXPECT_EQ(plan->guards.size(), 2u);
}

TEST_F(PlanTest, BindingsAndDefaultsAreResolved) {
  auto plan = PlanRunbook(runbook_, registry_, bindings_);
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  EXPECT_EQ(plan->entries[0].params["url"], "https://gw.us-east/pause/f-42");
  EXPECT_EQ(plan->entries[1].params["duration"], "10s");
  EXPECT_EQ(plan->entries[2].params["scope"], "sales.*");
  const auto& record = plan->entries[3].params["records"][0];
  EXPECT_EQ(record["value"], "w.us-west.lake.example.com.");
  EXPECT_EQ(record["ttl"], 30) << "a whole template of an integer parameter stays an integer";
  EXPECT_EQ(plan->entries[4].params["region"], "us-west-blue");
  EXPECT_EQ(plan->parameters.at("ttl"), 30);
  EXPECT_EQ(plan->parameters.at("zone"), "lake.example.com.");
  // The action's Plan() line is made from the resolved, masked params.
  EXPECT_THAT(plan->entries[2].plan_line, HasSubstr("\"scope\":\"sales.*\""));
}

TEST_F(PlanTest, GivenParametersOverrideDefaultsAndAreTyped) {
  bindings_.params = {{"region_tag", "green"}, {"ttl", "300"}, {"zone", "other.example."}};
  auto plan = PlanRunbook(runbook_, registry_, bindings_);
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  EXPECT_EQ(plan->entries[3].params["records"][0]["ttl"], 300);
  EXPECT_EQ(plan->entries[3].params["zone"], "other.example.");
}

TEST_F(PlanTest, DefaultsThatValidateAcceptsArePlannedWithTheSameReading) {
  // validate reads defaults as YAML scalars ("+5" is an integer, "yes" a boolean); plan used to
  // parse them again by stricter rules and refuse what validate had accepted.
  RunbookLoad load = ParseRunbook(R"(name: defaults
parameters:
  - {name: ttl, type: integer, default: +5}
  - {name: dry, type: boolean, default: yes}
promote:
  - id: settle
    action: wait
    params: {duration: 1s}
)",
                                  dir_ + "/defaults.yaml", registry_);
  ASSERT_TRUE(load.ok()) << load.errors[0].ToString();
  bindings_.params = nlohmann::json::object();
  auto plan = PlanRunbook(*load.runbook, registry_, bindings_);
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  EXPECT_EQ(plan->parameters.at("ttl"), 5);
  EXPECT_EQ(plan->parameters.at("dry"), true);
}

TEST_F(PlanTest, ParameterProblemsAreAllReported) {
  bindings_.params = {{"ttl", "soon"}, {"zonee", "x"}, {"settle", "forever"}};
  auto plan = PlanRunbook(runbook_, registry_, bindings_);
  ASSERT_FALSE(plan.ok());
  EXPECT_EQ(plan.status().code(), StatusCode::kInvalidArgument);
  const std::string& m = plan.status().message();
  EXPECT_THAT(m, HasSubstr("unknown parameter 'zonee'; the runbook declares 'zone', 'ttl', "
                           "'region_tag', 'settle'; did you mean 'zone'?"));
  EXPECT_THAT(m, HasSubstr("parameter 'ttl' is an integer, got \"soon\""));
  EXPECT_THAT(m, HasSubstr("missing required parameter 'region_tag'"));
  EXPECT_THAT(m, HasSubstr("parameter 'settle' is a duration"));
}

TEST_F(PlanTest, AnInlineCompensationIsCheckedByItsActionOnceResolved) {
  // The step's params are checked by the real action after templates are resolved; its
  // compensation's must be too, not first when the failover is rolled back. Only the
  // compensation names ${from}, and "us east" makes no DNS name.
  ActionRegistry real;
  ASSERT_TRUE(registerBuiltinActions(real, ActionEnv{}).ok());
  RunbookLoad load = ParseRunbook(R"(name: undo-checked
promote:
  - id: dns
    action: dns.rfc2136
    params:
      server: 127.0.0.1:53
      zone: z.test.
      tsig_key_name: k
      tsig_secret: c2VjcmV0LWtleQ==
      records: [{name: w, type: CNAME, value: "${to}.z.test."}]
    compensate:
      action: dns.rfc2136
      params:
        server: 127.0.0.1:53
        zone: z.test.
        tsig_key_name: k
        tsig_secret: c2VjcmV0LWtleQ==
        records: [{name: w, type: CNAME, value: "${from}.z.test."}]
)",
                                  dir_ + "/undo.yaml", real);
  ASSERT_TRUE(load.ok()) << load.errors[0].ToString();
  bindings_.params = nlohmann::json::object();
  bindings_.from = "us east";
  auto plan = PlanRunbook(*load.runbook, real, bindings_);
  ASSERT_FALSE(plan.ok());
  EXPECT_THAT(plan.status().message(), HasSubstr("step 'dns' compensate: params.records[0].value"))
      << plan.status().message();
  bindings_.from = "us-east";
  EXPECT_TRUE(PlanRunbook(*load.runbook, real, bindings_).ok());
}

TEST_F(PlanTest, SecretsNeverAppearInTextOrJson) {
  auto plan = PlanRunbook(runbook_, registry_, bindings_);
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  EXPECT_EQ(plan->entries[0].params["headers"]["Authorization"], "Bearer ***");
  EXPECT_EQ(plan->entries[3].params["tsig_secret"], "***");
  EXPECT_EQ(plan->entries[3].compensation->params["tsig_secret"], "***");
  EXPECT_EQ(plan->entries[5].params["hmac_secret"], "***");
  std::string text = RenderPlanText(plan.value());
  std::string json = RenderPlanJson(plan.value()).dump();
  for (const std::string& out : {text, json}) {
    EXPECT_THAT(out, Not(HasSubstr("FENCE-TOKEN-SECRET")));
    EXPECT_THAT(out, Not(HasSubstr("HOOK-HMAC-SECRET")));
    EXPECT_THAT(out, Not(HasSubstr("VFNJRy1LRVktU0VDUkVU")));
    EXPECT_THAT(out, HasSubstr("***"));
  }
}

TEST_F(PlanTest, UnresolvableSecretFailsWithoutLeakingAnything) {
  bindings_.env = nullptr;
  auto plan = PlanRunbook(runbook_, registry_, bindings_);
  ASSERT_FALSE(plan.ok());
  EXPECT_THAT(plan.status().message(),
              HasSubstr("step 'fence-writers': params.headers.Authorization: ${env.FENCE_TOKEN}: "
                        "environment variable is not set"));
}

TEST_F(PlanTest, TextIsANumberedListBySection) {
  auto plan = PlanRunbook(runbook_, registry_, bindings_);
  ASSERT_TRUE(plan.ok());
  std::string text = RenderPlanText(plan.value());
  EXPECT_THAT(text, HasSubstr("failover f-42: us-east -> us-west, scope sales.*\n"));
  EXPECT_THAT(text, HasSubstr("guards (at approval and again before promote): target_healthy; "
                              "max_lag (max_staleness 5m)\n"));
  EXPECT_THAT(text, HasSubstr("\nfence\n  1. fence-writers [fence.http]\n"));
  EXPECT_THAT(text, HasSubstr("timeout 1m, 3 attempts, backoff 1s x2 up to 4s, jitter 20%, on "
                              "failure abort\n"));
  EXPECT_THAT(text, HasSubstr("\npromote\n  3. transfer [ownership.transfer] (parallel group "
                              "cutover)\n"));
  EXPECT_THAT(text, HasSubstr("     compensate with [dns.rfc2136] dns.rfc2136 {"));
  EXPECT_THAT(text, HasSubstr("\ncompensate (only on rollback"));
  // Sections appear in run order.
  EXPECT_LT(text.find("\nfence\n"), text.find("\npromote\n"));
  EXPECT_LT(text.find("\npromote\n"), text.find("\nverify\n"));
  EXPECT_LT(text.find("\nverify\n"), text.find("\ncompensate"));
}

TEST_F(PlanTest, JsonHoldsEveryField) {
  auto plan = PlanRunbook(runbook_, registry_, bindings_);
  ASSERT_TRUE(plan.ok());
  nlohmann::json j = RenderPlanJson(plan.value());
  EXPECT_EQ(j["runbook"], "plan-me");
  EXPECT_EQ(j["failover"]["id"], "f-42");
  EXPECT_EQ(j["failover"]["from"], "us-east");
  EXPECT_EQ(j["parameters"]["ttl"], 30);
  EXPECT_EQ(j["guards"][1]["kind"], "max_lag");
  ASSERT_EQ(j["steps"].size(), 6u);
  const auto& dns = j["steps"][3];
  EXPECT_EQ(dns["number"], 4);
  EXPECT_EQ(dns["section"], "promote");
  EXPECT_EQ(dns["id"], "dns");
  EXPECT_EQ(dns["action"], "dns.rfc2136");
  EXPECT_EQ(dns["parallel_group"], "cutover");
  EXPECT_EQ(dns["timeout"], "1m");
  EXPECT_EQ(dns["retry"]["attempts"], 1);
  EXPECT_EQ(dns["on_failure"], "compensate");
  EXPECT_EQ(dns["params"]["tsig_secret"], "***");
  EXPECT_EQ(dns["compensation"]["action"], "dns.rfc2136");
  EXPECT_TRUE(j["steps"][4]["parallel_group"].is_null());
  EXPECT_TRUE(j["steps"][4]["compensation"].is_null());
  EXPECT_THAT(dns["plan"].get<std::string>(), HasSubstr("dns.rfc2136 "));
}

}  // namespace
}  // namespace icewarden
