// The SQLite StateStore: one database file in WAL mode, schema versioned with forward
// migrations, the StateStore contracts enforced by SQL constraints and triggers as well as
// by code (one owner per table, epochs that never decrease, an append-only audit log).
#pragma once

#include <memory>
#include <string>

#include "state/state_store.h"

namespace icewarden {

struct SqliteStoreOptions {
  std::string path;            // database file; ":memory:" for a private in-memory store
  int busy_timeout_ms = 5000;  // how long to wait for another process's write lock
  bool read_only = false;      // open for reading only (CLI inspection, benchmarks)
};

// Opens (creating if needed) and migrates the database to the current schema version.
// Fails with kFailedPrecondition if the file's schema is newer than this build knows,
// and kIOError if it cannot be opened.
Result<std::unique_ptr<StateStore>> OpenSqliteStore(const SqliteStoreOptions& options,
                                                    std::shared_ptr<Clock> clock);

// The schema version this build writes.
int SqliteSchemaVersion();

}  // namespace icewarden
