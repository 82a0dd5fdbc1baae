// Issue 12's takeover mid-failover, end to end: the lab stack's serve and a second replica over
// a real etcd member; the leader is SIGKILLed while ownership.transfer runs; the standby takes
// over, resumes the failover from the journal and completes it without running a step twice.
#include <gtest/gtest.h>
#include <signal.h>

#include "tests/e2e/failover_e2e_fixture.h"
#include "tests/etcd/etcd_member.h"

namespace icewarden::testing {
namespace {

class EtcdTakeoverE2eTest : public FailoverE2eTest {
 protected:
  EtcdTakeoverE2eTest() {
    options_.state_yaml = "state:\n  backend: etcd\n  etcd:\n    endpoints: [" + etcd_.url() +
                          "]\n    max_txn_ops: 1024\n    leader_ttl: 2s\n    replicas: [a, b]\n";
    options_.serve_flags = {"--replica", "a"};
    options_.serve_listen = "127.0.0.1:" + std::to_string(FreePort());
  }
  void SetUp() override {
    ASSERT_TRUE(etcd_.WaitReady());
    FailoverE2eTest::SetUp();
  }

  EtcdMember etcd_{{"--max-txn-ops", "1024"}};
};

TEST_F(EtcdTakeoverE2eTest, ALeaderKilledMidTransferIsReplacedAndTheFailoverCompletesOnce) {
  const std::string b_url = "http://127.0.0.1:" + std::to_string(FreePort());
  std::unique_ptr<Subprocess> b = stack_->StartAnotherServe(b_url.substr(7), {"--replica", "b"});
  auto first = b->ReadLine(std::chrono::seconds(20));
  ASSERT_TRUE(first && first->find("standby") != std::string::npos) << first.value_or("");

  WaitUntilSettled();
  const auto before = Ownership();
  ASSERT_EQ(
      stack_->LabAdmin("POST", "/lab/regions/eu-central-1/faults", R"({"commit_latency_ms":700})")
          .status,
      200);
  const std::string id = ProposeUsToEu();
  ASSERT_EQ(stack_->Cli({"failover", "approve", id, "--yes"}, "approver").exit_code, 0);
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

  stack_->KillServe(SIGKILL);  // the leader, a
  auto took_over = b->ReadLine(std::chrono::seconds(20));
  ASSERT_TRUE(took_over && took_over->find("serving") != std::string::npos)
      << took_over.value_or("b printed nothing more");
  stack_->UseServer(b_url);
  CommandResult watched =
      stack_->Cli({"failover", "watch", id, "--timeout", "120"}, "viewer", 130s);
  ASSERT_EQ(watched.exit_code, 0) << watched.out << watched.err << Failover(id).dump(2);

  const auto after = Ownership();
  for (const auto& [table, owner_epoch] : before) {
    if (owner_epoch.first != kLabUs) continue;
    EXPECT_EQ(after.at(table).first, kLabEu) << table;
    EXPECT_EQ(after.at(table).second, owner_epoch.second + 1) << table << " moved once, not twice";
  }
  // A step journaled succeeded before the kill is not run again; the transfer in flight,
  // idempotent, is run once more by b.
  for (const json& s : Failover(id)["steps"]) {
    if (s["section"] == "fence") continue;
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

}  // namespace
}  // namespace icewarden::testing
