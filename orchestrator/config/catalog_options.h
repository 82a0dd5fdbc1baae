// How the daemon reaches a region's catalog, from its config: one place for the probes,
// the lag monitor and the actions, so they all authenticate and
// speak TLS the same way.
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <vector>

#include "health/catalog_client.h"
#include "orchestrator/config/config.h"

namespace icewarden {

CatalogAuth AuthFor(const CatalogAuthConfig& auth);
TlsOptions TlsFor(const CatalogTlsConfig& tls);

// Base URI, warehouse, credentials and TLS options of `region`, with the client's default deadline
// and retry policy (callers shorten them for probes).
CatalogClientOptions CatalogOptionsFor(const RegionConfig& region);

// One line per region whose catalog certificate is not verified (tls.insecure_skip_verify),
// naming the region: what `serve` logs as a warning at start.
std::vector<std::string> InsecureTlsWarnings(const Config& config);

}  // namespace icewarden
