// How the domain records of types.h map to rows of the SQLite schema (sqlite_schema.cpp):
// the column lists each SELECT uses, the readers that turn a row back into a record, and
// the JSON encoding of the nested parts of a failover (approvals, fencing confirmation).
// Keeping column order and readers side by side is what keeps them from drifting apart.
//
// Thread-safety: stateless functions.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "state/sqlite_db.h"
#include "state/status.h"
#include "state/types.h"

namespace icewarden {

// Column lists, in the order the matching Read* function expects them.
inline constexpr const char* kRegionColumns =
    "name, health, fenced, maintenance, consecutive_failures, consecutive_successes, reason, "
    "since";
inline constexpr const char* kOwnershipColumns =
    "namespace_key, name, owner, epoch, updated_at, failover_id";
inline constexpr const char* kFailoverColumns =
    "id, kind, scope, from_region, to_region, runbook, phase, proposed_by, reason, "
    "approvals_json, fencing_json, accept_data_loss, last_reason, created_at, updated_at, "
    "version, annex_json";
inline constexpr const char* kStepColumns =
    "failover_id, step_id, section, action, state, attempt, reason, result_json, started_at, "
    "finished_at";
inline constexpr const char* kAuditColumns =
    "seq, at, actor, source, action, target, reason, detail_json, prev_sha256, sha256";

// Each reader decodes the current row of `row`. An enum name or JSON document the build
// does not understand is kInternal: the schema's CHECKs and this code disagree, or the file
// was edited by hand.
Result<Region> ReadRegion(const SqliteStatement& row);
Ownership ReadOwnership(const SqliteStatement& row);
Result<Failover> ReadFailover(const SqliteStatement& row);
Result<StepRecord> ReadStep(const SqliteStatement& row);
AuditEvent ReadAudit(const SqliteStatement& row);

std::string ApprovalsToJson(const std::vector<Approval>& approvals);
std::string FencingToJson(const FencingConfirmation& fencing);
// The columns added after schema 1 (annex_json).
std::string FailoverAnnexToJson(const Failover& failover);

// "" stands for "{}" in result_json and detail_json: an empty document is what a caller
// that has nothing to say naturally passes.
std::string_view JsonOrEmptyObject(std::string_view json);
bool IsValidJson(std::string_view json);

}  // namespace icewarden
