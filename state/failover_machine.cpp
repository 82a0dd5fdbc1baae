#include "state/failover_machine.h"

#include <algorithm>
#include <array>
#include <initializer_list>

namespace icewarden {
namespace {

using P = FailoverPhase;
using E = FailoverEvent;

// Who may send an event, as a bit set over ActorKind.
using Actors = unsigned;
constexpr Actors Bit(ActorKind a) { return 1u << static_cast<unsigned>(a); }
constexpr Actors kPeople =
    Bit(ActorKind::kOperator) | Bit(ActorKind::kApprover) | Bit(ActorKind::kAdmin);
constexpr Actors kApprovers = Bit(ActorKind::kApprover) | Bit(ActorKind::kAdmin);
constexpr Actors kExecutor = Bit(ActorKind::kExecutor);
// Approvers confirm fencing (an operator may not: issue 8's roles), the executor records evidence.
constexpr Actors kFencingConfirmers = kApprovers | kExecutor;
// A webhook may withdraw a proposal (its alert resolved) while nobody has approved it; once a
// person has approved, only people stop it (rule 4: a webhook never overrules an approver).
constexpr Actors kWithdrawers = kPeople | Bit(ActorKind::kWebhook);

enum class Guard {
  kAlways,
  kApprovalCompletes,     // this approval is the last one policy requires
  kApprovalNeedsAnother,  // two-person approval: this is the first of two
  kFencingAccepted,       // the confirmation kind is accepted by policy and well-formed
  kApprovedAndFenced,     // rule 1: approval and fencing confirmation are on record
};

struct FailoverTransition {
  P from;
  E event;
  Actors who;
  Guard guard;
  P to;
};

// The whole failover machine, top to bottom. Anything not listed is refused.
constexpr std::array<FailoverTransition, 20> kTransitions{{
    // from              event                    who                  guard to
    {P::kProposed, E::kApprove, kApprovers, Guard::kApprovalCompletes, P::kApproved},
    {P::kProposed, E::kApprove, kApprovers, Guard::kApprovalNeedsAnother, P::kProposed},
    {P::kProposed, E::kAbort, kWithdrawers, Guard::kAlways, P::kAborted},
    {P::kApproved, E::kAbort, kPeople, Guard::kAlways, P::kAborted},
    {P::kApproved, E::kBeginFencing, kExecutor, Guard::kAlways, P::kFencing},
    {P::kFencing, E::kAbort, kPeople, Guard::kAlways, P::kAborted},
    {P::kFencing, E::kConfirmFencing, kFencingConfirmers, Guard::kFencingAccepted, P::kFenced},
    {P::kFenced, E::kAbort, kPeople, Guard::kAlways, P::kAborted},
    // A re-approval after the last guard check held the promotion (Failover::promotion_hold).
    {P::kFenced, E::kApprove, kApprovers, Guard::kAlways, P::kFenced},
    {P::kFenced, E::kBeginPromotion, kExecutor, Guard::kApprovedAndFenced, P::kPromoting},
    {P::kPromoting, E::kPromoted, kExecutor, Guard::kAlways, P::kVerifying},
    {P::kPromoting, E::kStepFailed, kExecutor, Guard::kAlways, P::kFailed},
    {P::kPromoting, E::kInFlightUnknown, kExecutor, Guard::kAlways, P::kNeedsAttention},
    {P::kVerifying, E::kVerified, kExecutor, Guard::kAlways, P::kCompleted},
    {P::kVerifying, E::kStepFailed, kExecutor, Guard::kAlways, P::kFailed},
    {P::kVerifying, E::kInFlightUnknown, kExecutor, Guard::kAlways, P::kNeedsAttention},
    {P::kFailed, E::kBeginCompensation, kExecutor, Guard::kAlways, P::kCompensating},
    {P::kCompensating, E::kCompensated, kExecutor, Guard::kAlways, P::kRolledBack},
    {P::kCompensating, E::kCompensationFailed, kExecutor, Guard::kAlways, P::kNeedsAttention},
    {P::kCompensating, E::kInFlightUnknown, kExecutor, Guard::kAlways, P::kNeedsAttention},
}};

int RequiredApprovals(const FailoverPolicy& policy) { return policy.two_person_approval ? 2 : 1; }

// An approval is for the plan it was given on: once the plan changes it counts no more.
bool ForCurrentPlan(const Failover& f, const Approval& a) {
  return f.plan.plan_hash.empty() || a.plan_hash == f.plan.plan_hash;
}

// Approvals that still count toward starting the failover: for the current plan and not
// expired, which the caller says (FailoverInput::live_approvals) from the store's timers, so
// that no replica's clock is compared with another's stamp. Expiry bounds how long a first
// approval waits for a second one; it never stops a failover that has started.
bool Live(const Failover& f, const FailoverInput& in, std::size_t i) {
  const Approval& a = f.approvals[i];
  return ForCurrentPlan(f, a) && (a.expires_at == 0 || in.live_approvals.count(i) > 0);
}

int LiveApprovals(const Failover& f, const FailoverInput& in) {
  int n = 0;
  for (std::size_t i = 0; i < f.approvals.size(); ++i) n += Live(f, in, i) ? 1 : 0;
  return n;
}

int PlanApprovals(const Failover& f) {
  return static_cast<int>(std::count_if(f.approvals.begin(), f.approvals.end(),
                                        [&](const Approval& a) { return ForCurrentPlan(f, a); }));
}

bool HasApproved(const Failover& f, const FailoverInput& in) {
  for (std::size_t i = 0; i < f.approvals.size(); ++i)
    if (f.approvals[i].by == in.actor && Live(f, in, i)) return true;
  return false;
}

bool Accepts(const FailoverPolicy& policy, FencingKind kind) {
  return std::find(policy.accepted_fencing.begin(), policy.accepted_fencing.end(), kind) !=
         policy.accepted_fencing.end();
}

// Why an event that matches a row's phase and actor is still refused; empty when allowed.
// Checked before the row's guard so that a refusal says what is wrong with the input.
std::string InputProblem(const Failover& f, const FailoverInput& in, const FailoverPolicy& policy) {
  switch (in.event) {
    case E::kApprove:
      if (in.actor.empty()) return "an approval needs the approver's identity";
      if (f.phase != P::kFenced && HasApproved(f, in))
        return in.actor + " has already approved " + f.id;
      if (policy.two_person_approval && in.actor == f.proposed_by)
        return "two-person approval: " + in.actor + " proposed " + f.id + " and may not approve it";
      return "";
    case E::kAbort:
      if (in.reason.empty()) return "an abort needs a reason";
      return "";
    case E::kConfirmFencing:
      if (!Accepts(policy, in.fencing_kind))
        return std::string("fencing confirmation of kind ") + FencingKindName(in.fencing_kind) +
               " is not accepted by policy";
      if (in.fencing_kind == FencingKind::kOperator) {
        if (in.actor_kind == ActorKind::kExecutor)
          return "an operator confirmation must come from a person";
        if (in.reason.empty()) return "an operator's fencing confirmation needs a reason";
      } else if (in.actor_kind != ActorKind::kExecutor) {
        return "evidence of fencing is recorded by the executor, not by a person";
      }
      return "";
    default:
      return "";
  }
}

bool GuardHolds(Guard g, const Failover& f, const FailoverInput& in, const FailoverPolicy& policy) {
  switch (g) {
    case Guard::kAlways:
      return true;
    case Guard::kApprovalCompletes:
      return LiveApprovals(f, in) + 1 >= RequiredApprovals(policy);
    case Guard::kApprovalNeedsAnother:
      return LiveApprovals(f, in) + 1 < RequiredApprovals(policy);
    case Guard::kFencingAccepted:
      return true;  // InputProblem() has checked the input
    case Guard::kApprovedAndFenced:
      return PlanApprovals(f) >= RequiredApprovals(policy) && f.fencing.has_value() &&
             Accepts(policy, f.fencing->kind) && f.promotion_hold.empty();
  }
  return false;
}

std::string GuardRefusal(Guard g, const Failover& f) {
  if (g == Guard::kApprovedAndFenced) {
    if (f.approvals.empty()) return f.id + " has no approval on record";
    if (!f.fencing) return f.id + " has no fencing confirmation on record";
    if (!f.promotion_hold.empty())
      return f.id + " is held before promotion (" + f.promotion_hold +
             "): an approver must approve again";
    if (PlanApprovals(f) == 0) return f.id + " has no approval of its current plan";
    return f.id + "'s fencing confirmation is not accepted by policy";
  }
  return "guard not met";
}

std::string Describe(const Failover& next, const FailoverInput& in) {
  std::string who =
      std::string(ActorKindName(in.actor_kind)) + (in.actor.empty() ? "" : " " + in.actor);
  std::string s = next.id + " " + FailoverPhaseName(next.phase) + ": ";
  switch (in.event) {
    case E::kApprove:
      s += who + " approved (" + std::to_string(next.approvals.size()) + " approval" +
           (next.approvals.size() == 1 ? "" : "s") + ")";
      break;
    case E::kAbort:
      s += who + " aborted";
      break;
    case E::kConfirmFencing:
      s += who + " confirmed fencing (" + FencingKindName(in.fencing_kind) + ")";
      break;
    default:
      s += std::string(FailoverEventName(in.event)) + " by " + who;
      break;
  }
  if (!in.reason.empty()) s += ": " + in.reason;
  return s;
}

}  // namespace

const char* FailoverEventName(FailoverEvent e) {
  switch (e) {
    case E::kApprove:
      return "approve";
    case E::kAbort:
      return "abort";
    case E::kBeginFencing:
      return "begin_fencing";
    case E::kConfirmFencing:
      return "confirm_fencing";
    case E::kBeginPromotion:
      return "begin_promotion";
    case E::kPromoted:
      return "promoted";
    case E::kVerified:
      return "verified";
    case E::kStepFailed:
      return "step_failed";
    case E::kBeginCompensation:
      return "begin_compensation";
    case E::kCompensated:
      return "compensated";
    case E::kCompensationFailed:
      return "compensation_failed";
    case E::kInFlightUnknown:
      return "in_flight_unknown";
  }
  return "unknown";
}

const char* ActorKindName(ActorKind a) {
  switch (a) {
    case ActorKind::kOperator:
      return "operator";
    case ActorKind::kApprover:
      return "approver";
    case ActorKind::kAdmin:
      return "admin";
    case ActorKind::kExecutor:
      return "executor";
    case ActorKind::kWebhook:
      return "webhook";
    case ActorKind::kProbe:
      return "probe";
  }
  return "unknown";
}

FailoverDecision ApplyFailoverEvent(const Failover& current, const FailoverInput& input,
                                    const FailoverPolicy& policy) {
  FailoverDecision d;
  d.next = current;
  auto refuse = [&](const std::string& why) {
    d.reason = "refused: " + std::string(FailoverEventName(input.event)) + " " + current.id + " (" +
               FailoverPhaseName(current.phase) + "): " + why;
    return d;
  };

  bool phase_matches = false;
  bool actor_matches = false;
  for (const auto& t : kTransitions) {
    if (t.from != current.phase || t.event != input.event) continue;
    phase_matches = true;
    if ((t.who & Bit(input.actor_kind)) == 0) continue;
    actor_matches = true;
    if (std::string problem = InputProblem(current, input, policy); !problem.empty())
      return refuse(problem);
    if (!GuardHolds(t.guard, current, input, policy)) continue;

    d.accepted = true;
    d.next.phase = t.to;
    d.next.updated_at = input.at;
    if (input.event == E::kApprove) {
      Approval a{input.actor, input.reason, input.at};
      a.plan_hash = current.plan.plan_hash;
      a.expires_at = input.approval_expires_at;
      d.next.approvals.push_back(std::move(a));
      // A re-approval answers the hold: the caller has checked the guards again.
      d.next.promotion_hold.clear();
    }
    if (input.event == E::kConfirmFencing) {
      d.next.fencing = FencingConfirmation{input.fencing_kind, input.actor, input.reason, input.at};
      d.next.fencing->evidence_json = input.evidence_json.empty() ? "{}" : input.evidence_json;
    }
    d.reason = Describe(d.next, input);
    d.next.last_reason = d.reason;
    return d;
  }

  if (!phase_matches) {
    if (IsTerminal(current.phase)) return refuse("the failover has ended");
    return refuse(std::string("not allowed from ") + FailoverPhaseName(current.phase));
  }
  if (!actor_matches)
    return refuse(std::string("a ") + ActorKindName(input.actor_kind) + " may not " +
                  FailoverEventName(input.event));
  // The only guard that can fail for a valid input is rule 1 before promotion.
  return refuse(GuardRefusal(Guard::kApprovedAndFenced, current));
}

std::vector<FailoverEvent> AllowedEvents(FailoverPhase current) {
  std::vector<FailoverEvent> out;
  for (const auto& t : kTransitions)
    if (t.from == current && std::find(out.begin(), out.end(), t.event) == out.end())
      out.push_back(t.event);
  return out;
}

}  // namespace icewarden
