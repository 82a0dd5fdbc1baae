// Store timers in the SQLite store (schema migration 8): one row per timer, its start and
// ttl. The database is one file on one host, so that host's clock is the one clock every
// caller shares: a timer's elapsed time is the host's now minus its start. Expired rows are
// deleted when a timer is started, so the table holds about as many rows as timers run.
#include <algorithm>

#include "state/sqlite_store_internal.h"

namespace icewarden {

Status SqliteStore::StartTimer(const std::string& name, std::chrono::milliseconds ttl) {
  std::lock_guard lock(mu_);
  if (read_only_) return Status::FailedPrecondition("the state store is open read-only");
  if (name.empty()) return Status::InvalidArgument("a store timer needs a name");
  if (ttl <= std::chrono::milliseconds(0))
    return Status::InvalidArgument("store timer " + name + " needs a positive ttl");
  const UnixMillis now = clock_->Now();
  Result<SqliteStatement*> put = Statement(
      "INSERT INTO timers (name, started_at, ttl_ms) VALUES (?1, ?2, ?3)"
      " ON CONFLICT (name) DO UPDATE SET started_at = ?2, ttl_ms = ?3",
      "starting a timer");
  if (!put.ok()) return put.status();
  Result<SqliteStatement*> expire =
      Statement("DELETE FROM timers WHERE started_at + ttl_ms <= ?1", "deleting expired timers");
  if (!expire.ok()) return expire.status();
  SqliteWriteTransaction txn(db_);
  if (Status s = BeginWrite(txn, Durability::kDurable, "start timer " + name); !s.ok()) return s;
  (*expire)->BindInt(1, now);
  if (Status s = (*expire)->Run(); !s.ok()) return s;
  (*put)->BindText(1, name);
  (*put)->BindInt(2, now);
  (*put)->BindInt(3, ttl.count());
  if (Status s = (*put)->Run(); !s.ok()) return s;
  return txn.Commit();
}

Result<std::vector<StoreTimer>> SqliteStore::ListTimers(const std::string& prefix) {
  std::lock_guard lock(mu_);
  // By range, not LIKE: a prefix may hold % or _.
  Result<SqliteStatement*> stmt =
      Statement("SELECT name, started_at, ttl_ms FROM timers WHERE name >= ?1 ORDER BY name",
                "listing timers");
  if (!stmt.ok()) return stmt.status();
  ResetOnExit reset(*stmt);
  const UnixMillis now = clock_->Now();
  (*stmt)->BindText(1, prefix);
  std::vector<StoreTimer> out;
  for (;;) {
    Result<bool> row = (*stmt)->Step();
    if (!row.ok()) return row.status();
    if (!*row) break;
    std::string name = (*stmt)->ColumnText(0);
    if (name.compare(0, prefix.size(), prefix) != 0) break;
    const std::int64_t started = (*stmt)->ColumnInt(1);
    const std::int64_t ttl = (*stmt)->ColumnInt(2);
    // A host clock stepped back shows 0 elapsed, not a negative span.
    const std::int64_t elapsed = std::max<std::int64_t>(0, now - started);
    if (elapsed >= ttl) continue;
    out.push_back(
        {std::move(name), std::chrono::milliseconds(elapsed), std::chrono::milliseconds(ttl)});
  }
  return out;
}

}  // namespace icewarden
