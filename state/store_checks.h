// The input checks of the StateStore contract that every backend makes before it writes, so
// that the SQLite and etcd stores refuse the same input with the same words.
// Thread-safety: plain functions.
#pragma once

#include <span>

#include "state/status.h"
#include "state/types.h"

namespace icewarden {

// kInvalidArgument when the event cannot be stored as given (detail_json is not JSON).
Status ValidateAudit(const AuditEvent& why);
// kInvalidArgument without a failover id and a step id, or with a result that is not JSON.
Status ValidateStep(const StepRecord& step);
// kInvalidArgument for a change without a table name, a new owner or an epoch >= 0, and for
// a table that appears twice in the batch.
Status ValidateOwnershipChanges(std::span<const OwnershipChange> changes);

}  // namespace icewarden
