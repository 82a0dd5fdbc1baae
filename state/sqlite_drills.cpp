// Drill runs in the SQLite store (schema migration 5): runs, their step journal, notes.
#include <utility>

#include "state/sqlite_store_internal.h"

namespace icewarden {
namespace {

constexpr const char* kRunColumns =
    "id, drill, mode, phase, trigger, scheduled_for, verdict, verdict_reason, failing_step,"
    " failover_id, failback_id, scope, from_region, to_region, result_json, started_at,"
    " finished_at, version";

void BindRun(SqliteStatement& s, const DrillRun& r) {
  s.BindText(1, r.id);
  s.BindText(2, r.drill);
  s.BindText(3, r.mode);
  s.BindText(4, DrillPhaseName(r.phase));
  s.BindText(5, r.trigger);
  s.BindInt(6, r.scheduled_for);
  s.BindText(7, r.verdict);
  s.BindText(8, r.verdict_reason);
  s.BindText(9, r.failing_step);
  s.BindText(10, r.failover_id);
  s.BindText(11, r.failback_id);
  s.BindText(12, r.scope);
  s.BindText(13, r.from);
  s.BindText(14, r.to);
  s.BindText(15, r.result_json.empty() ? "{}" : r.result_json);
  s.BindInt(16, r.started_at);
  s.BindInt(17, r.finished_at);
}

DrillRun ReadRun(const SqliteStatement& s) {
  DrillRun r;
  r.id = s.ColumnText(0);
  r.drill = s.ColumnText(1);
  r.mode = s.ColumnText(2);
  r.phase = ParseDrillPhase(s.ColumnText(3)).value_or(DrillPhase::kFinished);
  r.trigger = s.ColumnText(4);
  r.scheduled_for = s.ColumnInt(5);
  r.verdict = s.ColumnText(6);
  r.verdict_reason = s.ColumnText(7);
  r.failing_step = s.ColumnText(8);
  r.failover_id = s.ColumnText(9);
  r.failback_id = s.ColumnText(10);
  r.scope = s.ColumnText(11);
  r.from = s.ColumnText(12);
  r.to = s.ColumnText(13);
  r.result_json = s.ColumnText(14);
  r.started_at = s.ColumnInt(15);
  r.finished_at = s.ColumnInt(16);
  r.version = s.ColumnInt(17);
  return r;
}

constexpr const char* kDrillStepColumns =
    "run_id, step_id, ordinal, section, action, state, attempts, error, params_json,"
    " before_json, detail_json, cleanup, cleanup_reason, started_at, finished_at";

DrillStep ReadDrillStep(const SqliteStatement& s) {
  DrillStep d;
  d.run_id = s.ColumnText(0);
  d.step_id = s.ColumnText(1);
  d.ordinal = static_cast<int>(s.ColumnInt(2));
  d.section = s.ColumnText(3);
  d.action = s.ColumnText(4);
  d.state = s.ColumnText(5);
  d.attempts = static_cast<int>(s.ColumnInt(6));
  d.error = s.ColumnText(7);
  d.params_json = s.ColumnText(8);
  d.before_json = s.ColumnText(9);
  d.detail_json = s.ColumnText(10);
  d.cleanup = s.ColumnText(11);
  d.cleanup_reason = s.ColumnText(12);
  d.started_at = s.ColumnInt(13);
  d.finished_at = s.ColumnInt(14);
  return d;
}

}  // namespace

const char* DrillPhaseName(DrillPhase p) {
  switch (p) {
    case DrillPhase::kRunning:
      return "running";
    case DrillPhase::kCleaning:
      return "cleaning";
    case DrillPhase::kWaiting:
      return "waiting";
    case DrillPhase::kFinished:
      return "finished";
  }
  return "finished";
}

std::optional<DrillPhase> ParseDrillPhase(const std::string& s) {
  for (DrillPhase p :
       {DrillPhase::kRunning, DrillPhase::kCleaning, DrillPhase::kWaiting, DrillPhase::kFinished})
    if (s == DrillPhaseName(p)) return p;
  return std::nullopt;
}

DrillStore* DrillStoreOf(StateStore& store) { return dynamic_cast<DrillStore*>(&store); }

Status SqliteStore::CreateDrillRun(const DrillRun& run, const AuditEvent& why) {
  std::lock_guard lock(mu_);
  if (read_only_) return Status::FailedPrecondition("the state store is open read-only");
  if (run.id.empty() || run.drill.empty())
    return Status::InvalidArgument("a drill run needs an id and a drill");
  if (Status s = ValidateAudit(why); !s.ok()) return s;
  Result<SqliteStatement*> stmt =
      Statement(std::string("INSERT INTO drill_runs (") + kRunColumns +
                    ") VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15,"
                    " ?16, ?17, 1) ON CONFLICT DO NOTHING",
                "creating a drill run");
  if (!stmt.ok()) return stmt.status();
  SqliteWriteTransaction txn(db_);
  if (Status s = BeginWrite(txn, Durability::kDurable, "create drill run " + run.id); !s.ok())
    return s;
  BindRun(**stmt, run);
  if (Status s = (*stmt)->Run(); !s.ok()) return s;
  if (db_.changes() == 0) {
    return Status::Conflict(run.scheduled_for != 0
                                ? "drill " + run.drill + " has a run for that slot already"
                                : "drill run " + run.id + " already exists");
  }
  if (Status s = InsertAudit(why); !s.ok()) return s;
  return txn.Commit();
}

Status SqliteStore::UpdateDrillRun(const DrillRun& run, std::int64_t expected_version,
                                   const AuditEvent& why) {
  std::lock_guard lock(mu_);
  if (read_only_) return Status::FailedPrecondition("the state store is open read-only");
  if (Status s = ValidateAudit(why); !s.ok()) return s;
  Result<SqliteStatement*> stmt = Statement(
      "UPDATE drill_runs SET drill = ?2, mode = ?3, phase = ?4, trigger = ?5,"
      " scheduled_for = ?6, verdict = ?7, verdict_reason = ?8, failing_step = ?9,"
      " failover_id = ?10, failback_id = ?11, scope = ?12, from_region = ?13, to_region = ?14,"
      " result_json = ?15, started_at = ?16, finished_at = ?17, version = version + 1"
      " WHERE id = ?1 AND version = ?18",
      "updating a drill run");
  if (!stmt.ok()) return stmt.status();
  SqliteWriteTransaction txn(db_);
  if (Status s = BeginWrite(txn, Durability::kDurable, "update drill run " + run.id); !s.ok())
    return s;
  BindRun(**stmt, run);
  (*stmt)->BindInt(18, expected_version);
  if (Status s = (*stmt)->Run(); !s.ok()) return s;
  if (db_.changes() == 0) {
    return Status::Conflict("drill run " + run.id + " is not at version " +
                            std::to_string(expected_version) + " (or does not exist)");
  }
  if (Status s = InsertAudit(why); !s.ok()) return s;
  return txn.Commit();
}

Result<std::optional<DrillRun>> SqliteStore::GetDrillRun(const std::string& id) {
  std::lock_guard lock(mu_);
  Result<SqliteStatement*> stmt =
      Statement(std::string("SELECT ") + kRunColumns + " FROM drill_runs WHERE id = ?1",
                "reading a drill run");
  if (!stmt.ok()) return stmt.status();
  ResetOnExit reset(*stmt);
  (*stmt)->BindText(1, id);
  Result<bool> row = (*stmt)->Step();
  if (!row.ok()) return row.status();
  if (!*row) return std::optional<DrillRun>();
  return std::optional<DrillRun>(ReadRun(**stmt));
}

Result<std::vector<DrillRun>> SqliteStore::ListDrillRuns(const std::string& drill,
                                                         std::size_t limit) {
  std::lock_guard lock(mu_);
  Result<SqliteStatement*> stmt = Statement(
      std::string("SELECT ") + kRunColumns + " FROM drill_runs" +
          (drill.empty() ? " WHERE ?1 = ''" : " WHERE drill = ?1") + " ORDER BY seq DESC LIMIT ?2",
      "listing drill runs");
  if (!stmt.ok()) return stmt.status();
  ResetOnExit reset(*stmt);
  (*stmt)->BindText(1, drill);
  (*stmt)->BindInt(2, SqlLimit(limit));
  std::vector<DrillRun> out;
  for (;;) {
    Result<bool> row = (*stmt)->Step();
    if (!row.ok()) return row.status();
    if (!*row) break;
    out.push_back(ReadRun(**stmt));
  }
  return out;
}

Result<UnixMillis> SqliteStore::LastScheduledSlot(const std::string& drill) {
  std::lock_guard lock(mu_);
  Result<SqliteStatement*> stmt =
      Statement("SELECT COALESCE(MAX(scheduled_for), 0) FROM drill_runs WHERE drill = ?1",
                "reading a drill's last scheduled slot");
  if (!stmt.ok()) return stmt.status();
  ResetOnExit reset(*stmt);
  (*stmt)->BindText(1, drill);
  Result<bool> row = (*stmt)->Step();
  if (!row.ok()) return row.status();
  return *row ? (*stmt)->ColumnInt(0) : 0;
}

Status SqliteStore::PutDrillStep(const DrillStep& d) {
  std::lock_guard lock(mu_);
  if (read_only_) return Status::FailedPrecondition("the state store is open read-only");
  Result<SqliteStatement*> stmt =
      Statement(std::string("INSERT OR REPLACE INTO drill_steps (") + kDrillStepColumns +
                    ") VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15)",
                "journaling a drill step");
  if (!stmt.ok()) return stmt.status();
  SqliteWriteTransaction txn(db_);
  if (Status s = BeginWrite(txn, Durability::kDurable, "journal drill step " + d.step_id); !s.ok())
    return s;
  SqliteStatement& s = **stmt;
  s.BindText(1, d.run_id);
  s.BindText(2, d.step_id);
  s.BindInt(3, d.ordinal);
  s.BindText(4, d.section);
  s.BindText(5, d.action);
  s.BindText(6, d.state);
  s.BindInt(7, d.attempts);
  s.BindText(8, d.error);
  s.BindText(9, d.params_json);
  s.BindText(10, d.before_json);
  s.BindText(11, d.detail_json);
  s.BindText(12, d.cleanup);
  s.BindText(13, d.cleanup_reason);
  s.BindInt(14, d.started_at);
  s.BindInt(15, d.finished_at);
  if (Status st = s.Run(); !st.ok()) return st;
  return txn.Commit();
}

Result<std::vector<DrillStep>> SqliteStore::ListDrillSteps(const std::string& run_id) {
  std::lock_guard lock(mu_);
  Result<SqliteStatement*> stmt = Statement(std::string("SELECT ") + kDrillStepColumns +
                                                " FROM drill_steps WHERE run_id = ?1"
                                                " ORDER BY ordinal, step_id",
                                            "listing drill steps");
  if (!stmt.ok()) return stmt.status();
  ResetOnExit reset(*stmt);
  (*stmt)->BindText(1, run_id);
  std::vector<DrillStep> out;
  for (;;) {
    Result<bool> row = (*stmt)->Step();
    if (!row.ok()) return row.status();
    if (!*row) break;
    out.push_back(ReadDrillStep(**stmt));
  }
  return out;
}

Status SqliteStore::AddDrillNote(const DrillNote& note, const AuditEvent& why) {
  std::lock_guard lock(mu_);
  if (read_only_) return Status::FailedPrecondition("the state store is open read-only");
  if (note.text.empty()) return Status::InvalidArgument("a note needs text");
  if (Status s = ValidateAudit(why); !s.ok()) return s;
  Result<SqliteStatement*> stmt = Statement(
      "INSERT INTO drill_notes (run_id, by, text, at) SELECT ?1, ?2, ?3, ?4"
      " WHERE EXISTS (SELECT 1 FROM drill_runs WHERE id = ?1)",
      "adding a drill note");
  if (!stmt.ok()) return stmt.status();
  SqliteWriteTransaction txn(db_);
  if (Status s = BeginWrite(txn, Durability::kDurable, "note on drill run " + note.run_id); !s.ok())
    return s;
  SqliteStatement& s = **stmt;
  s.BindText(1, note.run_id);
  s.BindText(2, note.by);
  s.BindText(3, note.text);
  s.BindInt(4, note.at != 0 ? note.at : clock_->Now());
  if (Status st = s.Run(); !st.ok()) return st;
  if (db_.changes() == 0) return Status::NotFound("no drill run with id '" + note.run_id + "'");
  if (Status st = InsertAudit(why); !st.ok()) return st;
  return txn.Commit();
}

Result<std::vector<DrillNote>> SqliteStore::ListDrillNotes(const std::string& run_id) {
  std::lock_guard lock(mu_);
  Result<SqliteStatement*> stmt =
      Statement("SELECT run_id, by, text, at FROM drill_notes WHERE run_id = ?1 ORDER BY seq",
                "listing drill notes");
  if (!stmt.ok()) return stmt.status();
  ResetOnExit reset(*stmt);
  (*stmt)->BindText(1, run_id);
  std::vector<DrillNote> out;
  for (;;) {
    Result<bool> row = (*stmt)->Step();
    if (!row.ok()) return row.status();
    if (!*row) break;
    out.push_back({(*stmt)->ColumnText(0), (*stmt)->ColumnText(1), (*stmt)->ColumnText(2),
                   (*stmt)->ColumnInt(3)});
  }
  return out;
}

}  // namespace icewarden
