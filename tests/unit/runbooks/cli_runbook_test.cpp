// `icewarden runbook validate` and `runbook plan` with a fake registry: exit codes, where
// errors go, and what is printed.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sstream>

#include "orchestrator/cli/cli.h"
#include "orchestrator/cli/runbook.h"
#include "tests/fakes/fake_action.h"
#include "tests/fakes/test_paths.h"

namespace icewarden {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;

std::optional<std::string> Env(const std::string& name) {
  if (name == "FENCE_TOKEN" || name == "DNS_TSIG_SECRET") return "TOP-SECRET-" + name;
  return std::nullopt;
}

class CliRunbookTest : public ::testing::Test {
 protected:
  std::string Example(const std::string& name) {
    return testing::SourceDir() + "/examples/runbooks/" + name;
  }
  ActionRegistry registry_ = testing::FakeBuiltinRegistry();
  std::ostringstream out_, err_;
};

TEST_F(CliRunbookTest, ValidateOkSaysHowManyStepsPerSection) {
  std::string file = Example("gateway-switchover.yaml");
  EXPECT_EQ(RunbookValidateCommand(file, registry_, out_, err_), kExitOk);
  EXPECT_EQ(out_.str(), file + ": ok (12 steps: fence 4, promote 4, verify 3, compensate 1)\n");
  EXPECT_THAT(err_.str(), IsEmpty());
}

TEST_F(CliRunbookTest, ValidatePrintsEveryErrorWithItsPositionAndExitsTwo) {
  std::string file =
      testing::SourceDir() + "/tests/unit/runbooks/corpus/missing_required_param.yaml";
  EXPECT_EQ(RunbookValidateCommand(file, registry_, out_, err_), kExitUsage);
  EXPECT_THAT(out_.str(), IsEmpty());
  EXPECT_THAT(err_.str(),
              HasSubstr(file + ":8:5: verify[0].params.region: missing required param\n"));
  EXPECT_THAT(err_.str(), HasSubstr(file + ": 2 errors\n"));
}

TEST_F(CliRunbookTest, PlanPrintsTheStepsWithSecretsMasked) {
  RunbookPlanOptions o;
  o.file = Example("gateway-switchover.yaml");
  o.from = "us-east";
  o.to = "us-west";
  o.scope = "all owned by us-east";
  EXPECT_EQ(RunbookPlanCommand(o, registry_, Env, out_, err_), kExitOk) << err_.str();
  EXPECT_THAT(out_.str(), HasSubstr("failover <failover-id>: us-east -> us-west"));
  EXPECT_THAT(out_.str(), HasSubstr("Bearer ***"));
  EXPECT_THAT(out_.str(), ::testing::Not(HasSubstr("TOP-SECRET")));

  std::ostringstream json_out;
  o.output = "json";
  EXPECT_EQ(RunbookPlanCommand(o, registry_, Env, json_out, err_), kExitOk);
  auto j = nlohmann::json::parse(json_out.str());
  EXPECT_EQ(j["steps"].size(), 12u);
  EXPECT_THAT(json_out.str(), ::testing::Not(HasSubstr("TOP-SECRET")));
}

TEST_F(CliRunbookTest, PlanExitsTwoOnAMissingRequiredParameter) {
  RunbookPlanOptions o;
  o.file = Example("partitioned-failover.yaml");
  o.from = "eu-central";
  o.to = "eu-west";
  o.scope = "sales.*";
  EXPECT_EQ(RunbookPlanCommand(o, registry_, Env, out_, err_), kExitUsage);
  EXPECT_THAT(err_.str(), HasSubstr("missing required parameter 'namespace'"));
  EXPECT_THAT(out_.str(), IsEmpty());
}

TEST_F(CliRunbookTest, PlanRejectsBadUsage) {
  RunbookPlanOptions o;
  o.file = Example("gateway-switchover.yaml");
  o.from = "a";
  o.to = "a";
  o.scope = "s";
  EXPECT_EQ(RunbookPlanCommand(o, registry_, Env, out_, err_), kExitUsage);
  EXPECT_THAT(err_.str(), HasSubstr("--from and --to both name 'a'"));
  o.to = "b";
  o.output = "yaml";
  EXPECT_EQ(RunbookPlanCommand(o, registry_, Env, out_, err_), kExitUsage);
  o.output = "table";
  o.scope = "";
  EXPECT_EQ(RunbookPlanCommand(o, registry_, Env, out_, err_), kExitUsage);
  EXPECT_THAT(err_.str(), HasSubstr("--scope is required"));
}

TEST(ParseParamAssignmentsTest, SplitsAtTheFirstEquals) {
  auto m = ParseParamAssignments({"a=1", "url=https://x/?q=2", "empty="});
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->at("a"), "1");
  EXPECT_EQ(m->at("url"), "https://x/?q=2");
  EXPECT_EQ(m->at("empty"), "");
  EXPECT_FALSE(ParseParamAssignments({"novalue"}).ok());
  EXPECT_FALSE(ParseParamAssignments({"=x"}).ok());
  EXPECT_FALSE(ParseParamAssignments({"a=1", "a=2"}).ok());
}

}  // namespace
}  // namespace icewarden
