// The failure-mode drills of examples/drills/, each run against the lab stack as its comments
// describe: the drill's definition is the example file's drills: section, the fault is the
// lab's, and people approve through the real CLI.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "tests/e2e/failover_e2e_fixture.h"

namespace icewarden::testing {
namespace {

using ::testing::HasSubstr;

std::string ExampleDrill(const std::string& name) {
  std::ifstream in(SourceDir() + "/examples/drills/" + name + ".yaml");
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

template <const char* kName>
class DrillScenarioTest : public FailoverE2eTest {
 protected:
  void SetUp() override {
    options_.extra_yaml = ExampleDrill(kName);
    options_.switchover_catch_up = "2s";  // the gate gives up quickly
    FailoverE2eTest::SetUp();
  }

  // The drill's live run with us-east-1's catalog stopped, approved by the approver, until its
  // failover completed. The run id.
  std::string FailOverWithTheCatalogDown() {
    EXPECT_EQ(stack_->LabAdmin("POST", "/lab/workload", R"({"enabled":false})").status, 200);
    std::this_thread::sleep_for(3s);
    EXPECT_EQ(stack_->LabAdmin("POST", "/lab/regions/us-east-1/stop").status, 200);
    EXPECT_TRUE(Eventually([&] { return Health(kLabUs) == "unreachable"; }, 30s));
    CommandResult run = stack_->Cli({"drill", "run", kName, "--no-wait"}, "operator");
    EXPECT_EQ(run.exit_code, 0) << run.out << run.err;
    const std::string id = run.out.substr(0, run.out.find('\n'));
    const std::string fo = Report(id)["run"].value("failover_id", "");
    EXPECT_EQ(Failover(fo)["phase"], "proposed") << "a drill never approves itself";
    CommandResult approved =
        stack_->Cli({"failover", "approve", fo, "--reason", "drill", "--yes"}, "approver");
    EXPECT_EQ(approved.exit_code, 0) << approved.out << approved.err;
    CommandResult watched =
        stack_->Cli({"failover", "watch", fo, "--timeout", "90"}, "viewer", 100s);
    EXPECT_EQ(watched.exit_code, 0) << watched.out << watched.err;
    return id;
  }

  json Report(const std::string& run) {
    CommandResult r = stack_->Cli({"drill", "report", run, "--output", "json"}, "viewer");
    EXPECT_EQ(r.exit_code, 0) << r.err;
    json j = json::parse(r.out, nullptr, false);
    return j.is_discarded() ? json::object() : j;
  }
};

constexpr char kCatalogUnreachable[] = "catalog-unreachable";
constexpr char kSecondWriter[] = "second-writer";
constexpr char kReplicationStopped[] = "replication-stopped";
using CatalogUnreachableDrillTest = DrillScenarioTest<kCatalogUnreachable>;
using SecondWriterDrillTest = DrillScenarioTest<kSecondWriter>;
using ReplicationStoppedDrillTest = DrillScenarioTest<kReplicationStopped>;

TEST_F(CatalogUnreachableDrillTest, FailsOverOnTheSilenceAndReportsTheDurations) {
  WaitUntilSettled();
  const std::string run = FailOverWithTheCatalogDown();
  json report = Report(run);
  const json& fo = report["failover"];
  ASSERT_TRUE(fo.is_object()) << report.dump(2);
  EXPECT_EQ(fo["fencing"]["kind"], "old_region_unreachable");
  EXPECT_TRUE(report["rto"]["measured_ms"].is_number()) << report["rto"];
  EXPECT_TRUE(report["durations"]["fencing_ms"].is_number()) << report["durations"];
  EXPECT_TRUE(report["durations"]["transfer_ms"].is_number());
  EXPECT_TRUE(report["durations"]["dns_ms"].is_number());
  EXPECT_EQ(stack_->Dig("writer.lake.lab", "CNAME"),
            std::vector<std::string>{"catalog.eu-central-1.lake.lab."});
  // The way back is proposed for a person to approve, once us-east-1 is healthy again.
  EXPECT_TRUE(Report(run)["run"]["failback_id"].is_null()) << "not while us-east-1 is down";
  ASSERT_EQ(stack_->LabAdmin("POST", "/lab/regions/us-east-1/start").status, 200);
  ASSERT_TRUE(Eventually([&] { return Health(kLabUs) == "healthy"; }, 30s));
  ASSERT_TRUE(Eventually([&] { return Report(run)["run"]["failback_id"].is_string(); }, 20s));
  report = Report(run);
  EXPECT_EQ(report["run"]["phase"], "waiting");
  EXPECT_EQ(Failover(report["run"]["failback_id"])["phase"], "proposed");
}

TEST_F(SecondWriterDrillTest, TheSplitBrainWatchFiresAndTheReportShowsIt) {
  WaitUntilSettled();
  const std::string run = FailOverWithTheCatalogDown();
  ASSERT_EQ(stack_->LabAdmin("POST", "/lab/regions/us-east-1/start").status, 200);
  ASSERT_TRUE(Eventually([&] { return Health(kLabUs) == "healthy"; }, 30s));
  ASSERT_EQ(
      stack_->LabAdmin("POST", "/lab/rogue-writer", R"({"region":"us-east-1","enabled":true})")
          .status,
      200);
  ASSERT_TRUE(Eventually([&] { return Fenced(kLabUs); }, 30s))
      << "the split-brain watch fences the second writer";
  ASSERT_EQ(
      stack_->LabAdmin("POST", "/lab/rogue-writer", R"({"region":"us-east-1","enabled":false})")
          .status,
      200);
  ASSERT_TRUE(Eventually(
      [&] { return !Report(run)["failover"].value("split_brain", json::array()).empty(); }, 20s))
      << Report(run).dump(2);
  CommandResult status = stack_->Cli({"status"}, "viewer");
  EXPECT_THAT(status.out, HasSubstr("split brain: us-east-1 committed to"));
}

TEST_F(ReplicationStoppedDrillTest, TheCatchUpGateBlocksThePromotion) {
  WaitUntilSettled();
  const auto before = Ownership();
  const auto writer = stack_->Dig("writer.lake.lab", "CNAME");
  ASSERT_EQ(stack_->LabAdmin("POST", "/lab/replication/pause").status, 200);
  // A commit in us-east-1 that eu-central-1 will not get.
  const long long since = stack_->LabAdmin("GET", "/lab/commits").body.value("total", 0LL);
  ASSERT_TRUE(Eventually(
      [&] {
        HttpReply log = stack_->LabAdmin("GET", "/lab/commits?since=" + std::to_string(since));
        for (const json& c : log.body.value("commits", json::array()))
          if (c["region"] == kLabUs) return true;
        return false;
      },
      20s));
  CommandResult run = stack_->Cli({"drill", "run", kReplicationStopped, "--no-wait"}, "operator");
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  const std::string id = run.out.substr(0, run.out.find('\n'));
  const std::string fo = Report(id)["run"].value("failover_id", "");
  ASSERT_EQ(Failover(fo)["kind"], "switchover");
  CommandResult approved =
      stack_->Cli({"failover", "approve", fo, "--reason", "drill", "--yes"}, "approver");
  ASSERT_EQ(approved.exit_code, 0) << approved.out << approved.err;
  ASSERT_TRUE(Eventually([&] { return Report(id)["run"]["phase"] == "finished"; }, 90s))
      << Failover(fo).dump(2);
  json report = Report(id);
  EXPECT_EQ(report["verdict"]["result"], "failed");
  EXPECT_EQ(report["verdict"]["failing_step"], "failover");
  EXPECT_THAT(report["verdict"]["reason"].get<std::string>(), HasSubstr("rolled_back"));
  EXPECT_TRUE(report["rto"]["within_target"].is_null()) << "a rollback recovered nothing";
  bool gate_failed = false;
  for (const json& s : report["steps"])
    gate_failed = gate_failed || (s.value("id", "") == "failover/replica-caught-up" &&
                                  s.value("status", "") == "failed");
  for (const json& s : report["steps"])
    EXPECT_NE(s.value("id", ""), "failover/demotion-token") << "the gate stopped it before";
  EXPECT_TRUE(gate_failed) << report["steps"].dump(2);
  EXPECT_EQ(Ownership(), before) << "nothing was promoted";
  EXPECT_EQ(stack_->Dig("writer.lake.lab", "CNAME"), writer);
}

}  // namespace
}  // namespace icewarden::testing
