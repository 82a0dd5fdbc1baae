#include "state/failover_machine.h"

#include <gtest/gtest.h>

#include <map>
#include <tuple>

namespace icewarden {
namespace {

using P = FailoverPhase;
using E = FailoverEvent;
using A = ActorKind;

const std::vector<P> kAllPhases = {
    P::kProposed,  P::kApproved, P::kFencing, P::kFenced,       P::kPromoting,  P::kVerifying,
    P::kCompleted, P::kAborted,  P::kFailed,  P::kCompensating, P::kRolledBack, P::kNeedsAttention};
const std::vector<E> kAllEvents = {
    E::kApprove,           E::kAbort,       E::kBeginFencing,       E::kConfirmFencing,
    E::kBeginPromotion,    E::kPromoted,    E::kVerified,           E::kStepFailed,
    E::kBeginCompensation, E::kCompensated, E::kCompensationFailed, E::kInFlightUnknown};
const std::vector<A> kAllActors = {A::kOperator, A::kApprover, A::kAdmin,
                                   A::kExecutor, A::kWebhook,  A::kProbe};

// A failover that satisfies every precondition a phase can ask for, so that the only thing
// deciding acceptance is (phase, event, actor).
Failover Ready(P phase) {
  Failover f;
  f.id = "fo-1";
  f.from = "us-east-1";
  f.to = "eu-central-1";
  f.proposed_by = "olivia";
  f.phase = phase;
  if (phase != P::kProposed) f.approvals.push_back({"ada", "go", 1});
  if (phase != P::kProposed && phase != P::kApproved && phase != P::kFencing)
    f.fencing = FencingConfirmation{FencingKind::kOperator, "olivia", "powered off", 2};
  return f;
}

FailoverInput Input(E e, A actor) {
  FailoverInput in{
      e, actor, actor == A::kExecutor ? "executor" : "bob", "because", FencingKind::kOperator, 10};
  // Evidence is recorded by the executor; people confirm as operators.
  if (e == E::kConfirmFencing && actor == A::kExecutor)
    in.fencing_kind = FencingKind::kEvidenceSteps;
  return in;
}

// The legal moves, written out independently of the implementation's table.
std::map<std::tuple<P, E, A>, P> LegalMoves() {
  std::map<std::tuple<P, E, A>, P> m;
  for (A a : {A::kApprover, A::kAdmin}) m[{P::kProposed, E::kApprove, a}] = P::kApproved;
  // A re-approval of a failover held before promotion.
  for (A a : {A::kApprover, A::kAdmin}) m[{P::kFenced, E::kApprove, a}] = P::kFenced;
  for (A a : {A::kOperator, A::kApprover, A::kAdmin})
    for (P p : {P::kProposed, P::kApproved, P::kFencing, P::kFenced})
      m[{p, E::kAbort, a}] = P::kAborted;
  // A webhook withdraws the proposal its alert opened, and nothing further along.
  m[{P::kProposed, E::kAbort, A::kWebhook}] = P::kAborted;
  // Approvers confirm fencing; an operator (who may propose and abort) may not.
  for (A a : {A::kApprover, A::kAdmin, A::kExecutor})
    m[{P::kFencing, E::kConfirmFencing, a}] = P::kFenced;
  m[{P::kApproved, E::kBeginFencing, A::kExecutor}] = P::kFencing;
  m[{P::kFenced, E::kBeginPromotion, A::kExecutor}] = P::kPromoting;
  m[{P::kPromoting, E::kPromoted, A::kExecutor}] = P::kVerifying;
  m[{P::kPromoting, E::kStepFailed, A::kExecutor}] = P::kFailed;
  m[{P::kPromoting, E::kInFlightUnknown, A::kExecutor}] = P::kNeedsAttention;
  m[{P::kVerifying, E::kVerified, A::kExecutor}] = P::kCompleted;
  m[{P::kVerifying, E::kStepFailed, A::kExecutor}] = P::kFailed;
  m[{P::kVerifying, E::kInFlightUnknown, A::kExecutor}] = P::kNeedsAttention;
  m[{P::kFailed, E::kBeginCompensation, A::kExecutor}] = P::kCompensating;
  m[{P::kCompensating, E::kCompensated, A::kExecutor}] = P::kRolledBack;
  m[{P::kCompensating, E::kCompensationFailed, A::kExecutor}] = P::kNeedsAttention;
  m[{P::kCompensating, E::kInFlightUnknown, A::kExecutor}] = P::kNeedsAttention;
  return m;
}

TEST(FailoverMachine, EveryPhaseEventActorCombinationIsLegalExactlyWhenListed) {
  const auto legal = LegalMoves();
  FailoverPolicy policy;  // one approval; steps evidence and operator accepted
  int accepted = 0;
  for (P p : kAllPhases)
    for (E e : kAllEvents)
      for (A a : kAllActors) {
        const Failover f = Ready(p);
        const FailoverDecision d = ApplyFailoverEvent(f, Input(e, a), policy);
        auto it = legal.find({p, e, a});
        SCOPED_TRACE(std::string(FailoverPhaseName(p)) + " + " + FailoverEventName(e) + " by " +
                     ActorKindName(a) + " -> " + d.reason);
        if (it == legal.end()) {
          EXPECT_FALSE(d.accepted);
          EXPECT_EQ(d.next.phase, p) << "a refused event must not change the phase";
          EXPECT_EQ(d.reason.rfind("refused: ", 0), 0u);
        } else {
          ++accepted;
          EXPECT_TRUE(d.accepted);
          EXPECT_EQ(d.next.phase, it->second);
          EXPECT_EQ(d.next.last_reason, d.reason);
          EXPECT_NE(d.reason.find(FailoverPhaseName(it->second)), std::string::npos);
        }
      }
  EXPECT_EQ(accepted, static_cast<int>(legal.size()));
}

TEST(FailoverMachine, WebhooksAndProbesNeverApprove) {
  for (A a : {A::kWebhook, A::kProbe, A::kOperator, A::kExecutor}) {
    auto d = ApplyFailoverEvent(Ready(P::kProposed), Input(E::kApprove, a), {});
    EXPECT_FALSE(d.accepted);
    EXPECT_NE(d.reason.find("may not approve"), std::string::npos) << d.reason;
  }
}

TEST(FailoverMachine, NothingReachesPromotingWithoutApprovalAndFencing) {
  Failover no_fence = Ready(P::kFenced);
  no_fence.fencing.reset();
  auto d = ApplyFailoverEvent(no_fence, Input(E::kBeginPromotion, A::kExecutor), {});
  EXPECT_FALSE(d.accepted);
  EXPECT_NE(d.reason.find("no fencing confirmation on record"), std::string::npos) << d.reason;

  Failover no_approval = Ready(P::kFenced);
  no_approval.approvals.clear();
  d = ApplyFailoverEvent(no_approval, Input(E::kBeginPromotion, A::kExecutor), {});
  EXPECT_FALSE(d.accepted);
  EXPECT_NE(d.reason.find("no approval on record"), std::string::npos) << d.reason;

  // A confirmation of a kind the policy no longer accepts does not count either.
  FailoverPolicy evidence_only{false, {FencingKind::kEvidenceSteps}};
  d = ApplyFailoverEvent(Ready(P::kFenced), Input(E::kBeginPromotion, A::kExecutor), evidence_only);
  EXPECT_FALSE(d.accepted);
}

TEST(FailoverMachine, TwoPersonApprovalNeedsTwoDistinctPeopleOtherThanTheProposer) {
  FailoverPolicy policy{true, {FencingKind::kOperator}};
  Failover f = Ready(P::kProposed);

  FailoverInput self{E::kApprove, A::kApprover, "olivia", "mine", FencingKind::kOperator, 5};
  auto d = ApplyFailoverEvent(f, self, policy);
  EXPECT_FALSE(d.accepted);
  EXPECT_NE(d.reason.find("may not approve"), std::string::npos) << d.reason;

  FailoverInput ada{E::kApprove, A::kApprover, "ada", "ok", FencingKind::kOperator, 6};
  d = ApplyFailoverEvent(f, ada, policy);
  ASSERT_TRUE(d.accepted) << d.reason;
  EXPECT_EQ(d.next.phase, P::kProposed);
  ASSERT_EQ(d.next.approvals.size(), 1u);
  EXPECT_EQ(d.next.approvals[0].by, "ada");

  auto again = ApplyFailoverEvent(d.next, ada, policy);
  EXPECT_FALSE(again.accepted);
  EXPECT_NE(again.reason.find("already approved"), std::string::npos) << again.reason;

  FailoverInput bob{E::kApprove, A::kAdmin, "bob", "ok", FencingKind::kOperator, 7};
  auto second = ApplyFailoverEvent(d.next, bob, policy);
  ASSERT_TRUE(second.accepted) << second.reason;
  EXPECT_EQ(second.next.phase, P::kApproved);
  EXPECT_EQ(second.next.approvals.size(), 2u);
}

// Issue 30: whether a first approval still counts is what the caller read from the store's
// timers (FailoverInput::live_approvals), never expires_at against the input's time: the
// second approver's replica may run 30 s ahead of (or behind) the first's.
TEST(FailoverMachine, AnApprovalCountsWhileItsStoreTimerRunsWhateverTheClocksSay) {
  FailoverPolicy policy{true, {FencingKind::kOperator}};
  Failover f = Ready(P::kProposed);
  Approval ada{"ada", "ok", 1'000};
  ada.expires_at = 2'000;
  f.approvals.push_back(ada);

  FailoverInput bob{E::kApprove, A::kAdmin, "bob", "ok", FencingKind::kOperator, 1'500};
  // At 1.5 s, by bob's clock, ada's approval has not "expired", but its timer has run out.
  auto d = ApplyFailoverEvent(f, bob, policy);
  ASSERT_TRUE(d.accepted) << d.reason;
  EXPECT_EQ(d.next.phase, P::kProposed) << "an approval whose timer ran out does not count";

  // At 60 s by bob's clock (far past expires_at) ada's timer still runs: it counts.
  bob.at = 60'000;
  bob.live_approvals = {0};
  d = ApplyFailoverEvent(f, bob, policy);
  ASSERT_TRUE(d.accepted) << d.reason;
  EXPECT_EQ(d.next.phase, P::kApproved);

  // Recorded before approval_ttl existed: never expires.
  f.approvals[0].expires_at = 0;
  bob.live_approvals.clear();
  EXPECT_EQ(ApplyFailoverEvent(f, bob, policy).next.phase, P::kApproved);

  // An approver whose own approval ran out may approve again; one whose approval runs may not.
  FailoverInput ada_again{E::kApprove, A::kApprover, "ada", "ok", FencingKind::kOperator, 1'100};
  f.approvals[0].expires_at = 2'000;
  EXPECT_TRUE(ApplyFailoverEvent(f, ada_again, policy).accepted);
  ada_again.live_approvals = {0};
  EXPECT_FALSE(ApplyFailoverEvent(f, ada_again, policy).accepted);
}

TEST(FailoverMachine, OperatorFencingConfirmationNeedsAReasonAndAnAcceptedKind) {
  FailoverInput by_operator{E::kConfirmFencing,        A::kOperator,           "otto",
                            "old catalog powered off", FencingKind::kOperator, 5};
  auto refused = ApplyFailoverEvent(Ready(P::kFencing), by_operator, {});
  EXPECT_FALSE(refused.accepted) << "confirming fencing is an approver's decision";
  EXPECT_NE(refused.reason.find("may not confirm_fencing"), std::string::npos) << refused.reason;

  FailoverInput no_reason{E::kConfirmFencing, A::kApprover, "bob", "", FencingKind::kOperator, 5};
  auto d = ApplyFailoverEvent(Ready(P::kFencing), no_reason, {});
  EXPECT_FALSE(d.accepted);
  EXPECT_NE(d.reason.find("needs a reason"), std::string::npos) << d.reason;

  FailoverInput ok{E::kConfirmFencing,        A::kApprover,           "bob",
                   "old catalog powered off", FencingKind::kOperator, 5};
  FailoverPolicy evidence_only{false, {FencingKind::kEvidenceSteps}};
  d = ApplyFailoverEvent(Ready(P::kFencing), ok, evidence_only);
  EXPECT_FALSE(d.accepted);
  EXPECT_NE(d.reason.find("not accepted by policy"), std::string::npos) << d.reason;

  d = ApplyFailoverEvent(Ready(P::kFencing), ok, {});
  ASSERT_TRUE(d.accepted) << d.reason;
  ASSERT_TRUE(d.next.fencing.has_value());
  EXPECT_EQ(d.next.fencing->by, "bob");
  EXPECT_EQ(d.next.fencing->reason, "old catalog powered off");
  EXPECT_EQ(d.reason,
            "fo-1 fenced: approver bob confirmed fencing (operator): old catalog powered off");

  // People cannot claim evidence; the executor cannot claim to be an operator.
  FailoverInput claimed{
      E::kConfirmFencing, A::kOperator, "bob", "trust me", FencingKind::kEvidenceSteps, 5};
  EXPECT_FALSE(ApplyFailoverEvent(Ready(P::kFencing), claimed, {}).accepted);
  FailoverInput exec_op{
      E::kConfirmFencing, A::kExecutor, "executor", "x", FencingKind::kOperator, 5};
  EXPECT_FALSE(ApplyFailoverEvent(Ready(P::kFencing), exec_op, {}).accepted);
}

TEST(FailoverMachine, AbortNeedsAReasonAndEndedFailoversRefuseEverything) {
  FailoverInput silent{E::kAbort, A::kOperator, "bob", "", FencingKind::kOperator, 5};
  EXPECT_FALSE(ApplyFailoverEvent(Ready(P::kProposed), silent, {}).accepted);
  auto d = ApplyFailoverEvent(Ready(P::kCompleted), Input(E::kAbort, A::kAdmin), {});
  EXPECT_FALSE(d.accepted);
  EXPECT_NE(d.reason.find("has ended"), std::string::npos) << d.reason;
}

TEST(FailoverMachine, AllowedEventsFollowTheTable) {
  auto events = AllowedEvents(P::kFencing);
  EXPECT_EQ(events, (std::vector<E>{E::kAbort, E::kConfirmFencing}));
  EXPECT_TRUE(AllowedEvents(P::kCompleted).empty());
}

}  // namespace
}  // namespace icewarden
