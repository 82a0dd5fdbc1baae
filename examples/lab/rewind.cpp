#include "examples/lab/rewind.h"

#include <limits>
#include <set>
#include <string>

namespace icewarden::lab {
namespace {

using nlohmann::json;

// Attempts per table when a writer moves the replica's pointer between reading it and
// replacing it; each attempt reads the pointer and the owner's history afresh.
constexpr int kAttempts = 3;

constexpr int64_t kEverything = std::numeric_limits<int64_t>::max();  // no replication lag

LabRegion* Find(const std::vector<LabRegion*>& regions, const std::string& name) {
  for (auto* region : regions) {
    if (region->name == name) return region;
  }
  return nullptr;
}

std::set<int64_t> SnapshotIds(const json& metadata) {
  std::set<int64_t> ids;
  for (const auto& snapshot : metadata.value("snapshots", json::array())) {
    ids.insert(snapshot["snapshot-id"].get<int64_t>());
  }
  return ids;
}

bool InHistory(const ReplicationPlan& history, const std::string& location) {
  for (const auto& row : history.rows) {
    if (row.location == location) return true;
  }
  return false;
}

// What GET /lab/state calls diverged: the owner holds the table and the replica's pointer is
// not in the owner's history. (A replica merely behind is not: replication catches it up.)
bool Diverged(CatalogStore& owner, const TableIdent& table, const std::string& replica_location) {
  auto owner_location = owner.CurrentLocation(table);
  if (!owner_location || *owner_location == replica_location) return false;
  return owner.PlanReplication(table, replica_location, kEverything).kind ==
         ReplicationPlan::Kind::kDiverged;
}

// The snapshot ids that only the replica had, in the order its metadata lists them: those of
// its current metadata that are neither in the owner's current metadata nor in the fork base,
// the newest of the replica's metadata files that is in the owner's history too. The fork base
// matters once the owner has expired snapshots they shared: the replica may still have those,
// and they are not the replica's own. Should neither store keep the fork base's JSON (each
// keeps its newest 300 files', and a replica only the newest of each batch replication copied),
// the newest older shared file that has it stands in, and a shared snapshot committed between
// the two that the owner has expired since is listed as well.
json DiscardedSnapshotIds(CatalogStore& replica, CatalogStore& owner, const TableIdent& table,
                          const json& replica_metadata, const ReplicationPlan& history) {
  std::set<std::string> shared;
  for (const auto& row : history.rows) shared.insert(row.location);
  std::set<int64_t> known = SnapshotIds(history.target_metadata);
  auto files = replica.MetadataFiles(table);
  for (auto file = files.rbegin(); file != files.rend(); ++file) {
    if (!shared.count(file->location)) continue;
    auto base = replica.MetadataFile(table, file->location);
    if (!base) base = owner.MetadataFile(table, file->location);
    if (!base) continue;
    known.merge(SnapshotIds(*base));
    break;
  }
  json discarded = json::array();
  for (const auto& snapshot : replica_metadata.value("snapshots", json::array())) {
    int64_t id = snapshot["snapshot-id"].get<int64_t>();
    if (!known.count(id)) discarded.push_back(id);
  }
  return discarded;
}

// Replaces the replica's copy of `table` with the owner's whole history. `entry` stays null
// when the table turned out not to be diverged any more (rewound meanwhile, or gone).
LabStatus RewindTable(LabRegion* replica, LabRegion* owner, const TableIdent& table, json* entry) {
  for (int attempt = 0; attempt < kAttempts; ++attempt) {
    auto current = replica->store->LoadTable(table);
    if (!current) return LabStatus::Ok();
    // What a region lacking the table would receive: every metadata file the owner has had.
    ReplicationPlan history = owner->store->PlanReplication(table, "", kEverything);
    if (history.kind != ReplicationPlan::Kind::kCopy || InHistory(history, current->location)) {
      return LabStatus::Ok();
    }
    json discarded =
        DiscardedSnapshotIds(*replica->store, *owner->store, table, current->metadata, history);
    switch (replica->store->ReseedReplica(table, current->location, history)) {
      case StoreOutcome::kOk:
        *entry = {{"table", table.Dotted()},
                  {"owner", owner->name},
                  {"discarded_snapshot_ids", discarded},
                  {"metadata_location", history.rows.back().location}};
        return LabStatus::Ok();
      case StoreOutcome::kConflict:
        continue;  // a commit landed in the replica meanwhile: look again
      default:
        return LabStatus::Ok();  // the table is gone
    }
  }
  return LabStatus::Error(table.Dotted() + " in " + replica->name +
                          " kept changing while it was being rewound (is a rogue writer still "
                          "writing there?)");
}

}  // namespace

LabStatus RewindReplicas(LabRegion* region, const std::vector<LabRegion*>& regions,
                         const std::map<TableIdent, OwnerDecision>& owners,
                         const std::optional<TableIdent>& only, json* result) {
  // A stopped region takes no part in replication, and a rewind is replication.
  if (!region->up()) return LabStatus::Error("region " + region->name + " is stopped");
  if (only) {
    const std::string dotted = only->Dotted();
    auto decision = owners.find(*only);
    if (decision == owners.end()) return LabStatus::Error("unknown table: " + dotted);
    if (decision->second.owner == region->name) {
      return LabStatus::Error(region->name + " owns " + dotted + "; only a replica can be rewound");
    }
    if (!region->store->CurrentLocation(*only)) {
      return LabStatus::Error(region->name + " does not hold " + dotted +
                              " yet; replication copies it there");
    }
  }
  // Which replicas have diverged, all first: a stopped owner refuses the request before any
  // table has changed.
  struct Target {
    TableIdent table;
    LabRegion* owner;
  };
  std::vector<Target> targets;
  int64_t unchanged = 0;
  for (const auto& [table, decision] : owners) {
    if (only && !(table == *only)) continue;
    if (decision.owner == region->name) continue;
    auto location = region->store->CurrentLocation(table);
    if (!location) continue;  // not here yet: replication creates it
    LabRegion* owner = Find(regions, decision.owner);
    if (owner == nullptr || !Diverged(*owner->store, table, *location)) {
      ++unchanged;
      continue;
    }
    if (!owner->up()) {
      return LabStatus::Error("the owner of " + table.Dotted() + ", " + owner->name +
                              ", is stopped; start it to rewind " + region->name + " from it");
    }
    targets.push_back({table, owner});
  }
  json rewound = json::array();
  for (const auto& target : targets) {
    json entry;
    if (auto status = RewindTable(region, target.owner, target.table, &entry); !status.ok()) {
      return status;
    }
    if (entry.is_null()) {
      ++unchanged;
    } else {
      rewound.push_back(std::move(entry));
    }
  }
  *result = {{"region", region->name}, {"rewound", rewound}, {"unchanged", unchanged}};
  return LabStatus::Ok();
}

}  // namespace icewarden::lab
