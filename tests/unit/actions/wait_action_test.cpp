// wait: fixed waits, deadlines shorter than the wait, cancellation, and polling an HTTP
// condition.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <thread>

#include "tests/fakes/recording_http_server.h"
#include "tests/unit/actions/action_test_support.h"

namespace icewarden::testing {
namespace {

using namespace std::chrono_literals;
using ::testing::HasSubstr;
using ::testing::StartsWith;
using json = nlohmann::json;
using Outcome = ActionResult::Outcome;
using SteadyClock = std::chrono::steady_clock;

class WaitActionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(registerControlActions(registry_, TestActionEnv()).ok());
    wait_ = registry_.FindMutable("wait");
    ASSERT_NE(wait_, nullptr);
  }
  ActionRegistry registry_;
  Action* wait_ = nullptr;
};

TEST_F(WaitActionTest, WaitsTheWholeDuration) {
  const auto started = SteadyClock::now();
  auto r = wait_->Run({{"duration", "150ms"}}, TestContext(5s));
  EXPECT_EQ(r.outcome, Outcome::kSucceeded) << r.reason;
  EXPECT_EQ(r.reason, "waited 150ms");
  EXPECT_GE(SteadyClock::now() - started, 150ms);
}

TEST_F(WaitActionTest, FailsAtOnceWhenTheStepTimeoutIsShorterThanTheWait) {
  const auto started = SteadyClock::now();
  auto r = wait_->Run({{"duration", "30s"}}, TestContext(1s));
  EXPECT_LT(SteadyClock::now() - started, 100ms);
  EXPECT_EQ(r.outcome, Outcome::kFailed);
  EXPECT_THAT(r.reason, StartsWith("step timeout shorter than wait: asked to wait 30s with "));
}

TEST_F(WaitActionTest, CancellationEndsTheWaitPromptly) {
  Cancellation cancel;
  std::thread canceller([&] {
    std::this_thread::sleep_for(100ms);
    cancel.Cancel();
  });
  const auto started = SteadyClock::now();
  auto r = wait_->Run({{"duration", "10s"}}, TestContext(20s, &cancel));
  canceller.join();
  EXPECT_LT(SteadyClock::now() - started, 500ms);
  EXPECT_EQ(r.outcome, Outcome::kFailed);
  EXPECT_THAT(r.reason, StartsWith("wait cancelled after "));
  EXPECT_THAT(r.reason, HasSubstr(" of 10s"));
}

TEST_F(WaitActionTest, UntilPollsUntilTheEndpointAnswersAsExpected) {
  RecordingHttpServer server;
  server.RespondFirst(2, 503);
  auto r = wait_->Run({{"until", {{"url", server.Url("/ready")}, {"expect_status", 200}}},
                       {"poll_interval", "50ms"}},
                      TestContext(5s));
  EXPECT_EQ(r.outcome, Outcome::kSucceeded) << r.reason;
  EXPECT_EQ(server.RequestCount(), 3u);
  EXPECT_EQ(server.Requests()[0].method, "GET");
  EXPECT_EQ(json::parse(r.detail_json)["polls"], 3);
}

TEST_F(WaitActionTest, UntilGivesUpAfterItsDuration) {
  RecordingHttpServer server;
  server.Respond(503);
  const auto started = SteadyClock::now();
  auto r = wait_->Run({{"until", {{"url", server.Url("/ready")}}},
                       {"poll_interval", "50ms"},
                       {"duration", "300ms"}},
                      TestContext(5s));
  EXPECT_LT(SteadyClock::now() - started, 1s);
  EXPECT_EQ(r.outcome, Outcome::kFailed);
  EXPECT_THAT(r.reason, StartsWith("GET " + server.Url("/ready") + " did not return 2xx within "));
  EXPECT_THAT(r.reason, HasSubstr("last answer 503"));
}

}  // namespace
}  // namespace icewarden::testing
