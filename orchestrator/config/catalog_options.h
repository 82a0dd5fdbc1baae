// How the daemon reaches a region's catalog, from its config: one place for the probes,
// the lag monitor and the actions, so they all authenticate the same way.
// Thread-safety: pure functions.
#pragma once

#include "health/catalog_client.h"
#include "orchestrator/config/config.h"

namespace icewarden {

CatalogAuth AuthFor(const CatalogAuthConfig& auth);

// Base URI, warehouse and credentials of `region`, with the client's default deadline and
// retry policy (callers shorten them for probes).
CatalogClientOptions CatalogOptionsFor(const RegionConfig& region);

}  // namespace icewarden
