#include <utility>

#include "state/sqlite_records.h"
#include "state/sqlite_store_internal.h"

namespace icewarden {
namespace {

// Parameter numbers shared by the insert and the update of a failover.
void BindFailover(SqliteStatement& s, const Failover& f, UnixMillis created_at,
                  UnixMillis updated_at) {
  s.BindText(1, f.id);
  s.BindText(2, FailoverKindName(f.kind));
  s.BindText(3, f.scope);
  s.BindText(4, f.from);
  s.BindText(5, f.to);
  s.BindText(6, f.runbook);
  s.BindText(7, FailoverPhaseName(f.phase));
  s.BindInt(8, IsTerminal(f.phase) ? 0 : 1);
  s.BindText(9, f.proposed_by);
  s.BindText(10, f.reason);
  s.BindText(11, ApprovalsToJson(f.approvals));
  if (f.fencing) {
    s.BindText(12, FencingToJson(*f.fencing));
  } else {
    s.BindNull(12);
  }
  s.BindOptionalText(13, f.accept_data_loss);
  s.BindText(14, f.last_reason);
  s.BindInt(15, created_at);
  s.BindInt(16, updated_at);
  s.BindText(18, FailoverAnnexToJson(f));
}

}  // namespace

// ---- Failovers ----------------------------------------------------------------------------

Status SqliteStore::CreateFailover(const Failover& failover, const AuditEvent& why) {
  std::lock_guard lock(mu_);
  if (failover.id.empty()) return Status::InvalidArgument("a failover needs an id");
  if (Status s = ValidateAudit(why); !s.ok()) return s;
  Result<SqliteStatement*> stmt = Statement(
      "INSERT INTO failovers (id, kind, scope, from_region, to_region, runbook, phase, active,"
      " proposed_by, reason, approvals_json, fencing_json, accept_data_loss, last_reason,"
      " created_at, updated_at, version, annex_json) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8,"
      " ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, 1, ?18) ON CONFLICT (id) DO NOTHING",
      "creating a failover");
  if (!stmt.ok()) return stmt.status();
  SqliteWriteTransaction txn(db_);
  if (Status s = BeginWrite(txn, Durability::kDurable, "create failover " + failover.id); !s.ok()) {
    return s;
  }
  // The store owns updated_at and version; created_at is the caller's when it set one.
  const UnixMillis now = clock_->Now();
  BindFailover(**stmt, failover, failover.created_at != 0 ? failover.created_at : now, now);
  if (Status s = (*stmt)->Run(); !s.ok()) return s;
  if (db_.changes() == 0) return Status::Conflict("failover " + failover.id + " already exists");
  if (Status s = InsertAudit(why); !s.ok()) return s;
  return txn.Commit();
}

Status SqliteStore::UpdateFailover(const Failover& failover, std::int64_t expected_version,
                                   const AuditEvent& why) {
  std::lock_guard lock(mu_);
  if (Status s = ValidateAudit(why); !s.ok()) return s;
  // created_at (?15) is bound but not written: it never changes after creation.
  Result<SqliteStatement*> stmt = Statement(
      "UPDATE failovers SET kind = ?2, scope = ?3, from_region = ?4, to_region = ?5,"
      " runbook = ?6, phase = ?7, active = ?8, proposed_by = ?9, reason = ?10,"
      " approvals_json = ?11, fencing_json = ?12, accept_data_loss = ?13, last_reason = ?14,"
      " updated_at = ?16, version = ?17 + 1, annex_json = ?18 WHERE id = ?1 AND version = ?17",
      "updating a failover");
  if (!stmt.ok()) return stmt.status();
  Result<SqliteStatement*> version =
      Statement("SELECT version FROM failovers WHERE id = ?1", "reading a failover's version");
  if (!version.ok()) return version.status();

  SqliteWriteTransaction txn(db_);
  if (Status s = BeginWrite(txn, Durability::kDurable, "update failover " + failover.id); !s.ok()) {
    return s;
  }
  BindFailover(**stmt, failover, failover.created_at, clock_->Now());
  (*stmt)->BindInt(17, expected_version);
  if (Status s = (*stmt)->Run(); !s.ok()) return s;
  if (db_.changes() == 0) {
    ResetOnExit reset(*version);
    (*version)->BindText(1, failover.id);
    Result<bool> row = (*version)->Step();
    if (!row.ok()) return row.status();
    if (!*row) return Status::NotFound("no failover " + failover.id);
    return Status::Conflict("failover " + failover.id + " is at version " +
                            std::to_string((*version)->ColumnInt(0)) + ", expected " +
                            std::to_string(expected_version) + ": someone changed it first");
  }
  if (Status s = InsertAudit(why); !s.ok()) return s;
  return txn.Commit();
}

Result<std::vector<Failover>> SqliteStore::QueryFailovers(const std::string& sql,
                                                          std::int64_t limit) {
  Result<SqliteStatement*> stmt = Statement(sql, "listing failovers");
  if (!stmt.ok()) return stmt.status();
  ResetOnExit reset(*stmt);
  (*stmt)->BindInt(1, limit);
  std::vector<Failover> out;
  for (;;) {
    Result<bool> row = (*stmt)->Step();
    if (!row.ok()) return row.status();
    if (!*row) return out;
    Result<Failover> f = ReadFailover(**stmt);
    if (!f.ok()) return f.status();
    out.push_back(std::move(f).value());
  }
}

Result<std::optional<Failover>> SqliteStore::GetFailover(const std::string& id) {
  std::lock_guard lock(mu_);
  Result<SqliteStatement*> stmt =
      Statement(std::string("SELECT ") + kFailoverColumns + " FROM failovers WHERE id = ?1",
                "reading a failover");
  if (!stmt.ok()) return stmt.status();
  ResetOnExit reset(*stmt);
  (*stmt)->BindText(1, id);
  Result<bool> row = (*stmt)->Step();
  if (!row.ok()) return row.status();
  if (!*row) return std::optional<Failover>();
  Result<Failover> f = ReadFailover(**stmt);
  if (!f.ok()) return f.status();
  return std::optional<Failover>(std::move(f).value());
}

Result<std::vector<Failover>> SqliteStore::ListFailovers(std::size_t limit) {
  std::lock_guard lock(mu_);
  return QueryFailovers(std::string("SELECT ") + kFailoverColumns +
                            " FROM failovers ORDER BY created_at DESC, seq DESC LIMIT ?1",
                        SqlLimit(limit));
}

Result<std::vector<Failover>> SqliteStore::ListActiveFailovers() {
  std::lock_guard lock(mu_);
  return QueryFailovers(std::string("SELECT ") + kFailoverColumns +
                            " FROM failovers WHERE active = 1 ORDER BY created_at, seq LIMIT ?1",
                        -1);
}

// ---- Step journal -------------------------------------------------------------------------

Status SqliteStore::PutStep(const StepRecord& step) {
  std::lock_guard lock(mu_);
  if (Status s = ValidateStep(step); !s.ok()) return s;
  Result<SqliteStatement*> exists =
      Statement("SELECT 1 FROM failovers WHERE id = ?1", "looking up a step's failover");
  if (!exists.ok()) return exists.status();
  // recorded_order is computed only when the row is new: an upsert keeps the position the
  // step was first journaled at.
  Result<SqliteStatement*> upsert = Statement(
      "INSERT INTO steps (failover_id, step_id, recorded_order, section, action, state,"
      " attempt, reason, result_json, started_at, finished_at) VALUES (?1, ?2,"
      " (SELECT COALESCE(MAX(recorded_order), 0) + 1 FROM steps WHERE failover_id = ?1),"
      " ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10) ON CONFLICT (failover_id, step_id) DO UPDATE SET"
      " section = excluded.section, action = excluded.action, state = excluded.state,"
      " attempt = excluded.attempt, reason = excluded.reason,"
      " result_json = excluded.result_json, started_at = excluded.started_at,"
      " finished_at = excluded.finished_at",
      "journaling a step");
  if (!upsert.ok()) return upsert.status();

  SqliteWriteTransaction txn(db_);
  if (Status s = BeginWrite(txn, Durability::kDurable, "journal step " + step.IdempotencyKey());
      !s.ok()) {
    return s;
  }
  {
    ResetOnExit reset(*exists);
    (*exists)->BindText(1, step.failover_id);
    Result<bool> row = (*exists)->Step();
    if (!row.ok()) return row.status();
    if (!*row) {
      return Status::NotFound("cannot journal step " + step.step_id + ": no failover " +
                              step.failover_id);
    }
  }
  SqliteStatement& s = **upsert;
  s.BindText(1, step.failover_id);
  s.BindText(2, step.step_id);
  s.BindText(3, step.section);
  s.BindText(4, step.action);
  s.BindText(5, StepStateName(step.state));
  s.BindInt(6, step.attempt);
  s.BindText(7, step.reason);
  s.BindText(8, JsonOrEmptyObject(step.result_json));
  s.BindInt(9, step.started_at);
  s.BindInt(10, step.finished_at);
  if (Status st = s.Run(); !st.ok()) return st;
  return txn.Commit();
}

Result<std::vector<StepRecord>> SqliteStore::ListSteps(const std::string& failover_id) {
  std::lock_guard lock(mu_);
  Result<SqliteStatement*> stmt =
      Statement(std::string("SELECT ") + kStepColumns +
                    " FROM steps WHERE failover_id = ?1 ORDER BY recorded_order",
                "listing a failover's steps");
  if (!stmt.ok()) return stmt.status();
  ResetOnExit reset(*stmt);
  (*stmt)->BindText(1, failover_id);
  std::vector<StepRecord> out;
  for (;;) {
    Result<bool> row = (*stmt)->Step();
    if (!row.ok()) return row.status();
    if (!*row) return out;
    Result<StepRecord> step = ReadStep(**stmt);
    if (!step.ok()) return step.status();
    out.push_back(std::move(step).value());
  }
}

}  // namespace icewarden
