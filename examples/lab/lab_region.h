// LabRegion: the parts of one lab region, owned together by Lab: its SQLite catalog store, the
// REST API over it and the listener serving that API. The replicator and the workload reach the
// store directly (the lab's in-process path, as real replication copies metadata files).
#pragma once

#include <memory>
#include <string>

#include "examples/lab/catalog_api.h"
#include "examples/lab/catalog_store.h"
#include "examples/lab/region_server.h"

namespace icewarden::lab {

struct LabRegion {
  std::string name;
  std::unique_ptr<CatalogStore> store;
  std::unique_ptr<CatalogApi> api;
  std::unique_ptr<RegionServer> server;

  // A stopped region neither serves, nor writes, nor takes part in replication.
  bool up() const { return server && server->running(); }
};

}  // namespace icewarden::lab
