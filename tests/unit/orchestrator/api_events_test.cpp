// GET /api/v1/events (orchestrator/api/events.h) through Api::Handle, the stream polled by
// hand: audit events as SSE events with their seq as id, resumed after Last-Event-ID, the
// steps of active failovers on connection and on change, and less for a viewer.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "orchestrator/api/api.h"
#include "tests/fakes/fake_clock.h"
#include "tests/fakes/fake_store.h"

namespace icewarden {
namespace {

using nlohmann::json;
using testing::FakeClock;
using testing::FakeStore;
using ::testing::HasSubstr;
using ::testing::Not;

AuditEvent Why(std::string action, std::string target) {
  AuditEvent e;
  e.actor = "otto";
  e.source = "api";
  e.action = std::move(action);
  e.target = std::move(target);
  e.reason = "a reason only auditors see";
  return e;
}

class ApiEventsTest : public ::testing::Test {
 protected:
  ApiEventsTest() : store_(clock_), api_(Config(), store_, clock_, {}) {}

  static ApiConfig Config() {
    ApiConfig c;
    c.tokens = {ApiToken{"vera", Role::kViewer, Secret("viewer-secret")},
                ApiToken{"root", Role::kAdmin, Secret("admin-secret")}};
    return c;
  }

  ApiResponse Open(const std::string& token, const std::string& target = "/api/v1/events",
                   std::map<std::string, std::string> headers = {}) {
    ApiRequest req;
    req.method = "GET";
    req.target = target;
    req.headers = std::move(headers);
    req.headers["authorization"] = "Bearer " + token;
    return api_.Handle(req);
  }

  FakeClock clock_;
  FakeStore store_;
  Api api_;
};

TEST_F(ApiEventsTest, AuditEventsAreEventsWithTheirSeqAsIdFromNowOn) {
  ASSERT_TRUE(store_.AppendAudit(Why("region.health", "us-east-1")).ok());
  ApiResponse res = Open("admin-secret");
  ASSERT_EQ(res.status, 200) << res.body;
  EXPECT_EQ(res.content_type, "text/event-stream");
  ASSERT_NE(res.stream, nullptr);
  const std::string first = *res.stream->Poll();
  EXPECT_THAT(first, HasSubstr(": icewarden events after seq 1"));
  EXPECT_THAT(first, Not(HasSubstr("id: 1\n"))) << "what happened before is not replayed";

  ASSERT_TRUE(store_.AppendAudit(Why("failover.approve", "fo-1")).ok());
  ASSERT_TRUE(store_.AppendAudit(Why("webhook.delivery", "fo-1")).ok());
  const std::string next = *res.stream->Poll();
  EXPECT_THAT(next, HasSubstr("id: 2\nevent: failover\ndata: {"));
  EXPECT_THAT(next, HasSubstr("id: 3\nevent: audit\ndata: {"));
  EXPECT_THAT(next, HasSubstr("a reason only auditors see"));
  EXPECT_EQ(*res.stream->Poll(), "") << "nothing new";
}

TEST_F(ApiEventsTest, AReconnectingClientResumesAfterItsLastEventId) {
  for (const char* a : {"region.health", "readiness.ready", "drill.run"})
    ASSERT_TRUE(store_.AppendAudit(Why(a, "x")).ok());
  ApiResponse res = Open("admin-secret", "/api/v1/events", {{"last-event-id", "1"}});
  ASSERT_EQ(res.status, 200) << res.body;
  const std::string text = *res.stream->Poll();
  EXPECT_THAT(text, Not(HasSubstr("id: 1\n")));
  EXPECT_THAT(text, HasSubstr("id: 2\nevent: readiness\n"));
  EXPECT_THAT(text, HasSubstr("id: 3\nevent: drill\n"));
  ApiResponse from_query = Open("admin-secret", "/api/v1/events?after=2");
  EXPECT_THAT(*from_query.stream->Poll(), HasSubstr("id: 3\nevent: drill\n"));
}

TEST_F(ApiEventsTest, AViewerSeesWhatChangedButNotWhoOrWhy) {
  ApiResponse res = Open("viewer-secret", "/api/v1/events?after=0");
  ASSERT_EQ(res.status, 200) << res.body;
  ASSERT_TRUE(store_.AppendAudit(Why("region.fenced", "us-east-1")).ok());
  const std::string text = *res.stream->Poll();
  EXPECT_THAT(text, HasSubstr("event: region\n"));
  EXPECT_THAT(text, HasSubstr("\"target\":\"us-east-1\""));
  EXPECT_THAT(text, Not(HasSubstr("a reason only auditors see")));
  EXPECT_THAT(text, Not(HasSubstr("otto")));
}

TEST_F(ApiEventsTest, ActiveFailoversStepsOnConnectionAndWhenTheyChange) {
  Failover f;
  f.id = "fo-1";
  f.kind = FailoverKind::kFailover;
  f.scope = "owner:us-east-1";
  f.from = "us-east-1";
  f.to = "eu-central-1";
  f.phase = FailoverPhase::kPromoting;
  ASSERT_TRUE(store_.CreateFailover(f, Why("failover.propose", "fo-1")).ok());
  StepRecord step;
  step.failover_id = "fo-1";
  step.step_id = "transfer";
  step.section = "promote";
  step.action = "ownership.transfer";
  step.state = StepState::kRunning;
  step.attempt = 1;
  ASSERT_TRUE(store_.PutStep(step).ok());

  ApiResponse res = Open("viewer-secret");
  const std::string first = *res.stream->Poll();
  EXPECT_THAT(first, HasSubstr("event: step\ndata: {\"failover_id\":\"fo-1\""));
  EXPECT_THAT(first, HasSubstr("\"state\":\"running\""));
  EXPECT_EQ(*res.stream->Poll(), "") << "unchanged steps are not sent again";

  step.state = StepState::kSucceeded;
  ASSERT_TRUE(store_.PutStep(step).ok());
  EXPECT_THAT(*res.stream->Poll(), HasSubstr("\"state\":\"succeeded\""));

  // It ends: one last step event with how it ended, then it is no longer followed. A
  // failover that had ended before the client connected is never sent.
  f.phase = FailoverPhase::kCompleted;
  f.version = 1;
  ASSERT_TRUE(store_.UpdateFailover(f, 1, Why("failover.verified", "fo-1")).ok());
  const std::string ended = *res.stream->Poll();
  EXPECT_THAT(ended, HasSubstr("event: failover\n"));
  EXPECT_THAT(ended,
              HasSubstr("event: step\ndata: {\"failover_id\":\"fo-1\",\"phase\":\"completed\""));
  EXPECT_EQ(*res.stream->Poll(), "") << "an ended failover is sent once";
  ApiResponse later = Open("viewer-secret");
  EXPECT_THAT(*later.stream->Poll(), Not(HasSubstr("event: step")));
}

TEST_F(ApiEventsTest, ABadLastEventIdIs400AndAViewerTokenIsNeeded) {
  ApiResponse bad = Open("admin-secret", "/api/v1/events", {{"last-event-id", "seven"}});
  EXPECT_EQ(bad.status, 400);
  EXPECT_THAT(bad.body, HasSubstr("Last-Event-ID"));
  EXPECT_EQ(bad.stream, nullptr);
  EXPECT_EQ(Open("wrong").status, 401);
  EXPECT_EQ(Open("admin-secret", "/api/v1/events?after=-3").status, 400);
}

}  // namespace
}  // namespace icewarden
