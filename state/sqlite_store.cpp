#include "state/sqlite_store.h"

#include <unordered_set>
#include <utility>

#include "state/audit_seal.h"
#include "state/sqlite_records.h"
#include "state/sqlite_schema.h"
#include "state/sqlite_store_internal.h"

namespace icewarden {

Result<SqliteStatement*> SqliteStore::Statement(const std::string& sql, std::string_view what) {
  auto it = statements_.find(sql);
  if (it != statements_.end()) return &it->second;
  Result<SqliteStatement> stmt = db_.Prepare(sql, std::string(what));
  if (!stmt.ok()) return stmt.status();
  return &statements_.emplace(sql, std::move(stmt).value()).first->second;
}

Status SqliteStore::BeginWrite(SqliteWriteTransaction& txn, Durability durability,
                               std::string_view what) {
  if (read_only_) {
    return Status::FailedPrecondition("cannot " + std::string(what) +
                                      ": the state store was opened read-only");
  }
  if (durability != synchronous_) {
    const char* pragma = durability == Durability::kDurable ? "PRAGMA synchronous = FULL"
                                                            : "PRAGMA synchronous = NORMAL";
    if (Status s = db_.Exec(pragma, "setting the fsync policy"); !s.ok()) return s;
    synchronous_ = durability;
  }
  return txn.Begin(what);
}

// Inside the caller's write transaction, so seq and the seal before it are read and used
// under one lock of the file: another process appending (a gateway, the CLI) waits.
Status SqliteStore::InsertAudit(const AuditEvent& event) {
  AuditEvent e = event;
  {
    Result<SqliteStatement*> head = Statement(
        "SELECT seq, sha256 FROM audit ORDER BY seq DESC LIMIT 1", "reading the audit log's head");
    if (!head.ok()) return head.status();
    ResetOnExit reset(*head);
    Result<bool> row = (*head)->Step();
    if (!row.ok()) return row.status();
    e.seq = *row ? (*head)->ColumnInt(0) + 1 : 1;
    e.prev_sha256 = *row ? (*head)->ColumnText(1) : "";
  }
  if (e.at == 0) e.at = clock_->Now();
  e.detail_json = std::string(JsonOrEmptyObject(event.detail_json));
  e.sha256 = AuditSealOf(e);
  Result<SqliteStatement*> stmt = Statement(
      "INSERT INTO audit (seq, at, actor, source, action, target, reason, detail_json,"
      " prev_sha256, sha256) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
      "appending to the audit log");
  if (!stmt.ok()) return stmt.status();
  SqliteStatement& s = **stmt;
  s.BindInt(1, e.seq);
  s.BindInt(2, e.at);
  s.BindText(3, e.actor);
  s.BindText(4, e.source);
  s.BindText(5, e.action);
  s.BindText(6, e.target);
  s.BindText(7, e.reason);
  s.BindText(8, e.detail_json);
  s.BindText(9, e.prev_sha256);
  s.BindText(10, e.sha256);
  return s.Run();
}

// ---- Regions ------------------------------------------------------------------------------

Status SqliteStore::PutRegion(const Region& region, const AuditEvent& why) {
  std::lock_guard lock(mu_);
  if (region.name.empty()) return Status::InvalidArgument("a region needs a name");
  if (Status s = ValidateAudit(why); !s.ok()) return s;
  SqliteWriteTransaction txn(db_);
  if (Status s = BeginWrite(txn, Durability::kTrailing, "record region " + region.name); !s.ok()) {
    return s;
  }
  Result<SqliteStatement*> stmt =
      Statement(std::string("INSERT OR REPLACE INTO regions (") + kRegionColumns +
                    ") VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
                "recording a region");
  if (!stmt.ok()) return stmt.status();
  SqliteStatement& s = **stmt;
  s.BindText(1, region.name);
  s.BindText(2, RegionHealthName(region.health));
  s.BindInt(3, region.fenced ? 1 : 0);
  s.BindInt(4, region.maintenance ? 1 : 0);
  s.BindInt(5, region.consecutive_failures);
  s.BindInt(6, region.consecutive_successes);
  s.BindText(7, region.reason);
  s.BindInt(8, region.since);
  if (Status st = s.Run(); !st.ok()) return st;
  if (Status st = InsertAudit(why); !st.ok()) return st;
  return txn.Commit();
}

Result<std::optional<Region>> SqliteStore::GetRegion(const std::string& name) {
  std::lock_guard lock(mu_);
  Result<SqliteStatement*> stmt =
      Statement(std::string("SELECT ") + kRegionColumns + " FROM regions WHERE name = ?1",
                "reading a region");
  if (!stmt.ok()) return stmt.status();
  ResetOnExit reset(*stmt);
  (*stmt)->BindText(1, name);
  Result<bool> row = (*stmt)->Step();
  if (!row.ok()) return row.status();
  if (!*row) return std::optional<Region>();
  Result<Region> region = ReadRegion(**stmt);
  if (!region.ok()) return region.status();
  return std::optional<Region>(std::move(region).value());
}

Result<std::vector<Region>> SqliteStore::ListRegions() {
  std::lock_guard lock(mu_);
  Result<SqliteStatement*> stmt = Statement(
      std::string("SELECT ") + kRegionColumns + " FROM regions ORDER BY name", "listing regions");
  if (!stmt.ok()) return stmt.status();
  ResetOnExit reset(*stmt);
  std::vector<Region> out;
  for (;;) {
    Result<bool> row = (*stmt)->Step();
    if (!row.ok()) return row.status();
    if (!*row) return out;
    Result<Region> region = ReadRegion(**stmt);
    if (!region.ok()) return region.status();
    out.push_back(std::move(region).value());
  }
}

// ---- Ownership ----------------------------------------------------------------------------

Result<std::optional<Ownership>> SqliteStore::ReadOwnershipRow(const std::string& namespace_key,
                                                               const std::string& name) {
  Result<SqliteStatement*> stmt =
      Statement(std::string("SELECT ") + kOwnershipColumns +
                    " FROM ownership WHERE namespace_key = ?1 AND name = ?2",
                "reading a table's ownership");
  if (!stmt.ok()) return stmt.status();
  ResetOnExit reset(*stmt);
  (*stmt)->BindText(1, namespace_key);
  (*stmt)->BindText(2, name);
  Result<bool> row = (*stmt)->Step();
  if (!row.ok()) return row.status();
  if (!*row) return std::optional<Ownership>();
  return std::optional<Ownership>(ReadOwnership(**stmt));
}

Result<std::optional<Ownership>> SqliteStore::GetOwnership(const TableIdent& table) {
  std::lock_guard lock(mu_);
  return ReadOwnershipRow(table.NamespaceKey(), table.name);
}

Result<std::vector<Ownership>> SqliteStore::ListOwnership(const OwnershipQuery& query) {
  std::lock_guard lock(mu_);
  // One statement per combination of filters (four at most, cached), so that each can use
  // the primary key or ownership_by_owner for both filtering and ordering.
  std::string sql = std::string("SELECT ") + kOwnershipColumns + " FROM ownership";
  if (query.owner) sql += " WHERE owner = ?1";
  if (query.after) sql += query.owner ? " AND" : " WHERE";
  if (query.after) sql += " (namespace_key, name) > (?2, ?3)";
  sql += " ORDER BY namespace_key, name LIMIT ?4";
  Result<SqliteStatement*> stmt = Statement(sql, "listing table ownership");
  if (!stmt.ok()) return stmt.status();
  ResetOnExit reset(*stmt);
  SqliteStatement& s = **stmt;
  if (query.owner) s.BindText(1, *query.owner);
  if (query.after) {
    s.BindText(2, query.after->NamespaceKey());
    s.BindText(3, query.after->name);
  }
  s.BindInt(4, SqlLimit(query.limit));
  std::vector<Ownership> out;
  for (;;) {
    Result<bool> row = s.Step();
    if (!row.ok()) return row.status();
    if (!*row) return out;
    out.push_back(ReadOwnership(s));
  }
}

Result<std::vector<std::pair<std::string, std::int64_t>>> SqliteStore::CountOwnershipByOwner() {
  std::lock_guard lock(mu_);
  Result<SqliteStatement*> stmt =
      Statement("SELECT owner, COUNT(*) FROM ownership GROUP BY owner ORDER BY owner",
                "counting tables per owner");
  if (!stmt.ok()) return stmt.status();
  ResetOnExit reset(*stmt);
  std::vector<std::pair<std::string, std::int64_t>> out;
  for (;;) {
    Result<bool> row = (*stmt)->Step();
    if (!row.ok()) return row.status();
    if (!*row) return out;
    out.emplace_back((*stmt)->ColumnText(0), (*stmt)->ColumnInt(1));
  }
}

Status SqliteStore::OwnershipConflict(const OwnershipChange& change,
                                      const std::string& namespace_key, std::size_t batch_size) {
  Result<std::optional<Ownership>> current = ReadOwnershipRow(namespace_key, change.table.name);
  if (!current.ok()) return current.status();
  std::string message = "ownership of " + change.table.ToString() + " ";
  if (!current->has_value()) {
    message += "has no owner yet (epoch 0)";
  } else {
    message +=
        "is at epoch " + std::to_string((*current)->epoch) + " owned by " + (*current)->owner;
  }
  message += ", expected epoch " + std::to_string(change.expected_epoch) +
             "; none of the batch's " + std::to_string(batch_size) + " changes was applied";
  return Status::Conflict(std::move(message));
}

Status SqliteStore::CompareAndSetOwnership(std::span<const OwnershipChange> changes,
                                           const AuditEvent& why) {
  std::lock_guard lock(mu_);
  // Nothing to change means nothing to explain: no transaction and no audit event.
  if (changes.empty()) return Status::Ok();
  if (Status s = ValidateAudit(why); !s.ok()) return s;

  if (Status s = ValidateOwnershipChanges(changes); !s.ok()) return s;
  std::vector<std::string> namespace_keys;
  namespace_keys.reserve(changes.size());
  for (const OwnershipChange& c : changes) namespace_keys.push_back(c.table.NamespaceKey());

  Result<SqliteStatement*> claim = Statement(
      "INSERT INTO ownership (namespace_key, name, owner, epoch, updated_at, failover_id)"
      " VALUES (?1, ?2, ?3, 1, ?4, ?5) ON CONFLICT (namespace_key, name) DO NOTHING",
      "claiming a table's first owner");
  if (!claim.ok()) return claim.status();
  // The epoch test in the WHERE clause makes each change one statement: a row that was not
  // updated is a lost compare-and-set, seen through changes() == 0.
  Result<SqliteStatement*> move = Statement(
      "UPDATE ownership SET owner = ?3, epoch = ?6 + 1, updated_at = ?4, failover_id = ?5"
      " WHERE namespace_key = ?1 AND name = ?2 AND epoch = ?6",
      "moving a table's ownership");
  if (!move.ok()) return move.status();

  SqliteWriteTransaction txn(db_);
  if (Status s = BeginWrite(txn, Durability::kDurable, "change table ownership"); !s.ok()) return s;
  const UnixMillis now = clock_->Now();
  for (std::size_t i = 0; i < changes.size(); ++i) {
    const OwnershipChange& c = changes[i];
    SqliteStatement& s = c.expected_epoch == 0 ? **claim : **move;
    s.BindText(1, namespace_keys[i]);
    s.BindText(2, c.table.name);
    s.BindText(3, c.new_owner);
    s.BindInt(4, now);
    s.BindText(5, c.failover_id);
    if (c.expected_epoch != 0) s.BindInt(6, c.expected_epoch);
    if (Status st = s.Run(); !st.ok()) return st;
    // Returning rolls the whole batch back (txn's destructor).
    if (db_.changes() == 0) return OwnershipConflict(c, namespace_keys[i], changes.size());
  }
  if (Status s = InsertAudit(why); !s.ok()) return s;
  if (Status s = txn.Commit(); !s.ok()) return s;
  ++ownership_commits_;
  return Status::Ok();
}

std::optional<std::int64_t> SqliteStore::OwnershipRevision() {
  std::lock_guard lock(mu_);
  // This connection's own batches, and data_version for every other connection's commits
  // (any commit: a change elsewhere only costs the caller a listing).
  Result<SqliteStatement*> stmt = Statement("PRAGMA data_version", "reading the data version");
  if (!stmt.ok()) return std::nullopt;
  ResetOnExit reset(*stmt);
  Result<bool> row = (*stmt)->Step();
  if (!row.ok() || !*row) return std::nullopt;
  return ((*stmt)->ColumnInt(0) << 32) + ownership_commits_;
}

// ---- Audit --------------------------------------------------------------------------------

Status SqliteStore::AppendAudit(const AuditEvent& event) {
  std::lock_guard lock(mu_);
  if (Status s = ValidateAudit(event); !s.ok()) return s;
  SqliteWriteTransaction txn(db_);
  if (Status s = BeginWrite(txn, Durability::kDurable, "append to the audit log"); !s.ok())
    return s;
  if (Status s = InsertAudit(event); !s.ok()) return s;
  return txn.Commit();
}

Result<std::vector<AuditEvent>> SqliteStore::ListAudit(const AuditQuery& query) {
  std::lock_guard lock(mu_);
  std::string sql = std::string("SELECT ") + kAuditColumns + " FROM audit WHERE seq > ?1";
  if (query.target) sql += " AND target = ?2";
  sql += " ORDER BY seq LIMIT ?3";
  Result<SqliteStatement*> stmt = Statement(sql, "reading the audit log");
  if (!stmt.ok()) return stmt.status();
  ResetOnExit reset(*stmt);
  (*stmt)->BindInt(1, query.after_seq);
  if (query.target) (*stmt)->BindText(2, *query.target);
  (*stmt)->BindInt(3, SqlLimit(query.limit));
  std::vector<AuditEvent> out;
  for (;;) {
    Result<bool> row = (*stmt)->Step();
    if (!row.ok()) return row.status();
    if (!*row) return out;
    out.push_back(ReadAudit(**stmt));
  }
}

Result<std::int64_t> SqliteStore::LastAuditSeq() {
  std::lock_guard lock(mu_);
  Result<SqliteStatement*> stmt =
      Statement("SELECT COALESCE(MAX(seq), 0) FROM audit", "reading the audit log's last seq");
  if (!stmt.ok()) return stmt.status();
  ResetOnExit reset(*stmt);
  Result<bool> row = (*stmt)->Step();
  if (!row.ok()) return row.status();
  return *row ? (*stmt)->ColumnInt(0) : 0;
}

namespace {

Status ConfigureConnection(SqliteConnection& db, const SqliteStoreOptions& options) {
  sqlite3_busy_timeout(db.handle(), options.busy_timeout_ms);
  if (!options.read_only) {
    // WAL: readers (the CLI, a read-only store) never block the daemon's writes, and a
    // commit is one append to the log. The mode is persistent in the file.
    Result<SqliteStatement> mode = db.Prepare("PRAGMA journal_mode = WAL", "switching to WAL");
    if (!mode.ok()) return mode.status();
    Result<bool> row = mode->Step();
    if (!row.ok()) return row.status();
    std::string got = *row ? mode->ColumnText(0) : "";
    if (got != "wal" && options.path != ":memory:") {
      return Status::IOError("the state database " + options.path +
                             " cannot use write-ahead logging (journal mode is '" + got + "')");
    }
  }
  if (Status s = db.Exec("PRAGMA foreign_keys = ON", "enabling foreign keys"); !s.ok()) return s;
  // 32 MiB of page cache instead of SQLite's 2 MiB: ownership of 100,000 tables with its
  // owner index is ~15 MiB, and a failover touching all of them otherwise spends most of
  // its time re-reading pages from the OS cache. Not more: the daemon's whole budget with
  // 100,000 tables is 64 MiB (tests/bench/serve_memory_bench).
  if (Status s = db.Exec("PRAGMA cache_size = -32768", "sizing the page cache"); !s.ok()) return s;
  return db.Exec("PRAGMA synchronous = FULL", "setting the fsync policy");
}

}  // namespace

Result<std::unique_ptr<StateStore>> OpenSqliteStore(const SqliteStoreOptions& options,
                                                    std::shared_ptr<Clock> clock) {
  if (options.path.empty()) return Status::InvalidArgument("the state database needs a path");
  if (clock == nullptr) return Status::InvalidArgument("the state store needs a clock");
  Result<SqliteConnection> db = SqliteConnection::Open(options.path, options.read_only);
  if (!db.ok()) return db.status();
  if (Status s = ConfigureConnection(*db, options); !s.ok()) return s;
  if (Status s = MigrateSqliteSchema(*db, *clock, options.read_only); !s.ok()) return s;
  return std::unique_ptr<StateStore>(
      new SqliteStore(std::move(db).value(), std::move(clock), options.read_only));
}

}  // namespace icewarden
