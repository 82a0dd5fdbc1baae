// Loads many tables from one catalog at once, for the catalog checks (verify.replica_caught_up,
// fence.catalog_quiet): at most `concurrency` requests in flight, blocking on the session until
// every load has answered or the context expired.
// Thread-safety: one thread (the session's).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "actions/catalog_session.h"

namespace icewarden {

// One answer per table, in order; nullopt entries when the context expired first. `etags`,
// when not empty, holds one (possibly empty) If-None-Match value per table.
std::vector<std::optional<Result<LoadTableOutcome>>> LoadTables(
    CatalogSession& session, CatalogClient& client, const std::vector<TableIdent>& tables,
    const std::vector<std::string>& etags, int concurrency, const ActionContext& ctx,
    SnapshotsMode snapshots = SnapshotsMode::kAll);

// LoadTables with snapshots=refs through `seen` (the failover's TableObservations, may be
// null): a table this failover's steps already read in `region` goes with that answer's ETag,
// and a 304 is answered with the table as it was then (never not_modified: every answer has a
// table); a new body is remembered. Its callers must not need the snapshot or metadata logs.
std::vector<std::optional<Result<LoadTableOutcome>>> LoadTablesSeen(
    CatalogSession& session, TableObservations* seen, const std::string& region,
    CatalogClient& client, const std::vector<TableIdent>& tables, int concurrency,
    const ActionContext& ctx);

}  // namespace icewarden
