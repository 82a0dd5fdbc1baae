#include "tests/fakes/machine_transitions.h"

#include <nlohmann/json.hpp>

#include "state/failover_transition.h"

namespace icewarden::testing {

MachineTransitions::MachineTransitions(StateStore& store, std::shared_ptr<Clock> clock,
                                       FailoverPolicy policy)
    : store_(store), clock_(std::move(clock)), policy_(std::move(policy)) {}

Result<FailoverDecision> MachineTransitions::Apply(const std::string& failover_id,
                                                   const FailoverInput& input) {
  Result<FailoverDecision> decision =
      ApplyAndRecordFailoverEvent(store_, failover_id, input, policy_, clock_->Now(), "executor");
  if (decision.ok()) {
    std::lock_guard lock(mu_);
    events_.push_back(std::string(decision->accepted ? "" : "refused:") +
                      FailoverEventName(input.event));
  }
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
