// Failovers in the lab with a real BIND 9 and a real Alertmanager (tests/e2e/lab_stack.h),
// driven as an operator and an approver would: with the CLI and the API.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <thread>

#include "tests/e2e/failover_e2e_fixture.h"

namespace icewarden::testing {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;
using namespace std::chrono_literals;

// (a) The owner's catalog goes away; its silence is the evidence; eu-central-1 takes over.
TEST_F(FailoverE2eTest, StoppedRegionFailsOverOnItsSilence) {
  WaitUntilSettled();
  const auto before = Ownership();
  ASSERT_EQ(stack_->LabAdmin("POST", "/lab/regions/us-east-1/stop").status, 200);
  ASSERT_TRUE(Eventually([&] { return Health(kLabUs) == "unreachable"; }, 30s));
  const std::string id = ProposeUsToEu();
  ASSERT_FALSE(id.empty());
  CommandResult approved = stack_->Cli(
      {"failover", "approve", id, "--reason", "agreed on the bridge", "--yes"}, "approver");
  ASSERT_EQ(approved.exit_code, 0) << approved.out << approved.err;
  CommandResult watched = stack_->Cli({"failover", "watch", id, "--timeout", "90"}, "viewer", 100s);
  ASSERT_EQ(watched.exit_code, 0) << watched.out << watched.err << "\n" << Failover(id).dump(2);

  json f = Failover(id);
  EXPECT_EQ(f["fencing"]["kind"], "old_region_unreachable") << f.dump(2);
  EXPECT_EQ(stack_->Dig("writer.lake.lab", "CNAME"),
            std::vector<std::string>{"catalog.eu-central-1.lake.lab."});
  const auto after = Ownership();
  int moved = 0;
  for (const auto& [table, owner_epoch] : before) {
    if (owner_epoch.first != kLabUs) continue;
    ++moved;
    ASSERT_TRUE(after.count(table));
    EXPECT_EQ(after.at(table).first, kLabEu) << table;
    EXPECT_EQ(after.at(table).second, owner_epoch.second + 1)
        << table << ": epochs rise by exactly one";
  }
  EXPECT_GT(moved, 0);
  bool alerted = false;
  for (const json& a : stack_->AlertmanagerAlerts())
    alerted = alerted || a["labels"].value("failover", "") == id;
  EXPECT_TRUE(alerted) << stack_->AlertmanagerAlerts().dump(2);
  CommandResult report = stack_->Cli({"failover", "report", id}, "viewer");
  EXPECT_EQ(report.exit_code, 0);
  EXPECT_THAT(report.out, HasSubstr("total RTO"));
  EXPECT_THAT(report.out, HasSubstr("old_region_unreachable"));
}

// (b) The old owner keeps taking commits: the quiet window is no evidence, and says why.
TEST_F(FailoverE2eTest, CommitsInTheOldOwnerRefuseQuietWindowEvidence) {
  WaitUntilSettled();
  // No terminal and no --yes: nothing changes, exit 2.
  CommandResult unasked = stack_->Cli(
      {"failover", "propose", "--to", kLabEu, "--scope", "owner:us-east-1", "--reason", "x"},
      "operator");
  EXPECT_EQ(unasked.exit_code, 2) << unasked.out << unasked.err;
  EXPECT_THAT(unasked.err, HasSubstr("--yes"));
  EXPECT_TRUE(stack_->Api("GET", "/api/v1/failovers").body["failovers"].empty());
  const std::string id = ProposeUsToEu();
  ASSERT_FALSE(id.empty());
  ASSERT_EQ(stack_->Cli({"failover", "approve", id, "--yes"}, "approver").exit_code, 0);
  ASSERT_TRUE(Eventually(
      [&] {
        for (const json& s : Failover(id).value("steps", json::array()))
          if (s["step_id"] == "old-catalog-quiet" && s["state"] == "failed") return true;
        return false;
      },
      40s))
      << Failover(id).dump(2);
  std::this_thread::sleep_for(1s);
  json f = Failover(id);
  EXPECT_EQ(f["phase"], "fencing");
  EXPECT_TRUE(f["fencing"].is_null()) << "no evidence while the old owner takes commits";
  std::string why;
  for (const json& s : f["steps"])
    if (s["step_id"] == "old-catalog-quiet") why = s["reason"];
  EXPECT_THAT(why, HasSubstr("got snapshot")) << why;
  EXPECT_EQ(stack_->Cli({"failover", "abort", id, "--reason", "old owner still writing", "--yes"})
                .exit_code,
            0);
  EXPECT_EQ(Phase(id), "aborted");
}

// (c) Lag past max_staleness: the approval is refused unless data loss is accepted.
class FailoverLagE2eTest : public FailoverE2eTest {
 protected:
  FailoverLagE2eTest() { options_.max_staleness = "2s"; }
};

TEST_F(FailoverLagE2eTest, ApprovalNeedsAcceptDataLossWhenLagIsPastMaxStaleness) {
  WaitUntilSettled();
  ASSERT_EQ(stack_->LabAdmin("POST", "/lab/replication/pause").status, 200);
  ASSERT_TRUE(Eventually(
      [&] {
        HttpReply r = stack_->Api("GET", "/api/v1/lag?state=behind", "", "viewer");
        if (r.status != 200) return false;
        for (const json& t : r.body.value("tables", json::array()))
          if (t.value("lag_ms", 0) > 3000) return true;
        return false;
      },
      30s));
  const std::string id = ProposeUsToEu();
  CommandResult refused = stack_->Cli({"failover", "approve", id, "--yes"}, "approver");
  EXPECT_EQ(refused.exit_code, 1);
  EXPECT_THAT(refused.err, HasSubstr("rpo"));
  EXPECT_EQ(Phase(id), "proposed");
  CommandResult accepted = stack_->Cli({"failover", "approve", id, "--accept-data-loss",
                                        "replication paused for the drill", "--yes"},
                                       "approver");
  EXPECT_EQ(accepted.exit_code, 0) << accepted.err;
  EXPECT_EQ(Failover(id)["accept_data_loss"], "replication paused for the drill");
  stack_->Cli({"failover", "abort", id, "--reason", "test over", "--yes"});
}

// (d) serve is SIGKILLed while promoting: the restart resumes and completes, no step twice.
class FailoverCrashE2eTest : public FailoverE2eTest {};

TEST_F(FailoverCrashE2eTest, KilledWhilePromotingResumesAndCompletes) {
  WaitUntilSettled();
  const auto before = Ownership();
  // Slow commits in the new owner: the transfer takes long enough to be killed inside.
  ASSERT_EQ(
      stack_->LabAdmin("POST", "/lab/regions/eu-central-1/faults", R"({"commit_latency_ms":700})")
          .status,
      200);
  const std::string id = ProposeUsToEu();
  ASSERT_EQ(stack_->Cli({"failover", "approve", id, "--yes"}, "approver").exit_code, 0);
  // The workload commits to us-east-1, so its quiet window fails: a person confirms.
  ASSERT_TRUE(Eventually([&] { return Phase(id) == "fencing"; }, 20s));
  ASSERT_EQ(
      stack_
          ->Cli({"failover", "confirm-fencing", id, "--reason", "writers stopped by hand", "--yes"},
                "approver")
          .exit_code,
      0);
  ASSERT_TRUE(Eventually(
      [&] {
        for (const json& s : Failover(id).value("steps", json::array()))
          if (s["step_id"] == "transfer-ownership" && s["state"] == "running") return true;
        return false;
      },
      30s))
      << Failover(id).dump(2);
  stack_->KillServe(SIGKILL);
  ASSERT_EQ(stack_->RestartServe(), "");
  CommandResult watched =
      stack_->Cli({"failover", "watch", id, "--timeout", "120"}, "viewer", 130s);
  ASSERT_EQ(watched.exit_code, 0) << watched.out << watched.err << Failover(id).dump(2);
  const auto after = Ownership();
  for (const auto& [table, owner_epoch] : before) {
    if (owner_epoch.first != kLabUs) continue;
    EXPECT_EQ(after.at(table).second, owner_epoch.second + 1) << table << " moved once, not twice";
  }
  // A step journaled succeeded before the kill is never run again (its attempt stays 1);
  // the one in flight, an idempotent transfer, is run once more.
  for (const json& s : Failover(id)["steps"]) {
    if (s["section"] == "fence") continue;  // the quiet window saw the workload's commits
    EXPECT_EQ(s["state"], "succeeded") << s.dump();
    if (s["step_id"] == "transfer-ownership") {
      EXPECT_LE(s["attempt"].get<int>(), 2) << s.dump();
    } else {
      EXPECT_EQ(s["attempt"], 1) << s.dump();
    }
  }
  EXPECT_EQ(stack_->Dig("writer.lake.lab", "CNAME"),
            std::vector<std::string>{"catalog.eu-central-1.lake.lab."});
}

// (e) Two-person rule: the proposer's own approval is refused.
class FailoverTwoPersonE2eTest : public FailoverE2eTest {
 protected:
  FailoverTwoPersonE2eTest() { options_.two_person_approval = true; }
};

TEST_F(FailoverTwoPersonE2eTest, TheProposersOwnApprovalIsRefused) {
  WaitUntilSettled();
  const std::string id = ProposeUsToEu("admin");
  CommandResult own = stack_->Cli({"failover", "approve", id, "--yes"}, "admin");
  EXPECT_EQ(own.exit_code, 1);
  EXPECT_THAT(own.err, HasSubstr("may not approve"));
  EXPECT_TRUE(Failover(id)["approvals"].empty());
  EXPECT_EQ(stack_->Cli({"failover", "approve", id, "--yes"}, "approver").exit_code, 0);
  EXPECT_EQ(Phase(id), "proposed") << "one approval of the two";
}

// (f) A catalog that answers, even only 503s, is alive: never unreachable evidence.
TEST_F(FailoverE2eTest, ACatalogAnswering503IsNeverUnreachableEvidence) {
  WaitUntilSettled();
  ASSERT_EQ(stack_
                ->LabAdmin("POST", "/lab/regions/us-east-1/faults",
                           R"({"error_rate":1.0,"error_status":503})")
                .status,
            200);
  ASSERT_TRUE(Eventually(
      [&] { return Health(kLabUs) == "unreachable" || Health(kLabUs) == "degraded"; }, 30s));
  const std::string id = ProposeUsToEu();
  ASSERT_EQ(
      stack_->Cli({"failover", "approve", id, "--yes", "--accept-data-loss", "test"}, "approver")
          .exit_code,
      0);
  ASSERT_TRUE(Eventually([&] { return Phase(id) == "fencing"; }, 20s));
  std::this_thread::sleep_for(6s);  // three times unreachable_for
  json f = Failover(id);
  EXPECT_EQ(f["phase"], "fencing") << f.dump(2);
  EXPECT_TRUE(f["fencing"].is_null());
  for (const json& r : stack_->Api("GET", "/api/v1/regions", "", "viewer").body["regions"])
    if (r["name"] == kLabUs) {
      EXPECT_TRUE(r.value("silent_since", json()).is_null()) << r.dump();
    }
  stack_->Cli({"failover", "abort", id, "--reason", "test over", "--yes"});
}

}  // namespace
}  // namespace icewarden::testing
