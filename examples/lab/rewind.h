// Rewind: re-seeds a region's diverged replicas from their owners, the lab's stand-in for what
// reconciling by hand, or accepting the loss of a replica's divergent commits, comes to in
// production: re-registering the owner's metadata in the replica's catalog. The replica's copy
// of each table is replaced by the owner's current state exactly as replication copies a table
// to a region that lacks it (same table-uuid, metadata files, snapshots, refs, logs and
// properties; the replica's own metadata files are forgotten), and the snapshots only the
// replica had are reported. Replicas that have not diverged are left to replication, which
// fast-forwards a rewound replica like any other.
//
// Thread-safety: safe to call from any thread, alongside replication and the writers: a
// table's pointer is replaced compare-and-swap, like a commit.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <vector>

#include "examples/lab/lab_region.h"
#include "examples/lab/lab_status.h"
#include "examples/lab/ownership.h"
#include "examples/lab/table_ident.h"

namespace icewarden::lab {

// Rewinds every table `region` holds, does not own (per `owners`, from Replicator::Owners) and
// has diverged in, or only `only`; `regions` are all the lab's. Fills `result` with
//   {"region", "rewound": [{"table", "owner", "discarded_snapshot_ids", "metadata_location"}],
//    "unchanged": replicas held here that had not diverged}.
// Errors, before anything changed: the region is stopped; `only` is unknown, owned by
// `region` or not held there yet; the owner of a diverged table is stopped. A table whose
// pointer kept moving through every attempt (a rogue writer still on) fails the call after the
// tables before it were rewound.
LabStatus RewindReplicas(LabRegion* region, const std::vector<LabRegion*>& regions,
                         const std::map<TableIdent, OwnerDecision>& owners,
                         const std::optional<TableIdent>& only, nlohmann::json* result);

}  // namespace icewarden::lab
