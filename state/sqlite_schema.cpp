#include "state/sqlite_schema.h"

#include <array>
#include <string>

#include "state/sqlite_store.h"

namespace icewarden {
namespace {

struct Migration {
  int version;  // 1, 2, 3, ...: the version the database is at after this script
  const char* description;
  const char* sql;
};

// Append new migrations at the end; never edit one that has shipped, because databases
// that already ran it will not run it again.
constexpr std::array<Migration, 8> kMigrations{{
    {1, "regions, ownership, failovers, steps, audit", R"sql(
CREATE TABLE regions (
  name TEXT NOT NULL PRIMARY KEY CHECK (name <> ''),
  health TEXT NOT NULL CHECK (health IN ('healthy', 'degraded', 'unreachable')),
  fenced INTEGER NOT NULL CHECK (fenced IN (0, 1)),
  maintenance INTEGER NOT NULL CHECK (maintenance IN (0, 1)),
  consecutive_failures INTEGER NOT NULL,
  consecutive_successes INTEGER NOT NULL,
  reason TEXT NOT NULL,
  since INTEGER NOT NULL
) WITHOUT ROWID;

-- The primary key is the table identity, so a table can never have two owner rows.
-- WITHOUT ROWID clusters rows by that key: compare-and-set is one b-tree lookup.
CREATE TABLE ownership (
  namespace_key TEXT NOT NULL,
  name TEXT NOT NULL CHECK (name <> ''),
  owner TEXT NOT NULL CHECK (owner <> ''),
  epoch INTEGER NOT NULL CHECK (epoch >= 1),
  updated_at INTEGER NOT NULL,
  failover_id TEXT NOT NULL,
  PRIMARY KEY (namespace_key, name)
) WITHOUT ROWID;
-- "tables owned by X" (failover scopes, ownership list --owner) in paging order.
CREATE INDEX ownership_by_owner ON ownership (owner, namespace_key, name);

-- The epoch is the fencing token: a stale writer holding epoch N must be refused forever
-- once N+1 exists, so no update may lower it or leave it equal.
CREATE TRIGGER ownership_epoch_must_increase BEFORE UPDATE ON ownership
WHEN NEW.epoch <= OLD.epoch
BEGIN
  SELECT RAISE(ABORT, 'ownership epoch must increase on every update');
END;
-- Deleting a row would let the table be claimed again at epoch 1, i.e. its epoch go down.
CREATE TRIGGER ownership_rows_are_never_deleted BEFORE DELETE ON ownership
BEGIN
  SELECT RAISE(ABORT, 'ownership rows are never deleted (the epoch would restart at 1)');
END;

-- seq keeps creation order stable across VACUUM (an implicit rowid would not).
-- active is derived from IsTerminal(phase) by the store, so which phases are terminal is
-- decided in one place (types.cpp), not repeated here.
CREATE TABLE failovers (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  id TEXT NOT NULL UNIQUE CHECK (id <> ''),
  kind TEXT NOT NULL,
  scope TEXT NOT NULL,
  from_region TEXT NOT NULL,
  to_region TEXT NOT NULL,
  runbook TEXT NOT NULL,
  phase TEXT NOT NULL,
  active INTEGER NOT NULL CHECK (active IN (0, 1)),
  proposed_by TEXT NOT NULL,
  reason TEXT NOT NULL,
  approvals_json TEXT NOT NULL CHECK (json_valid(approvals_json)),
  fencing_json TEXT CHECK (fencing_json IS NULL OR json_valid(fencing_json)),
  accept_data_loss TEXT,
  last_reason TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  version INTEGER NOT NULL CHECK (version >= 1)
);
CREATE INDEX failovers_active ON failovers (active, created_at, seq);
-- Optimistic concurrency depends on every change moving the version by exactly one.
CREATE TRIGGER failover_version_moves_by_one BEFORE UPDATE ON failovers
WHEN NEW.version <> OLD.version + 1
BEGIN
  SELECT RAISE(ABORT, 'failover version must increase by one on every update');
END;

CREATE TABLE steps (
  failover_id TEXT NOT NULL REFERENCES failovers (id),
  step_id TEXT NOT NULL CHECK (step_id <> ''),
  recorded_order INTEGER NOT NULL,  -- 1, 2, ... per failover, in first-recorded order
  section TEXT NOT NULL,
  action TEXT NOT NULL,
  state TEXT NOT NULL,
  attempt INTEGER NOT NULL,
  reason TEXT NOT NULL,
  result_json TEXT NOT NULL CHECK (json_valid(result_json)),
  started_at INTEGER NOT NULL,
  finished_at INTEGER NOT NULL,
  PRIMARY KEY (failover_id, step_id)
) WITHOUT ROWID;
CREATE UNIQUE INDEX steps_in_recorded_order ON steps (failover_id, recorded_order);

-- AUTOINCREMENT: seq is never reused, so "events after seq N" is a stable cursor.
CREATE TABLE audit (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  at INTEGER NOT NULL,
  actor TEXT NOT NULL,
  source TEXT NOT NULL,
  action TEXT NOT NULL,
  target TEXT NOT NULL,
  reason TEXT NOT NULL,
  detail_json TEXT NOT NULL CHECK (json_valid(detail_json))
);
CREATE INDEX audit_by_target ON audit (target, seq);
CREATE TRIGGER audit_is_append_only_update BEFORE UPDATE ON audit
BEGIN
  SELECT RAISE(ABORT, 'the audit log is append-only');
END;
CREATE TRIGGER audit_is_append_only_delete BEFORE DELETE ON audit
BEGIN
  SELECT RAISE(ABORT, 'the audit log is append-only');
END;
)sql"},
    {2, "failover plan, guard checks, RPO and acknowledgement (annex_json)", R"sql(
ALTER TABLE failovers ADD COLUMN annex_json TEXT NOT NULL DEFAULT '{}'
  CHECK (json_valid(annex_json));
)sql"},
    {3, "webhook deliveries (idempotency of alert webhooks)", R"sql(
-- One row per delivery icewarden acted on; the key makes a re-delivery a no-op. Rows are
-- never updated: a delivery is a fact, like an audit event.
CREATE TABLE webhook_deliveries (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  key TEXT NOT NULL UNIQUE CHECK (key <> ''),
  source TEXT NOT NULL,
  alert TEXT NOT NULL,
  status TEXT NOT NULL,
  starts_at TEXT NOT NULL,
  effect TEXT NOT NULL,
  region TEXT NOT NULL,
  failover_id TEXT NOT NULL,
  outcome TEXT NOT NULL,
  received_at INTEGER NOT NULL
);
-- A resolved alert finds what its firing delivery did.
CREATE INDEX webhook_deliveries_by_alert ON webhook_deliveries (source, alert, seq);
CREATE TRIGGER webhook_deliveries_are_facts BEFORE UPDATE ON webhook_deliveries
BEGIN
  SELECT RAISE(ABORT, 'webhook deliveries are never updated');
END;
)sql"},
    {4, "ownership_by_owner covers every column of a scope listing", R"sql(
-- A failover's guards list its scope (the tables its old owner holds) at proposal, approval
-- and before promotion, and ownership.transfer lists it again; with the index holding only
-- the key, each of 10,000 rows was also looked up in the primary key, which cost more than
-- the rest of the listing. The index now holds every column the listing returns.
DROP INDEX ownership_by_owner;
CREATE INDEX ownership_by_owner
  ON ownership (owner, namespace_key, name, epoch, updated_at, failover_id);
)sql"},
    {5, "drill runs, their step journal and notes", R"sql(
-- One row per drill run. A scheduled run holds its cron slot: the partial unique index makes
-- claiming a slot a single insert that a second claim (a restart, another instance) fails.
CREATE TABLE drill_runs (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  id TEXT NOT NULL UNIQUE CHECK (id <> ''),
  drill TEXT NOT NULL CHECK (drill <> ''),
  mode TEXT NOT NULL CHECK (mode IN ('plan', 'shadow', 'live')),
  phase TEXT NOT NULL CHECK (phase IN ('running', 'cleaning', 'waiting', 'finished')),
  trigger TEXT NOT NULL,
  scheduled_for INTEGER NOT NULL,
  verdict TEXT NOT NULL,
  verdict_reason TEXT NOT NULL,
  failing_step TEXT NOT NULL,
  failover_id TEXT NOT NULL,
  failback_id TEXT NOT NULL,
  scope TEXT NOT NULL,
  from_region TEXT NOT NULL,
  to_region TEXT NOT NULL,
  result_json TEXT NOT NULL CHECK (json_valid(result_json)),
  started_at INTEGER NOT NULL,
  finished_at INTEGER NOT NULL,
  version INTEGER NOT NULL CHECK (version >= 1)
);
CREATE UNIQUE INDEX drill_runs_slot ON drill_runs (drill, scheduled_for) WHERE scheduled_for <> 0;
CREATE INDEX drill_runs_by_drill ON drill_runs (drill, seq);

CREATE TABLE drill_steps (
  run_id TEXT NOT NULL REFERENCES drill_runs (id),
  step_id TEXT NOT NULL,
  ordinal INTEGER NOT NULL,
  section TEXT NOT NULL,
  action TEXT NOT NULL,
  state TEXT NOT NULL CHECK (state IN ('not_started', 'running', 'succeeded', 'failed',
                                       'timed_out', 'skipped')),
  attempts INTEGER NOT NULL,
  error TEXT NOT NULL,
  params_json TEXT NOT NULL,
  before_json TEXT NOT NULL,
  detail_json TEXT NOT NULL,
  cleanup TEXT NOT NULL,
  cleanup_reason TEXT NOT NULL,
  started_at INTEGER NOT NULL,
  finished_at INTEGER NOT NULL,
  PRIMARY KEY (run_id, step_id)
) WITHOUT ROWID;

CREATE TABLE drill_notes (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  run_id TEXT NOT NULL REFERENCES drill_runs (id),
  by TEXT NOT NULL,
  text TEXT NOT NULL CHECK (text <> ''),
  at INTEGER NOT NULL
);
CREATE INDEX drill_notes_by_run ON drill_notes (run_id, seq);
)sql"},
    {6, "paused automation", R"sql(
CREATE TABLE pauses (
  scope TEXT PRIMARY KEY CHECK (scope <> ''),
  by TEXT NOT NULL,
  reason TEXT NOT NULL CHECK (reason <> ''),
  since INTEGER NOT NULL,
  expected_end INTEGER NOT NULL
) WITHOUT ROWID;
)sql"},
    {7, "the audit log's seal (state/audit_seal.h): each event's and the previous one's SHA-256",
     R"sql(
ALTER TABLE audit ADD COLUMN prev_sha256 TEXT NOT NULL DEFAULT '';
ALTER TABLE audit ADD COLUMN sha256 TEXT NOT NULL DEFAULT '';
)sql"},
    {8, "store timers (StateStore::StartTimer): spans measured by this host's clock", R"sql(
CREATE TABLE timers (
  name TEXT PRIMARY KEY CHECK (name <> ''),
  started_at INTEGER NOT NULL,
  ttl_ms INTEGER NOT NULL CHECK (ttl_ms > 0)
) WITHOUT ROWID;
)sql"},
}};

constexpr bool MigrationsAreConsecutive() {
  for (std::size_t i = 0; i < kMigrations.size(); ++i)
    if (kMigrations[i].version != static_cast<int>(i) + 1) return false;
  return true;
}
static_assert(MigrationsAreConsecutive(), "migration versions must be 1, 2, 3, ...");

Result<bool> SchemaVersionTableExists(SqliteConnection& db) {
  Result<SqliteStatement> stmt =
      db.Prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_version'",
                 "looking for the schema_version table");
  if (!stmt.ok()) return stmt.status();
  return stmt->Step();
}

Result<int> StoredSchemaVersion(SqliteConnection& db) {
  Result<SqliteStatement> stmt = db.Prepare("SELECT COALESCE(MAX(version), 0) FROM schema_version",
                                            "reading the schema version");
  if (!stmt.ok()) return stmt.status();
  Result<bool> row = stmt->Step();
  if (!row.ok()) return row.status();
  return static_cast<int>(stmt->ColumnInt(0));
}

Status RefuseNewerSchema(int stored) {
  return Status::FailedPrecondition(
      "the state database is at schema version " + std::to_string(stored) +
      ", newer than the version this build of icewarden knows (" +
      std::to_string(SqliteSchemaVersion()) +
      "); it was written by a newer icewarden: upgrade this one rather than risk ignoring "
      "invariants it does not know");
}

Status CheckReadOnlySchema(SqliteConnection& db) {
  Result<bool> exists = SchemaVersionTableExists(db);
  if (!exists.ok()) return exists.status();
  int stored = 0;
  if (*exists) {
    Result<int> version = StoredSchemaVersion(db);
    if (!version.ok()) return version.status();
    stored = *version;
  }
  if (stored > SqliteSchemaVersion()) return RefuseNewerSchema(stored);
  if (stored < SqliteSchemaVersion()) {
    return Status::FailedPrecondition(
        "the state database is at schema version " + std::to_string(stored) +
        " and this build needs " + std::to_string(SqliteSchemaVersion()) +
        "; it cannot be migrated when opened read-only: open it read-write once");
  }
  return Status::Ok();
}

}  // namespace

int SqliteSchemaVersion() { return kMigrations.back().version; }

Status MigrateSqliteSchema(SqliteConnection& db, const Clock& clock, bool read_only) {
  if (read_only) return CheckReadOnlySchema(db);

  // IMMEDIATE: two processes opening a fresh file at once must not both migrate it.
  SqliteWriteTransaction txn(db);
  if (Status s = txn.Begin("migrating the schema"); !s.ok()) return s;
  if (Status s = db.Exec(
          "CREATE TABLE IF NOT EXISTS schema_version ("
          " version INTEGER PRIMARY KEY, applied_at INTEGER NOT NULL, description TEXT NOT NULL)",
          "creating the schema_version table");
      !s.ok()) {
    return s;
  }
  Result<int> stored = StoredSchemaVersion(db);
  if (!stored.ok()) return stored.status();
  if (*stored > SqliteSchemaVersion()) return RefuseNewerSchema(*stored);
  if (*stored == SqliteSchemaVersion()) return Status::Ok();  // rolls back the no-op

  Result<SqliteStatement> record = db.Prepare(
      "INSERT INTO schema_version (version, applied_at, description) VALUES (?1, ?2, ?3)",
      "recording an applied migration");
  if (!record.ok()) return record.status();
  for (const Migration& m : kMigrations) {
    if (m.version <= *stored) continue;
    std::string what =
        "applying schema migration " + std::to_string(m.version) + " (" + m.description + ")";
    if (Status s = db.Exec(m.sql, what); !s.ok()) return s;
    record->BindInt(1, m.version);
    record->BindInt(2, clock.Now());
    record->BindText(3, m.description);
    if (Status s = record->Run(); !s.ok()) return s;
  }
  return txn.Commit();
}

}  // namespace icewarden
