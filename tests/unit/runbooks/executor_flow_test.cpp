// RunbookExecutor from approval to an end: the phase walk, fencing evidence, failures,
// compensation order, retries, timeouts and parallel groups.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/unit/runbooks/executor_fixture.h"

namespace icewarden::testing {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

Runbook HappyRunbook() {
  Runbook rb;
  rb.name = "happy";
  rb.fence = {MakeStep("f1", "fake.idem"), MakeStep("f2", "fake.once")};
  rb.promote = {MakeStep("p1", "fake.once", Json{{"detail", {{"record", "A"}}}}),
                MakeStep("p2", "fake.idem")};
  rb.verify = {MakeStep("v1", "fake.nocomp")};
  return rb;
}

TEST_F(ExecutorTest, HappyPathCompletesAndJournalsEveryStepOnce) {
  CreateFailover();
  ExecutionReport report = Drive(HappyRunbook());

  EXPECT_EQ(report.phase, FailoverPhase::kCompleted);
  EXPECT_THAT(report.summary, HasSubstr("fo-1 completed: 1 of 1 verify step succeeded"));
  EXPECT_THAT(transitions->Events(), ElementsAre("begin_fencing", "confirm_fencing",
                                                 "begin_promotion", "promoted", "verified"));
  EXPECT_THAT(log->Runs(), ElementsAre("f1", "f2", "p1", "p2", "v1"));

  std::vector<StepRecord> journal = Journal();
  ASSERT_EQ(journal.size(), 5u);
  const std::vector<std::string> sections{"fence", "fence", "promote", "promote", "verify"};
  for (std::size_t i = 0; i < journal.size(); ++i) {
    SCOPED_TRACE(journal[i].step_id);
    EXPECT_EQ(journal[i].state, StepState::kSucceeded);
    EXPECT_EQ(journal[i].attempt, 1);
    EXPECT_EQ(journal[i].section, sections[i]);
    EXPECT_EQ(journal[i].IdempotencyKey(), "fo-1/" + journal[i].step_id);
    EXPECT_THAT(journal[i].reason, HasSubstr("succeeded"));
    EXPECT_NE(journal[i].started_at, 0);
    EXPECT_NE(journal[i].finished_at, 0);
    Json result = Json::parse(journal[i].result_json);
    EXPECT_EQ(result["completion"], static_cast<int>(i + 1));
    EXPECT_TRUE(result.contains("params"));
  }
  EXPECT_EQ(Json::parse(journal[2].result_json)["detail"], (Json{{"record", "A"}}));

  Failover f = Stored();
  ASSERT_TRUE(f.fencing.has_value());
  EXPECT_EQ(f.fencing->kind, FencingKind::kEvidenceSteps);
  EXPECT_EQ(f.fencing->by, "executor");
  EXPECT_THAT(f.fencing->reason, HasSubstr("all 2 fence steps succeeded: f1 (fake.idem)"));

  // Driving an ended failover does nothing.
  ExecutionReport again = Drive(HappyRunbook());
  EXPECT_EQ(again.phase, FailoverPhase::kCompleted);
  EXPECT_THAT(again.summary, HasSubstr("nothing to do"));
  EXPECT_EQ(log->Runs().size(), 5u);
}

TEST_F(ExecutorTest, FenceFailureStopsInFencingAndNeverPromotes) {
  CreateFailover();
  Runbook rb = HappyRunbook();
  rb.fence[1] = Failing("f2");
  ExecutionReport report = Drive(rb);

  EXPECT_EQ(report.phase, FailoverPhase::kFencing);
  EXPECT_THAT(report.summary,
              HasSubstr("fo-1 fencing: waiting for an operator's fencing confirmation: fence "
                        "step f2 (action fake.idem) failed: f2 failed"));
  EXPECT_THAT(log->Runs(), ElementsAre("f1", "f2"));
  EXPECT_EQ(Record("f2").state, StepState::kFailed);
  EXPECT_FALSE(Stored().fencing.has_value());

  // Driving again neither re-runs the fence steps nor promotes.
  report = Drive(rb);
  EXPECT_EQ(report.phase, FailoverPhase::kFencing);
  EXPECT_THAT(log->Runs(), ElementsAre("f1", "f2"));

  // An approver's confirmation lets it go on, without running the fence steps again.
  FailoverInput confirm;
  confirm.event = FailoverEvent::kConfirmFencing;
  confirm.actor_kind = ActorKind::kApprover;
  confirm.actor = "carol";
  confirm.reason = "us-east-1 catalog powered off";
  confirm.fencing_kind = FencingKind::kOperator;
  ASSERT_TRUE(transitions->Apply("fo-1", confirm)->accepted);
  report = Drive(rb);
  EXPECT_EQ(report.phase, FailoverPhase::kCompleted);
  EXPECT_THAT(log->Runs(), ElementsAre("f1", "f2", "p1", "p2", "v1"));
}

TEST_F(ExecutorTest, FenceEvidenceNotAcceptedByPolicyWaitsForOperator) {
  policy.accepted_fencing = {FencingKind::kOperator};
  CreateFailover();
  ExecutionReport report = Drive(HappyRunbook());
  EXPECT_EQ(report.phase, FailoverPhase::kFencing);
  EXPECT_THAT(report.summary, HasSubstr("waiting for an operator's fencing confirmation: policy "
                                        "does not accept fence steps as evidence"));
  EXPECT_THAT(log->Runs(), ElementsAre("f1", "f2"));
}

TEST_F(ExecutorTest, FenceStepThatFailsWithContinueIsNoEvidence) {
  CreateFailover();
  Runbook rb = HappyRunbook();
  rb.fence[0] = Failing("f1");
  rb.fence[0].on_failure = OnFailure::kContinue;
  ExecutionReport report = Drive(rb);
  EXPECT_EQ(report.phase, FailoverPhase::kFencing);
  EXPECT_THAT(report.summary, HasSubstr("not every fence step succeeded"));
  EXPECT_THAT(log->Runs(), ElementsAre("f1", "f2"));
}

TEST_F(ExecutorTest, PromotionWithoutFencingConfirmationIsRefused) {
  CreateFailover(FailoverPhase::kFenced, /*with_fencing=*/false);
  ExecutionReport report = Drive(HappyRunbook());
  EXPECT_EQ(report.phase, FailoverPhase::kFenced);
  EXPECT_THAT(report.summary, HasSubstr("refused: begin_promotion fo-1 (fenced): fo-1 has no "
                                        "fencing confirmation on record"));
  EXPECT_TRUE(log->Runs().empty());
}

TEST_F(ExecutorTest, ProposedFailoverWaitsForApproval) {
  CreateFailover(FailoverPhase::kProposed);
  ExecutionReport report = Drive(HappyRunbook());
  EXPECT_EQ(report.phase, FailoverPhase::kProposed);
  EXPECT_EQ(report.summary, "fo-1 proposed: waiting for approval");
  EXPECT_TRUE(log->Runs().empty());
}

TEST_F(ExecutorTest, UnknownFailoverIsNotFound) {
  transitions = std::make_unique<MachineTransitions>(*store, clock, policy);
  RunbookExecutor executor(*store, registry, *transitions, clock);
  Result<ExecutionReport> report = executor.Drive("fo-404", HappyRunbook(), {});
  ASSERT_FALSE(report.ok());
  EXPECT_EQ(report.status().code(), StatusCode::kNotFound);
}

TEST_F(ExecutorTest, PromoteFailureUndoesInReverseOrderThenRunsCompensateSection) {
  CreateFailover();
  Runbook rb;
  rb.name = "undo";
  rb.fence = {MakeStep("f1", "fake.idem", Json{{"detail", {{"fenced", true}}}})};
  RunbookStep p2 = MakeStep("p2", "fake.nocomp");
  p2.compensate = StepCompensation{"fake.once_nocomp", Json{{"undo", "p2"}}, {}};
  rb.promote = {MakeStep("p1", "fake.once"), p2, MakeStep("p3", "fake.once_nocomp"),
                Failing("p4", "fake.once")};
  rb.promote[3].on_failure = OnFailure::kCompensate;
  rb.verify = {MakeStep("v1", "fake.idem")};
  rb.compensate = {MakeStep("c1", "fake.once"), MakeStep("c2", "fake.idem")};

  ExecutionReport report = Drive(rb);
  EXPECT_EQ(report.phase, FailoverPhase::kRolledBack);
  EXPECT_THAT(transitions->Events(),
              ElementsAre("begin_fencing", "confirm_fencing", "begin_promotion", "step_failed",
                          "begin_compensation", "compensated"));
  // p3's action has no compensation: skipped. p2 by its inline action, p1 and f1 by their
  // actions' own Compensate, newest first; then the compensate section in order.
  EXPECT_THAT(log->Undone(), ElementsAre("p2", "p1", "f1"));
  EXPECT_THAT(log->Runs(), ElementsAre("f1", "p1", "p2", "p3", "p4", "p2.compensate", "c1", "c2"));
  EXPECT_EQ(log->RunCount("v1"), 0);
  EXPECT_THAT(report.summary, HasSubstr("undid 3 steps in reverse order of completion (1 with no "
                                        "compensation skipped) and ran 2 compensate steps"));

  StepRecord skipped = Record("p3.compensate");
  EXPECT_EQ(skipped.section, "compensate");
  EXPECT_EQ(skipped.state, StepState::kCompensated);
  EXPECT_THAT(skipped.reason, HasSubstr("skipped: fake.once_nocomp has no compensation"));
  StepRecord undo_f1 = Record("f1.compensate");
  EXPECT_EQ(undo_f1.state, StepState::kCompensated);
  EXPECT_EQ(undo_f1.action, "fake.idem");
  EXPECT_EQ(Record("p2.compensate").action, "fake.once_nocomp");
  EXPECT_EQ(Record("c1").section, "compensate");
  EXPECT_EQ(Record("c1").state, StepState::kSucceeded);
  // The action's Compensate gets back what its Run returned.
  bool compensated_f1 = false;
  for (const auto& e : log->Events()) {
    if (e.what == "compensate" && e.step_id == "f1.compensate") {
      compensated_f1 = true;
      EXPECT_EQ(e.run_detail, (Json{{"fenced", true}}));
    }
  }
  EXPECT_TRUE(compensated_f1);

  bool noted_failure = false;
  for (const StepOutcome& o : report.steps)
    if (o.step_id == "p4") {
      noted_failure = true;
      EXPECT_EQ(o.state, StepState::kFailed);
      EXPECT_EQ(o.reason, "p4 failed");
    }
  EXPECT_TRUE(noted_failure);
}

TEST_F(ExecutorTest, VerifyFailureIsCompensatedToo) {
  CreateFailover();
  Runbook rb = HappyRunbook();
  rb.verify = {Failing("v1")};
  ExecutionReport report = Drive(rb);
  EXPECT_EQ(report.phase, FailoverPhase::kRolledBack);
  EXPECT_THAT(log->Undone(), ElementsAre("p2", "p1", "f2", "f1"));
}

TEST_F(ExecutorTest, FailedCompensationStopsInNeedsAttention) {
  CreateFailover();
  Runbook rb;
  rb.name = "undo-fails";
  rb.fence = {MakeStep("f1", "fake.idem")};
  rb.promote = {MakeStep("p1", "fake.once", Json{{"compensate", "failed"}}),
                MakeStep("p2", "fake.idem"), Failing("p3")};
  rb.compensate = {MakeStep("c1", "fake.idem")};
  ExecutionReport report = Drive(rb);

  EXPECT_EQ(report.phase, FailoverPhase::kNeedsAttention);
  EXPECT_THAT(report.summary,
              HasSubstr("undoing step p1 (action fake.once) failed: compensating p1.compensate "
                        "failed"));
  // The first failed undo stops the rest: f1 stays fenced and c1 does not run.
  EXPECT_THAT(log->Undone(), ElementsAre("p2", "p1"));
  EXPECT_EQ(log->RunCount("c1"), 0);
  EXPECT_EQ(Record("p1.compensate").state, StepState::kFailed);
  EXPECT_THAT(transitions->Events().back(), "compensation_failed");
}

TEST_F(ExecutorTest, OnFailureContinueRecordsAndGoesOn) {
  CreateFailover();
  Runbook rb = HappyRunbook();
  rb.promote[0] = Failing("p1");
  rb.promote[0].on_failure = OnFailure::kContinue;
  ExecutionReport report = Drive(rb);
  EXPECT_EQ(report.phase, FailoverPhase::kCompleted);
  EXPECT_EQ(Record("p1").state, StepState::kFailed);
  EXPECT_EQ(Record("p1").reason, "p1 failed");
  EXPECT_THAT(log->Runs(), ElementsAre("f1", "f2", "p1", "p2", "v1"));
  EXPECT_THAT(report.transitions[3], HasSubstr("1 of 2 promote steps succeeded"));
}

TEST_F(ExecutorTest, RetriesUntilSuccessWithBackoff) {
  CreateFailover();
  Runbook rb = HappyRunbook();
  rb.promote[1].params = Json{{"outcomes", {"failed", "unknown", "succeeded"}}};
  rb.promote[1].retry.attempts = 4;
  rb.promote[1].retry.initial_backoff = 100ms;
  rb.promote[1].retry.max_backoff = 150ms;
  rb.promote[1].retry.jitter = 0.1;
  ExecutionReport report = Drive(rb);

  EXPECT_EQ(report.phase, FailoverPhase::kCompleted);
  EXPECT_EQ(log->RunCount("p2"), 3);
  EXPECT_EQ(Record("p2").attempt, 3);
  ASSERT_EQ(sleeps.size(), 2u);
  EXPECT_GE(sleeps[0], 90ms);
  EXPECT_LE(sleeps[0], 110ms);
  EXPECT_GE(sleeps[1], 135ms);  // 200ms capped at 150ms, ±10%
  EXPECT_LE(sleeps[1], 165ms);
}

TEST_F(ExecutorTest, RetriesRunOutAndTheStepFails) {
  CreateFailover();
  Runbook rb = HappyRunbook();
  rb.promote[1] = Failing("p2");
  rb.promote[1].retry.attempts = 3;
  ExecutionReport report = Drive(rb);
  EXPECT_EQ(report.phase, FailoverPhase::kRolledBack);
  EXPECT_EQ(log->RunCount("p2"), 3);
  EXPECT_EQ(Record("p2").attempt, 3);
  EXPECT_EQ(Record("p2").reason, "attempt 3: p2 failed");
}

TEST_F(ExecutorTest, UnknownOutcomeOfNonIdempotentActionIsNotRetried) {
  CreateFailover();
  Runbook rb = HappyRunbook();
  rb.promote[0].params = Json{{"outcomes", {"unknown", "succeeded"}}};
  rb.promote[0].retry.attempts = 3;
  ExecutionReport report = Drive(rb);
  EXPECT_EQ(report.phase, FailoverPhase::kRolledBack);
  EXPECT_EQ(log->RunCount("p1"), 1);
  EXPECT_THAT(Record("p1").reason,
              HasSubstr("p1 had an unknown outcome; fake.once is not idempotent, so it is not "
                        "retried and its effect is unknown"));
}

TEST_F(ExecutorTest, ThrowingActionCountsAsUnknown) {
  CreateFailover();
  Runbook rb = HappyRunbook();
  rb.promote[1].params = Json{{"outcomes", {"throw", "succeeded"}}};
  rb.promote[1].retry.attempts = 2;
  ExecutionReport report = Drive(rb);
  EXPECT_EQ(report.phase, FailoverPhase::kCompleted);
  EXPECT_EQ(log->RunCount("p2"), 2);
}

TEST_F(ExecutorTest, TimeoutCancelsSlowActionAndRecordsTimedOut) {
  CreateFailover();
  Runbook rb = HappyRunbook();
  rb.promote[1].params = Json{{"delay_ms", 10000}};
  rb.promote[1].timeout = 50ms;
  const auto start = std::chrono::steady_clock::now();
  ExecutionReport report = Drive(rb);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 3s);

  EXPECT_EQ(report.phase, FailoverPhase::kRolledBack);
  EXPECT_THAT(Record("p2").reason, HasSubstr("timed out after 0.05s"));
  std::vector<ScriptedActionLog::Event> events = log->Events();
  bool cancelled = false;
  for (const auto& e : events)
    if (e.what == "end" && e.step_id == "p2") cancelled = e.outcome == "unknown";
  EXPECT_TRUE(cancelled) << "the action saw its context cancelled";
}

TEST_F(ExecutorTest, ParallelGroupRunsConcurrentlyAndUndoesByCompletion) {
  CreateFailover();
  Runbook rb;
  rb.name = "parallel";
  rb.fence = {MakeStep("f1", "fake.idem")};
  rb.promote = {MakeStep("p1", "fake.idem", Json{{"delay_ms", 300}}),
                MakeStep("p2", "fake.idem", Json{{"delay_ms", 50}}), Failing("p3")};
  rb.promote[0].parallel_group = "dns";
  rb.promote[1].parallel_group = "dns";
  ExecutionReport report = Drive(rb);

  std::vector<std::string> lines = log->Lines();
  ASSERT_GE(lines.size(), 6u);
  // Both started before either finished; p2 finished first.
  EXPECT_THAT(std::vector<std::string>(lines.begin() + 2, lines.begin() + 6),
              ElementsAre(::testing::AnyOf("start p1", "start p2"),
                          ::testing::AnyOf("start p1", "start p2"), "end p2", "end p1"));
  EXPECT_EQ(report.phase, FailoverPhase::kRolledBack);
  // Reverse order of completion: p1 completed after p2, so it is undone first.
  EXPECT_THAT(log->Undone(), ElementsAre("p1", "p2", "f1"));
}

TEST_F(ExecutorTest, ParallelGroupFailsWhenAnyStepFails) {
  CreateFailover();
  Runbook rb = HappyRunbook();
  rb.promote = {MakeStep("p1", "fake.idem"), Failing("p2"), MakeStep("p3", "fake.idem")};
  rb.promote[0].parallel_group = "g";
  rb.promote[1].parallel_group = "g";
  ExecutionReport report = Drive(rb);
  EXPECT_EQ(report.phase, FailoverPhase::kRolledBack);
  EXPECT_EQ(log->RunCount("p1"), 1);
  EXPECT_EQ(log->RunCount("p3"), 0);
  EXPECT_THAT(log->Undone(), ElementsAre("p1", "f2", "f1"));
}

TEST_F(ExecutorTest, UnknownActionKindFailsTheStepWithTheKnownKinds) {
  CreateFailover();
  Runbook rb = HappyRunbook();
  rb.verify = {MakeStep("v1", "dns.nope")};
  ExecutionReport report = Drive(rb);
  EXPECT_EQ(report.phase, FailoverPhase::kRolledBack);
  EXPECT_THAT(Record("v1").reason, HasSubstr("unknown action kind 'dns.nope'; known kinds: "));
}

}  // namespace
}  // namespace icewarden::testing
