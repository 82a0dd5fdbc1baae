// The region overlay commands (orchestrator/api/regions.h) as the API answers them: the
// machine's decision on success, and for each bad request the status and a message saying
// what to send, with nothing applied.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "orchestrator/api/regions.h"
#include "orchestrator/failovers/failover_service.h"

namespace icewarden {
namespace {

using nlohmann::json;

class RegionOverlayTest : public ::testing::Test {
 protected:
  ApiResponse Send(HealthEvent e, const std::string& region, const std::string& body) {
    return HandleRegionOverlay(sink_, e, "olivia", region, body, 1000);
  }
  static std::string Message(const ApiResponse& r) {
    return json::parse(r.body)["error"]["message"].get<std::string>();
  }

  std::vector<HealthInput> applied_;
  RegionEventSink sink_ = [this](const std::string& region, const HealthInput& in,
                                 const std::string& actor) -> Result<HealthDecision> {
    if (region != "us-east-1") return Status::NotFound("no region named '" + region + "'");
    EXPECT_EQ(actor, "olivia");
    applied_.push_back(in);
    HealthDecision d;
    d.accepted = true;
    d.changed = in.event == HealthEvent::kClearFenced;
    d.next.name = region;
    d.next.fenced = false;
    d.reason = region + " no longer fenced (operator: " + in.detail + ")";
    return d;
  };
};

TEST_F(RegionOverlayTest, UnfenceAppliesTheOperatorsEventWithItsReason) {
  ApiResponse r = Send(HealthEvent::kClearFenced, "us-east-1", R"({"reason":"reconciled"})");
  ASSERT_EQ(r.status, 200) << r.body;
  ASSERT_EQ(applied_.size(), 1u);
  EXPECT_EQ(applied_[0].source, EventSource::kOperator);
  EXPECT_EQ(applied_[0].detail, "reconciled");
  EXPECT_EQ(applied_[0].at, 1000);
  json body = json::parse(r.body);
  EXPECT_EQ(body["changed"], true);
  EXPECT_EQ(body["region"]["fenced"], false);
  EXPECT_EQ(body["decision"], "us-east-1 no longer fenced (operator: reconciled)");
}

TEST_F(RegionOverlayTest, BadRequestsAreRefusedAndChangeNothing) {
  EXPECT_EQ(Send(HealthEvent::kSetFenced, "us-east-1", "").status, 400);
  ApiResponse none = Send(HealthEvent::kSetFenced, "us-east-1", "{}");
  EXPECT_EQ(none.status, 400);
  EXPECT_EQ(Message(none), "reason is required: say why, for the audit log");
  ApiResponse unknown = Send(HealthEvent::kSetFenced, "us-east-1", R"({"reason":"x","why":1})");
  EXPECT_EQ(unknown.status, 400);
  EXPECT_NE(Message(unknown).find("unknown field 'why'"), std::string::npos);
  ApiResponse overlong = Send(HealthEvent::kSetFenced, "us-east-1",
                              json{{"reason", std::string(kMaxReasonBytes + 1, 'x')}}.dump());
  EXPECT_EQ(overlong.status, 400);
  EXPECT_NE(Message(overlong).find("longer than 4096 bytes"), std::string::npos);
  EXPECT_TRUE(applied_.empty());
  ApiResponse missing = Send(HealthEvent::kSetFenced, "ap-south-1", R"({"reason":"x"})");
  EXPECT_EQ(missing.status, 404);
  EXPECT_EQ(Message(missing), "no region named 'ap-south-1'");
}

TEST_F(RegionOverlayTest, RefusalsAndAMissingWatchAreSaidAsSuch) {
  sink_ = [](const std::string&, const HealthInput&, const std::string&) -> Result<HealthDecision> {
    HealthDecision d;
    d.reason = "refused: webhook may not send clear_fenced for us-east-1";
    return d;
  };
  ApiResponse refused = Send(HealthEvent::kClearFenced, "us-east-1", R"({"reason":"x"})");
  EXPECT_EQ(refused.status, 409);
  EXPECT_EQ(Message(refused), "refused: webhook may not send clear_fenced for us-east-1");
  sink_ = nullptr;
  EXPECT_EQ(Send(HealthEvent::kClearFenced, "us-east-1", R"({"reason":"x"})").status, 503);
}

}  // namespace
}  // namespace icewarden
