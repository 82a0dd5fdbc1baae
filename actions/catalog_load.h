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

// The daemon's TableObservations for this run's failover; null when it keeps none or the run
// belongs to no failover (what it keeps is per failover).
TableObservations* ObservationsFor(const ActionEnv& env, const ActionContext& ctx);

// LoadTables with snapshots=refs through `seen` (may be null: plain loads): a table already
// seen in `region` (under ctx.failover_id) goes with that answer's ETag, and its 304 is
// answered with the table as it was then, not_modified false; a new body is remembered. A 304
// to a request that carried no ETag of ours comes back as it came. Its callers must not need
// the snapshot or metadata logs.
std::vector<std::optional<Result<LoadTableOutcome>>> LoadTablesSeen(
    CatalogSession& session, TableObservations* seen, const std::string& region,
    CatalogClient& client, const std::vector<TableIdent>& tables, int concurrency,
    const ActionContext& ctx);

}  // namespace icewarden
