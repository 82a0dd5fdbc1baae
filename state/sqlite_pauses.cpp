// Paused automation in the SQLite store (schema migration 6): one row per paused scope.
#include <utility>

#include "state/pause_store.h"
#include "state/sqlite_store_internal.h"

namespace icewarden {

PauseStore* PauseStoreOf(StateStore& store) { return dynamic_cast<PauseStore*>(&store); }

Status SqliteStore::PutPause(const Pause& pause, const AuditEvent& why) {
  std::lock_guard lock(mu_);
  if (read_only_) return Status::FailedPrecondition("the state store is open read-only");
  if (pause.scope.empty() || pause.reason.empty())
    return Status::InvalidArgument("a pause needs a scope and a reason");
  if (Status s = ValidateAudit(why); !s.ok()) return s;
  Result<SqliteStatement*> stmt = Statement(
      "INSERT INTO pauses (scope, by, reason, since, expected_end) VALUES (?1, ?2, ?3, ?4, ?5)"
      " ON CONFLICT (scope) DO UPDATE SET by = ?2, reason = ?3, since = ?4, expected_end = ?5",
      "pausing automation");
  if (!stmt.ok()) return stmt.status();
  SqliteWriteTransaction txn(db_);
  if (Status s = BeginWrite(txn, Durability::kDurable, "pause " + pause.scope); !s.ok()) return s;
  SqliteStatement& s = **stmt;
  s.BindText(1, pause.scope);
  s.BindText(2, pause.by);
  s.BindText(3, pause.reason);
  s.BindInt(4, pause.since != 0 ? pause.since : clock_->Now());
  s.BindInt(5, pause.expected_end);
  if (Status st = s.Run(); !st.ok()) return st;
  if (Status st = InsertAudit(why); !st.ok()) return st;
  return txn.Commit();
}

Status SqliteStore::DeletePause(const std::string& scope, const AuditEvent& why) {
  std::lock_guard lock(mu_);
  if (read_only_) return Status::FailedPrecondition("the state store is open read-only");
  if (Status s = ValidateAudit(why); !s.ok()) return s;
  Result<SqliteStatement*> stmt =
      Statement("DELETE FROM pauses WHERE scope = ?1", "resuming automation");
  if (!stmt.ok()) return stmt.status();
  SqliteWriteTransaction txn(db_);
  if (Status s = BeginWrite(txn, Durability::kDurable, "resume " + scope); !s.ok()) return s;
  (*stmt)->BindText(1, scope);
  if (Status st = (*stmt)->Run(); !st.ok()) return st;
  if (db_.changes() == 0) return Status::NotFound("'" + scope + "' is not paused");
  if (Status st = InsertAudit(why); !st.ok()) return st;
  return txn.Commit();
}

Result<std::vector<Pause>> SqliteStore::ListPauses() {
  std::lock_guard lock(mu_);
  Result<SqliteStatement*> stmt = Statement(
      "SELECT scope, by, reason, since, expected_end FROM pauses ORDER BY scope", "listing pauses");
  if (!stmt.ok()) return stmt.status();
  ResetOnExit reset(*stmt);
  std::vector<Pause> out;
  for (;;) {
    Result<bool> row = (*stmt)->Step();
    if (!row.ok()) return row.status();
    if (!*row) break;
    out.push_back({(*stmt)->ColumnText(0), (*stmt)->ColumnText(1), (*stmt)->ColumnText(2),
                   (*stmt)->ColumnInt(3), (*stmt)->ColumnInt(4)});
  }
  return out;
}

}  // namespace icewarden
