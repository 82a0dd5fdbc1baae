// ApplyAndRecordFailoverEvent: one event applied to a stored failover and written down. The
// failover machine decides (ApplyFailoverEvent); an accepted decision is persisted with a
// compare-and-set on the failover's version together with its audit event, a refused one is
// audited alone. Orchestrator::ApplyToFailover and the tests' MachineTransitions both use it,
// so the audit rows the executor's tests see are the ones production writes.
// Thread-safety: as the store.
#pragma once

#include <functional>
#include <string>

#include "state/failover_machine.h"
#include "state/status.h"

namespace icewarden {

class StateStore;

// What the caller records with an accepted transition, in the same write: fields the
// machine does not decide (guard results, the RPO at promotion, accept_data_loss). It must
// not change the phase, approvals or fencing.
using FailoverAmendment = std::function<void(Failover& next)>;

// kNotFound for an unknown id, kConflict if the failover changed concurrently. `now` stamps
// an input without a time.
Result<FailoverDecision> ApplyAndRecordFailoverEvent(StateStore& store, const std::string& id,
                                                     const FailoverInput& input,
                                                     const FailoverPolicy& policy, UnixMillis now,
                                                     const std::string& source,
                                                     const FailoverAmendment& amend = {});

}  // namespace icewarden
