#include "tests/fakes/machine_transitions.h"

#include <nlohmann/json.hpp>

namespace icewarden::testing {

MachineTransitions::MachineTransitions(StateStore& store, std::shared_ptr<Clock> clock,
                                       FailoverPolicy policy)
    : store_(store), clock_(std::move(clock)), policy_(std::move(policy)) {}

Result<FailoverDecision> MachineTransitions::Apply(const std::string& failover_id,
                                                   const FailoverInput& input) {
  Result<std::optional<Failover>> found = store_.GetFailover(failover_id);
  if (!found.ok()) return found.status();
  if (!found->has_value()) return Status::NotFound("no failover " + failover_id);
  const Failover& current = **found;
  FailoverInput timed = input;
  if (timed.at == 0) timed.at = clock_->Now();
  FailoverDecision decision = ApplyFailoverEvent(current, timed, policy_);
  {
    std::lock_guard lock(mu_);
    events_.push_back(std::string(decision.accepted ? "" : "refused:") +
                      FailoverEventName(input.event));
  }
  AuditEvent why;
  why.at = timed.at;
  why.actor = input.actor.empty() ? ActorKindName(input.actor_kind) : input.actor;
  why.source = "internal";
  why.action = std::string("failover.") + FailoverEventName(input.event) +
               (decision.accepted ? "" : ".refused");
  why.target = failover_id;
  why.reason = decision.reason;
  if (!decision.accepted) {
    if (Status s = store_.AppendAudit(why); !s.ok()) return s;
    return decision;
  }
  if (Status s = store_.UpdateFailover(decision.next, current.version, why); !s.ok()) return s;
  decision.next.version = current.version + 1;
  return decision;
}

std::vector<std::string> MachineTransitions::Events() const {
  std::lock_guard lock(mu_);
  return events_;
}

Result<Failover> CreateTestFailover(StateStore& store, const std::string& id, FailoverPhase phase,
                                    bool with_fencing) {
  Failover f;
  f.id = id;
  f.scope = "namespace:sales.*";
  f.from = "us-east-1";
  f.to = "us-west-2";
  f.runbook = "test";
  f.phase = phase;
  f.proposed_by = "alice";
  f.reason = "us-east-1 catalog unreachable";
  if (phase != FailoverPhase::kProposed) f.approvals.push_back(Approval{"bob", "go", 1});
  const bool past_fencing = phase != FailoverPhase::kProposed &&
                            phase != FailoverPhase::kApproved && phase != FailoverPhase::kFencing;
  if (past_fencing && with_fencing) {
    f.fencing = FencingConfirmation{FencingKind::kOperator, "carol", "old catalog powered off", 1};
  }
  AuditEvent why;
  why.actor = "alice";
  why.source = "test";
  why.action = "failover.propose";
  why.target = id;
  why.reason = "test";
  if (Status s = store.CreateFailover(f, why); !s.ok()) return s;
  f.version = 1;
  return f;
}

}  // namespace icewarden::testing
