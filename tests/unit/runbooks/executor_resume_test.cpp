// RunbookExecutor after a crash: what the journal says decides what runs again.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/unit/runbooks/executor_fixture.h"

namespace icewarden::testing {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

Runbook ResumeRunbook() {
  Runbook rb;
  rb.name = "resume";
  rb.fence = {MakeStep("f1", "fake.idem"), MakeStep("f2", "fake.once")};
  rb.promote = {MakeStep("p1", "fake.once"), MakeStep("p2", "fake.idem"),
                MakeStep("p3", "fake.once")};
  rb.verify = {MakeStep("v1", "fake.idem")};
  return rb;
}

TEST_F(ExecutorTest, ResumeSkipsSucceededSteps) {
  CreateFailover(FailoverPhase::kPromoting);
  Journaled("f1", "fence", "fake.idem", StepState::kSucceeded, 1, 1);
  Journaled("f2", "fence", "fake.once", StepState::kSucceeded, 1, 2);
  Journaled("p1", "promote", "fake.once", StepState::kSucceeded, 1, 3);
  ExecutionReport report = Drive(ResumeRunbook());

  EXPECT_EQ(report.phase, FailoverPhase::kCompleted);
  EXPECT_THAT(log->Runs(), ElementsAre("p2", "p3", "v1"));
  ASSERT_FALSE(report.steps.empty());
  EXPECT_EQ(report.steps[0].step_id, "p1");
  EXPECT_TRUE(report.steps[0].from_journal);
  EXPECT_EQ(Json::parse(Record("p3").result_json)["completion"], 5);
}

TEST_F(ExecutorTest, ResumeRetriesAPendingStepFromItsNextAttempt) {
  CreateFailover(FailoverPhase::kPromoting);
  Journaled("p1", "promote", "fake.once", StepState::kPending, 1);
  Runbook rb = ResumeRunbook();
  rb.promote[0].retry.attempts = 3;
  ExecutionReport report = Drive(rb);
  EXPECT_EQ(report.phase, FailoverPhase::kCompleted);
  EXPECT_EQ(log->RunCount("p1"), 1);
  EXPECT_EQ(Record("p1").attempt, 2);
}

TEST_F(ExecutorTest, InFlightIdempotentStepIsRunAgain) {
  CreateFailover(FailoverPhase::kPromoting);
  Journaled("p1", "promote", "fake.once", StepState::kSucceeded, 1, 1);
  Journaled("p2", "promote", "fake.idem", StepState::kRunning, 1);
  ExecutionReport report = Drive(ResumeRunbook());
  EXPECT_EQ(report.phase, FailoverPhase::kCompleted);
  EXPECT_THAT(log->Runs(), ElementsAre("p2", "p3", "v1"));
  EXPECT_EQ(Record("p2").state, StepState::kSucceeded);
  EXPECT_EQ(Record("p2").attempt, 2);
}

TEST_F(ExecutorTest, InFlightNonIdempotentStepNeedsAttention) {
  CreateFailover(FailoverPhase::kPromoting);
  Journaled("p1", "promote", "fake.once", StepState::kRunning, 1);
  ExecutionReport report = Drive(ResumeRunbook());

  const std::string why =
      "step p1 (action fake.once) was in flight when the executor stopped and fake.once is not "
      "idempotent: check its effect by hand";
  EXPECT_EQ(report.phase, FailoverPhase::kNeedsAttention);
  EXPECT_THAT(report.summary, HasSubstr(why));
  EXPECT_TRUE(log->Runs().empty());
  EXPECT_THAT(transitions->Events(), ElementsAre("in_flight_unknown"));
  EXPECT_EQ(Record("p1").state, StepState::kFailed);
  EXPECT_EQ(Record("p1").reason, why);
  EXPECT_THAT(Stored().last_reason, HasSubstr(why));

  // Nothing more happens until a person looks.
  report = Drive(ResumeRunbook());
  EXPECT_EQ(report.phase, FailoverPhase::kNeedsAttention);
  EXPECT_TRUE(log->Runs().empty());
}

TEST_F(ExecutorTest, InFlightNonIdempotentFenceStepWaitsForOperator) {
  CreateFailover(FailoverPhase::kFencing);
  Journaled("f1", "fence", "fake.idem", StepState::kSucceeded, 1, 1);
  Journaled("f2", "fence", "fake.once", StepState::kRunning, 1);
  ExecutionReport report = Drive(ResumeRunbook());
  EXPECT_EQ(report.phase, FailoverPhase::kFencing);
  EXPECT_THAT(report.summary,
              HasSubstr("waiting for an operator's fencing confirmation: step f2 (action "
                        "fake.once) was in flight when the executor stopped"));
  EXPECT_TRUE(log->Runs().empty());
  EXPECT_EQ(Record("f2").state, StepState::kFailed);
}

TEST_F(ExecutorTest, FailedStepJournaledBeforeTheTransitionStillFailsTheFailover) {
  // The executor stopped after journaling p2's failure but before sending step_failed.
  CreateFailover(FailoverPhase::kPromoting);
  Journaled("f1", "fence", "fake.idem", StepState::kSucceeded, 1, 1);
  Journaled("p1", "promote", "fake.once", StepState::kSucceeded, 1, 2);
  Journaled("p2", "promote", "fake.idem", StepState::kFailed, 1);
  ExecutionReport report = Drive(ResumeRunbook());
  EXPECT_EQ(report.phase, FailoverPhase::kRolledBack);
  EXPECT_THAT(log->Runs(), ElementsAre());
  EXPECT_THAT(log->Undone(), ElementsAre("p1", "f1"));
}

TEST_F(ExecutorTest, ResumedCompensationSkipsUndoneStepsAndStopsOnInFlightUndo) {
  CreateFailover(FailoverPhase::kCompensating);
  Journaled("f1", "fence", "fake.idem", StepState::kSucceeded, 1, 1);
  Journaled("p1", "promote", "fake.once", StepState::kSucceeded, 1, 2);
  Journaled("p2", "promote", "fake.idem", StepState::kSucceeded, 1, 3);
  Journaled("p2.compensate", "compensate", "fake.idem", StepState::kCompensated, 1, 4);
  Journaled("p1.compensate", "compensate", "fake.once", StepState::kCompensating, 1);
  ExecutionReport report = Drive(ResumeRunbook());
  EXPECT_EQ(report.phase, FailoverPhase::kNeedsAttention);
  EXPECT_THAT(report.summary, HasSubstr("step p1.compensate (action fake.once) was in flight"));
  EXPECT_TRUE(log->Undone().empty());
}

TEST_F(ExecutorTest, ResumedCompensationReRunsIdempotentUndo) {
  CreateFailover(FailoverPhase::kCompensating);
  Journaled("f1", "fence", "fake.idem", StepState::kSucceeded, 1, 1);
  Journaled("p2", "promote", "fake.idem", StepState::kSucceeded, 1, 2);
  Journaled("p2.compensate", "compensate", "fake.idem", StepState::kCompensating, 1);
  ExecutionReport report = Drive(ResumeRunbook());
  EXPECT_EQ(report.phase, FailoverPhase::kRolledBack);
  EXPECT_THAT(log->Undone(), ElementsAre("p2", "f1"));
  EXPECT_EQ(Record("p2.compensate").attempt, 2);
}

}  // namespace
}  // namespace icewarden::testing
