// What journaled fence steps are evidence of (orchestrator/failovers/fence_evidence.h): the
// check behind every fencing confirmation the executor records, whatever it claims.
#include "orchestrator/failovers/fence_evidence.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace icewarden {
namespace {

using nlohmann::json;

StepRecord Step(const std::string& id, const std::string& action, StepState state,
                json detail = json::object()) {
  StepRecord s;
  s.failover_id = "f-1";
  s.step_id = id;
  s.section = "fence";
  s.action = action;
  s.state = state;
  s.reason = id + " done";
  s.result_json = json{{"params", json::object()}, {"detail", detail}}.dump();
  return s;
}

json Closed(std::initializer_list<std::pair<const char*, bool>> gateways) {
  json list = json::array();
  for (auto [name, confirmed] : gateways)
    list.push_back({{"gateway", name}, {"confirmed", confirmed}, {"polls", 1}});
  return {{"gateways", list}};
}

class FenceEvidenceTest : public ::testing::Test {
 protected:
  FenceEvidenceTest() {
    failover_.id = "f-1";
    failover_.from = "us-east-1";
    failover_.runbook = "gateway-closed-failover";
  }
  FenceEvidence Check(const std::vector<StepRecord>& journal, FencingKind kind) {
    return FenceStepsEvidence(failover_, journal, kind, {"gw-us", "gw-eu"});
  }
  Failover failover_;
};

TEST_F(FenceEvidenceTest, EveryConfiguredGatewayConfirmedIsGatewayClosed) {
  auto e = Check({Step("close", "gateway.fence", StepState::kSucceeded,
                       Closed({{"gw-us", true}, {"gw-eu", true}}))},
                 FencingKind::kGatewayClosed);
  ASSERT_TRUE(e.evidence_json) << e.why;
  json j = json::parse(*e.evidence_json);
  EXPECT_EQ(j["kind"], "gateway_closed");
  EXPECT_EQ(j["gateways"], (json{"gw-us", "gw-eu"}));
  EXPECT_EQ(j["steps"][0]["detail"]["gateways"].size(), 2u) << "the answers are kept";
}

TEST_F(FenceEvidenceTest, AGatewayNotConfirmedOrNotAskedIsNamed) {
  auto unconfirmed = Check({Step("close", "gateway.fence", StepState::kSucceeded,
                                 Closed({{"gw-us", true}, {"gw-eu", false}}))},
                           FencingKind::kGatewayClosed);
  EXPECT_FALSE(unconfirmed.evidence_json);
  EXPECT_NE(unconfirmed.why.find("not confirmed by gw-eu"), std::string::npos) << unconfirmed.why;
  auto subset =
      Check({Step("close", "gateway.fence", StepState::kSucceeded, Closed({{"gw-us", true}}))},
            FencingKind::kGatewayClosed);
  EXPECT_FALSE(subset.evidence_json);
  EXPECT_NE(subset.why.find("gw-eu"), std::string::npos) << subset.why;
}

TEST_F(FenceEvidenceTest, AFailedQuietWindowBesideTheClosureIsNoEvidence) {
  // A quiet window that saw a commit means someone writes to us-east-1 around the gateways.
  auto e = Check({Step("close", "gateway.fence", StepState::kSucceeded,
                       Closed({{"gw-us", true}, {"gw-eu", true}})),
                  Step("quiet", "fence.catalog_quiet", StepState::kFailed)},
                 FencingKind::kGatewayClosed);
  EXPECT_FALSE(e.evidence_json);
  EXPECT_NE(e.why.find("quiet (fence.catalog_quiet) failed"), std::string::npos) << e.why;
  EXPECT_NE(e.why.find("us-east-1"), std::string::npos) << e.why;
}

TEST_F(FenceEvidenceTest, NoGatewayStepOrNoGatewaysConfiguredIsNoEvidence) {
  auto none = Check({Step("quiet", "fence.catalog_quiet", StepState::kSucceeded)},
                    FencingKind::kGatewayClosed);
  EXPECT_FALSE(none.evidence_json);
  EXPECT_NE(none.why.find("gateway.fence"), std::string::npos) << none.why;
  auto unconfigured = FenceStepsEvidence(
      failover_, {Step("close", "gateway.fence", StepState::kSucceeded, Closed({{"gw-us", true}}))},
      FencingKind::kGatewayClosed, {});
  EXPECT_FALSE(unconfigured.evidence_json);
  EXPECT_NE(unconfigured.why.find("there are none"), std::string::npos) << unconfigured.why;
}

TEST_F(FenceEvidenceTest, QuietWindowEvidenceStillNeedsASucceededQuietStep) {
  auto without = Check({Step("close", "gateway.fence", StepState::kSucceeded,
                             Closed({{"gw-us", true}, {"gw-eu", true}}))},
                       FencingKind::kEvidenceSteps);
  EXPECT_FALSE(without.evidence_json);
  EXPECT_NE(without.why.find("fence.catalog_quiet"), std::string::npos) << without.why;
  auto with = Check({Step("quiet", "fence.catalog_quiet", StepState::kSucceeded)},
                    FencingKind::kEvidenceSteps);
  ASSERT_TRUE(with.evidence_json) << with.why;
  EXPECT_EQ(json::parse(*with.evidence_json)["kind"], "steps_and_quiet_window");
}

TEST_F(FenceEvidenceTest, OtherKindsAreNotFenceStepEvidence) {
  auto e =
      Check({Step("quiet", "fence.catalog_quiet", StepState::kSucceeded)}, FencingKind::kOperator);
  EXPECT_FALSE(e.evidence_json);
}

}  // namespace
}  // namespace icewarden
