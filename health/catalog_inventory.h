// Catalog inventory: every table one catalog holds, walking nested namespaces through
// ListNamespaces(parent) and listing the tables of each (both follow pages; see
// catalog_client.h).
//
// A returned namespace counts as a child only when it extends its parent by at least one
// level; anything else (a server that ignores `parent` and answers with the top level
// again) is skipped, and each namespace is walked once, so the walk always ends.
//
// Asynchrony: returns at once; `done` is called exactly once on the client's executor
// (possibly before ListCatalogTables returns, with a synchronous fake transport). The
// client and the limit must outlive the call.
// Failure: the first listing error fails the whole inventory (a partial table list would
// read as "tables dropped"); requests already in flight are drained, none are started.
// Thread-safety: one thread, the client's executor.
#pragma once

#include <functional>
#include <vector>

#include "health/catalog_client.h"
#include "health/in_flight_limit.h"
#include "state/status.h"
#include "state/types.h"

namespace icewarden {

// Every request goes through `limit`. Tables come in the order they were listed.
void ListCatalogTables(CatalogClient& client, InFlightLimit& limit,
                       std::function<void(Result<std::vector<TableIdent>>)> done);

}  // namespace icewarden
