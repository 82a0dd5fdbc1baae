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

}  // namespace icewarden
