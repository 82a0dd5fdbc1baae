// MachineTransitions: a FailoverTransitions for tests and helpers that applies and records
// events with ApplyAndRecordFailoverEvent (state/failover_transition.h), exactly as
// Orchestrator::ApplyToFailover does, without depending on orchestrator/; it also keeps the
// list of events applied.
// Thread-safety: as the store.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "runbooks/executor.h"

namespace icewarden::testing {

class MachineTransitions final : public FailoverTransitions {
 public:
  MachineTransitions(StateStore& store, std::shared_ptr<Clock> clock, FailoverPolicy policy = {});
  Result<FailoverDecision> Apply(const std::string& failover_id,
                                 const FailoverInput& input) override;
  // Every event applied, accepted or not: "begin_fencing", "refused:begin_promotion".
  std::vector<std::string> Events() const;

 private:
  StateStore& store_;
  std::shared_ptr<Clock> clock_;
  FailoverPolicy policy_;
  mutable std::mutex mu_;
  std::vector<std::string> events_;
};

// A failover in `phase` (approved by default) with the usual test regions and one approval,
// created in the store; past fencing it also carries an operator's fencing confirmation
// unless `with_fencing` is false. Returns the created record (version 1).
Result<Failover> CreateTestFailover(StateStore& store, const std::string& id,
                                    FailoverPhase phase = FailoverPhase::kApproved,
                                    bool with_fencing = true);

}  // namespace icewarden::testing
