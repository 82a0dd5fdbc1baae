// RunbookExecutor and Action::Capture: the state a step is about to change is read once,
// journaled before any attempt, and handed to every attempt, including one resumed after a
// crash (whose own reading would see the crashed attempt's effect).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/unit/runbooks/executor_fixture.h"

namespace icewarden::testing {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

Runbook CaptureRunbook(Json p1_params) {
  Runbook rb;
  rb.name = "capture";
  rb.fence = {MakeStep("f1", "fake.idem")};
  rb.promote = {MakeStep("p1", "fake.idem", std::move(p1_params)), MakeStep("p2", "fake.idem")};
  return rb;
}

std::vector<ScriptedActionLog::Event> EventsOf(const ScriptedActionLog& log,
                                               const std::string& what, const std::string& step) {
  std::vector<ScriptedActionLog::Event> out;
  for (const auto& e : log.Events())
    if (e.what == what && e.step_id == step) out.push_back(e);
  return out;
}

TEST_F(ExecutorTest, CaptureIsTakenOnceAndEveryAttemptSeesIt) {
  CreateFailover();
  Runbook rb = CaptureRunbook(
      Json{{"capture", "cname was catalog-a"}, {"outcomes", {"unknown", "succeeded"}}});
  rb.promote[0].retry.attempts = 2;
  ExecutionReport report = Drive(rb);
  ASSERT_EQ(report.phase, FailoverPhase::kCompleted);

  const std::string first = Json{{"captured", "cname was catalog-a"}, {"call", 1}}.dump();
  ASSERT_EQ(EventsOf(*log, "capture", "p1").size(), 1u);
  auto starts = EventsOf(*log, "start", "p1");
  ASSERT_EQ(starts.size(), 2u);
  EXPECT_EQ(starts[0].before, first);
  EXPECT_EQ(starts[1].before, first);
  EXPECT_EQ(Json::parse(Record("p1").result_json)["before"], Json::parse(first));
  // A step whose action captures nothing gets nothing.
  EXPECT_EQ(EventsOf(*log, "start", "p2").at(0).before, "");
  EXPECT_FALSE(Json::parse(Record("p2").result_json).contains("before"));
}

TEST_F(ExecutorTest, ResumedInFlightStepRunsWithTheCaptureOfItsFirstAttempt) {
  CreateFailover(FailoverPhase::kPromoting);
  const Json journaled{{"captured", "from before the crash"}, {"call", 1}};
  Journaled("f1", "fence", "fake.idem", StepState::kSucceeded, 1, 1);
  Journaled("p1", "promote", "fake.idem", StepState::kRunning, 1, 0, journaled);
  ExecutionReport report = Drive(CaptureRunbook(Json{{"capture", "after the crash"}}));
  ASSERT_EQ(report.phase, FailoverPhase::kCompleted);

  EXPECT_TRUE(EventsOf(*log, "capture", "p1").empty());
  auto starts = EventsOf(*log, "start", "p1");
  ASSERT_EQ(starts.size(), 1u);
  EXPECT_EQ(Json::parse(starts[0].before), journaled);
  EXPECT_EQ(Json::parse(Record("p1").result_json)["before"], journaled);
}

TEST_F(ExecutorTest, JournalSaysRunningWithTheCaptureBeforeTheActionRuns) {
  // The running record is what a crash leaves: it must already hold the capture.
  CreateFailover();
  Runbook rb = CaptureRunbook(Json{{"capture", "v1"}, {"delay_ms", 200}});
  std::optional<StepRecord> seen;
  std::thread watcher([&] {
    for (int i = 0; i < 400 && !seen; ++i) {
      auto steps = store->ListSteps("fo-1");
      if (steps.ok()) {
        for (const auto& s : *steps)
          if (s.step_id == "p1" && s.state == StepState::kRunning) seen = s;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  });
  ExecutionReport report = Drive(rb);
  watcher.join();
  ASSERT_EQ(report.phase, FailoverPhase::kCompleted);
  ASSERT_TRUE(seen.has_value());
  EXPECT_EQ(Json::parse(seen->result_json)["before"]["captured"], "v1");
}

TEST_F(ExecutorTest, FailedCaptureFailsTheAttemptWithoutRunningIt) {
  CreateFailover();
  ExecutionReport report = Drive(CaptureRunbook(Json{{"capture", "error"}}));
  EXPECT_EQ(report.phase, FailoverPhase::kRolledBack);
  EXPECT_EQ(log->RunCount("p1"), 0);
  StepRecord p1 = Record("p1");
  EXPECT_EQ(p1.state, StepState::kFailed);
  EXPECT_THAT(p1.reason, HasSubstr("could not record the state before acting: "
                                   "the fake could not read the state"));
}

}  // namespace
}  // namespace icewarden::testing
