#include "state/store_checks.h"

#include <string>
#include <unordered_set>

#include "state/sqlite_records.h"

namespace icewarden {

Status ValidateAudit(const AuditEvent& why) {
  if (!IsValidJson(JsonOrEmptyObject(why.detail_json)))
    return Status::InvalidArgument("audit detail for '" + why.action + "' is not valid JSON");
  return Status::Ok();
}

Status ValidateStep(const StepRecord& step) {
  if (step.failover_id.empty() || step.step_id.empty())
    return Status::InvalidArgument("a step record needs a failover id and a step id");
  if (!IsValidJson(JsonOrEmptyObject(step.result_json))) {
    return Status::InvalidArgument("the result of step " + step.IdempotencyKey() +
                                   " is not valid JSON");
  }
  return Status::Ok();
}

Status ValidateOwnershipChanges(std::span<const OwnershipChange> changes) {
  std::unordered_set<TableIdent, TableIdentHash> seen;
  seen.reserve(changes.size());
  for (const OwnershipChange& c : changes) {
    if (c.table.name.empty() || c.new_owner.empty() || c.expected_epoch < 0) {
      return Status::InvalidArgument("ownership change for '" + c.table.ToString() +
                                     "' needs a table name, a new owner and an epoch >= 0");
    }
    if (!seen.insert(c.table).second) {
      return Status::InvalidArgument("table " + c.table.ToString() +
                                     " appears more than once in one ownership batch");
    }
  }
  return Status::Ok();
}

}  // namespace icewarden
