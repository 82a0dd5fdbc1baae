// Fencing evidence gateway_closed in the whole lab stack: `icewarden serve` runs
// examples/runbooks/gateway-closed-failover.yaml, whose only fence step is gateway.fence, under
// policies.fencing_evidence [gateway_closed, operator], with the lab's workload writing through
// the gateways. Every gateway's confirmed closure is the evidence; one gateway that cannot
// confirm leaves the failover waiting in fencing for a person, with ownership where it was.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/gateway/gateway_e2e_fixture.h"

namespace icewarden::testing {
namespace {

using nlohmann::json;

class GatewayClosedTest : public GatewayE2eTest {
 protected:
  GatewayClosedTest() {
    options_.failover_runbook = "gateway-closed-failover.yaml";
    options_.fencing_evidence = "[gateway_closed, operator]";
  }

  // `failover propose` of us-east-1's tables to eu-central-1 and `failover approve`; the id.
  std::string ProposeAndApprove() {
    const std::string id = ProposeUsToEu();
    if (id.empty()) return id;
    CommandResult approved =
        stack_->Cli({"failover", "approve", id, "--reason", "planned", "--yes"}, "approver");
    EXPECT_EQ(approved.exit_code, 0) << approved.out << approved.err;
    return approved.exit_code == 0 ? id : "";
  }

  // The failover's fence step as its report journals it.
  json FenceStep(const std::string& id) {
    HttpReply r = stack_->Api("GET", "/api/v1/failovers/" + id + "/report", "", "viewer");
    for (const json& s : r.body.value("steps", json::array()))
      if (s.value("step", "") == "close-gateways") return s;
    return json();
  }
};

TEST_F(GatewayClosedTest, EveryGatewaysClosureIsTheFencingEvidence) {
  WaitUntilSettled();
  const auto before = Ownership();
  const std::string id = ProposeAndApprove();
  ASSERT_FALSE(id.empty());
  CommandResult watched = stack_->Cli({"failover", "watch", id, "--timeout", "90"}, "viewer", 100s);
  ASSERT_EQ(watched.exit_code, 0) << watched.out << watched.err << Failover(id).dump(2);
  json f = Failover(id);
  EXPECT_EQ(f["phase"], "completed") << f.dump(2);
  ASSERT_TRUE(f["fencing"].is_object()) << f.dump(2);
  EXPECT_EQ(f["fencing"]["kind"], "gateway_closed") << f["fencing"].dump(2);
  EXPECT_EQ(f["fencing"]["by"], "executor");
  EXPECT_THAT(f["fencing"]["evidence"]["gateways"],
              ::testing::UnorderedElementsAre("gw-us", "gw-eu", "gw-us-stale"))
      << f["fencing"].dump(2);
  // Ownership moved once, epoch +1, for every table the scope held.
  for (const auto& [table, owner_epoch] : Ownership()) {
    const auto& [was_owner, was_epoch] = before.at(table);
    if (was_owner != kLabUs) continue;
    EXPECT_EQ(owner_epoch.first, kLabEu) << table;
    EXPECT_EQ(owner_epoch.second, was_epoch + 1) << table;
  }
}

TEST_F(GatewayClosedTest, AGatewayThatCannotConfirmLeavesItToAPerson) {
  WaitUntilSettled();
  gateways_.erase("gw-us-stale");  // SIGTERM: its engines could still reach us-east-1 through it
  const auto before = Ownership();
  const std::string id = ProposeAndApprove();
  ASSERT_FALSE(id.empty());
  // gateway.fence asks for its 10 s timeout, then the step fails and the failover waits.
  ASSERT_TRUE(Eventually([&] { return FenceStep(id).value("state", "") == "failed"; }, 60s))
      << Failover(id).dump(2);
  EXPECT_THAT(FenceStep(id)["reason"].get<std::string>(),
              ::testing::HasSubstr("not every gateway confirmed the closure: gw-us-stale"));
  json f = Failover(id);
  EXPECT_EQ(f["phase"], "fencing") << f.dump(2);
  EXPECT_TRUE(f["fencing"].is_null()) << f.dump(2);
  EXPECT_EQ(Ownership(), before) << "nothing moved";

  CommandResult confirmed = stack_->Cli(
      {"failover", "confirm-fencing", id, "--reason", "gw-us-stale is stopped", "--yes"},
      "approver");
  ASSERT_EQ(confirmed.exit_code, 0) << confirmed.out << confirmed.err;
  CommandResult watched = stack_->Cli({"failover", "watch", id, "--timeout", "90"}, "viewer", 100s);
  ASSERT_EQ(watched.exit_code, 0) << watched.out << watched.err << Failover(id).dump(2);
  EXPECT_EQ(Failover(id)["fencing"]["kind"], "operator");
}

}  // namespace
}  // namespace icewarden::testing
