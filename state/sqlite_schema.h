// The SQLite StateStore's schema: an ordered list of forward migrations and the code that
// applies them. The schema carries the StateStore invariants in SQL as well as in code, so
// that a bug, a second process or a person with the sqlite3 shell cannot break them either:
// one owner row per table, epochs that only go up, an append-only audit log.
//
// Thread-safety: none; called once while opening the store, before it is shared.
#pragma once

#include "state/clock.h"
#include "state/sqlite_db.h"
#include "state/status.h"

namespace icewarden {

// Brings the database to SqliteSchemaVersion() in one transaction: either every pending
// migration is applied and recorded in schema_version, or none is.
// kFailedPrecondition if the database is newer than this build (a newer icewarden wrote
// it; running an older one against it could silently ignore invariants it does not know),
// or if read_only and the database is missing migrations (they cannot be applied).
// kIOError if SQLite fails.
Status MigrateSqliteSchema(SqliteConnection& db, const Clock& clock, bool read_only);

}  // namespace icewarden
