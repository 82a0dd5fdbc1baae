// The failover state machine:
//
//   proposed ─approve─► approved ─► fencing ─confirm─► fenced ─► promoting ─► verifying ─►
//   completed
//       │                  │           │                              │            │
//       └──── abort ───────┴── abort ──┘                              └─► failed ◄─┘
//                                                                            │
//                                    compensating ◄──────────────────────────┘
//                                         └─► rolled_back | needs_attention
//
// Pure: ApplyFailoverEvent() computes the next Failover and a reason, or refuses with a
// reason; the caller persists the result (StateStore::UpdateFailover, compare-and-set on
// version) before anything acts on it. The transition table in the .cpp file is the one
// place the rules live. Guards that need the outside world (target healthy, lag, cooldown,
// leadership) are checked by the orchestrator before it sends the event; the rules that
// depend only on the failover itself (rule 1 and rule 4 of DESIGN.md) are checked here.
// Thread-safety: stateless functions.
#pragma once

#include <cstddef>
#include <set>
#include <string>
#include <vector>

#include "state/types.h"

namespace icewarden {

enum class FailoverEvent {
  kApprove,             // a person with the approver role approves
  kAbort,               // a person stops it before anything irreversible
  kBeginFencing,        // the executor starts the fence steps
  kConfirmFencing,      // evidence (executor) or an operator's confirmation with a reason
  kBeginPromotion,      // the executor starts the promote steps
  kPromoted,            // every promote step succeeded
  kVerified,            // every verify step succeeded
  kStepFailed,          // a promote or verify step failed
  kBeginCompensation,   // the executor starts compensating
  kCompensated,         // every compensation succeeded
  kCompensationFailed,  // a compensation failed: a person must look
  kInFlightUnknown,     // after a crash, a non-idempotent step's outcome is unknown
};
const char* FailoverEventName(FailoverEvent e);

// Who sends an event. Rule 4: webhooks and probes may propose, never approve.
enum class ActorKind { kOperator, kApprover, kAdmin, kExecutor, kWebhook, kProbe };
const char* ActorKindName(ActorKind a);

struct FailoverInput {
  FailoverEvent event{};
  ActorKind actor_kind = ActorKind::kOperator;
  std::string actor{};   // identity: token name, "executor", "webhook:alertmanager"
  std::string reason{};  // required for approve, abort and operator fencing confirmations
  FencingKind fencing_kind = FencingKind::kOperator;  // for kConfirmFencing
  UnixMillis at = 0;
  std::string evidence_json{};  // for kConfirmFencing: what was observed (a JSON object)
  // For kApprove: recorded on the new approval for people (Approval::expires_at); 0: never
  // expires. Never compared with a clock here: see live_approvals.
  UnixMillis approval_expires_at = 0;
  // For kApprove: which of current.approvals (by index) still count toward starting the
  // failover, as the caller learnt from the store's timers (issue 30: the expiry is measured by
  // the store's one clock, not by comparing expires_at with this replica's). An approval with
  // expires_at 0 (recorded before approval_ttl existed) counts whether listed or not.
  std::set<std::size_t> live_approvals{};
};

struct FailoverPolicy {
  bool two_person_approval = false;
  std::vector<FencingKind> accepted_fencing{FencingKind::kEvidenceSteps, FencingKind::kOperator};
};

struct FailoverDecision {
  bool accepted = false;  // false: refused; `next` equals the input
  Failover next;
  // "fo-1 fenced: operator alice confirmed fencing: us-east-1 catalog powered off"
  std::string reason{};
};

// The store timer that measures one approval's approval_ttl (StateStore::StartTimer), started
// before the approval is written: an approval is named by its approver and its `at`, which
// stay put when other approvals land beside it.
inline std::string ApprovalTimerName(const std::string& failover_id, const std::string& by,
                                     UnixMillis at) {
  return "approval/" + failover_id + "/" + by + "@" + std::to_string(at);
}
inline std::string ApprovalTimerPrefix(const std::string& failover_id) {
  return "approval/" + failover_id + "/";
}

FailoverDecision ApplyFailoverEvent(const Failover& current, const FailoverInput& input,
                                    const FailoverPolicy& policy);

// The events that `current` would accept from someone, for help texts and the API.
std::vector<FailoverEvent> AllowedEvents(FailoverPhase current);

}  // namespace icewarden
