#include "health/replication_lag.h"

#include <algorithm>
#include <charconv>
#include <map>
#include <set>

namespace icewarden {
namespace {

// One commit on a main lineage. seq is absent in format v1 and for snapshot-log entries
// whose snapshot is no longer listed.
struct Commit {
  std::int64_t id = 0;
  std::int64_t timestamp_ms = 0;
  std::optional<std::int64_t> seq;
};

std::optional<std::int64_t> CurrentSnapshot(const TableSnapshotView& v) {
  if (v.current_snapshot_id && *v.current_snapshot_id >= 0) return v.current_snapshot_id;
  if (auto main = v.refs.find("main"); main != v.refs.end() && main->second >= 0) {
    return main->second;
  }
  return std::nullopt;
}

std::map<std::int64_t, const SnapshotInfo*> ById(const TableSnapshotView& v) {
  std::map<std::int64_t, const SnapshotInfo*> out;
  for (const auto& s : v.snapshots) out[s.snapshot_id] = &s;
  return out;
}

// Oldest first; see "Main lineage" in the header.
std::vector<Commit> MainLineage(const TableSnapshotView& v) {
  std::vector<Commit> out;
  const auto current = CurrentSnapshot(v);
  if (!current) return out;
  const auto by_id = ById(v);
  if (by_id.count(*current)) {
    std::set<std::int64_t> seen;  // a parent cycle is corrupt metadata; do not loop on it
    for (auto at = by_id.find(*current); at != by_id.end() && seen.insert(at->first).second;) {
      const SnapshotInfo& s = *at->second;
      out.push_back({s.snapshot_id, s.timestamp_ms, s.sequence_number});
      if (!s.parent_snapshot_id) break;
      at = by_id.find(*s.parent_snapshot_id);
    }
    std::reverse(out.begin(), out.end());
    return out;
  }
  std::set<std::int64_t> seen;
  for (const auto& e : v.snapshot_log) {
    if (!seen.insert(e.snapshot_id).second) continue;
    auto s = by_id.find(e.snapshot_id);
    out.push_back({e.snapshot_id, e.timestamp_ms,
                   s == by_id.end() ? std::nullopt : s->second->sequence_number});
  }
  return out;
}

// Every snapshot id a catalog knows for the table.
std::set<std::int64_t> KnownSnapshots(const TableSnapshotView& v) {
  std::set<std::int64_t> out;
  for (const auto& s : v.snapshots) out.insert(s.snapshot_id);
  for (const auto& e : v.snapshot_log) out.insert(e.snapshot_id);
  for (const auto& [ref, id] : v.refs) out.insert(id);
  return out;
}

bool ReplicaStateIsAPastOwnerState(const TableSnapshotView& owner,
                                   const TableSnapshotView& replica) {
  const std::string& file = replica.metadata_location;
  if (file.empty()) return false;
  if (file == owner.metadata_location) return true;
  return std::any_of(owner.metadata_log.begin(), owner.metadata_log.end(),
                     [&](const MetadataLogEntry& e) { return e.metadata_file == file; });
}

// Divergence rules 2 and 3 from the header, for one snapshot the owner does not know.
bool LooksExpiredByOwner(const Commit& c, const std::optional<Commit>& owner_floor,
                         std::chrono::milliseconds retention, UnixMillis now) {
  if (c.timestamp_ms <= now - retention.count()) return true;
  if (!owner_floor) return false;
  if (c.seq && owner_floor->seq) return *c.seq < *owner_floor->seq;
  return c.timestamp_ms < owner_floor->timestamp_ms;
}

std::vector<std::int64_t> DivergentSnapshots(const TableSnapshotView& owner,
                                             const std::vector<Commit>& owner_lineage,
                                             const TableSnapshotView& replica,
                                             const std::vector<Commit>& replica_lineage,
                                             std::chrono::milliseconds retention, UnixMillis now) {
  if (ReplicaStateIsAPastOwnerState(owner, replica)) return {};
  const auto owner_known = KnownSnapshots(owner);
  std::optional<Commit> floor;
  if (!owner_lineage.empty()) floor = owner_lineage.front();
  std::map<std::int64_t, Commit> candidates;
  for (const auto& s : replica.snapshots) {
    candidates[s.snapshot_id] = {s.snapshot_id, s.timestamp_ms, s.sequence_number};
  }
  for (const auto& c : replica_lineage) candidates.try_emplace(c.id, c);
  std::vector<std::int64_t> out;
  for (const auto& [id, c] : candidates) {
    if (owner_known.count(id)) continue;
    if (!LooksExpiredByOwner(c, floor, retention, now)) out.push_back(id);
  }
  return out;  // ascending: std::map order
}

std::string Join(const std::vector<std::int64_t>& ids) {
  std::string out;
  for (size_t i = 0; i < ids.size(); ++i) out += (i ? ", " : "") + std::to_string(ids[i]);
  return out;
}

std::string Plural(int n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

}  // namespace

const char* LagStateName(LagState s) {
  switch (s) {
    case LagState::kNotSameTable:
      return "not_same_table";
    case LagState::kDiverged:
      return "diverged";
    case LagState::kUnknown:
      return "unknown";
    case LagState::kNotInOwner:
      return "not_in_owner";
    case LagState::kBehind:
      return "behind";
    case LagState::kCaughtUp:
      return "caught_up";
  }
  return "unknown";
}

std::chrono::milliseconds SnapshotRetention(const TableSnapshotView& owner_view) {
  auto p = owner_view.properties.find("history.expire.max-snapshot-age-ms");
  if (p == owner_view.properties.end()) return kDefaultSnapshotRetention;
  std::int64_t ms = -1;
  const std::string& s = p->second;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), ms);
  if (ec != std::errc() || end != s.data() + s.size() || ms < 0) return kDefaultSnapshotRetention;
  return std::chrono::milliseconds(ms);
}

TableLag CompareReplica(const TableIdent& table, const std::string& owner,
                        const TableSnapshotView& owner_view, const std::string& replica,
                        const TableSnapshotView& replica_view, UnixMillis now,
                        const LagPolicy& policy) {
  TableLag out;
  out.table = table;
  out.owner = owner;
  out.replica = replica;
  out.owner_uuid = owner_view.table_uuid;
  out.replica_uuid = replica_view.table_uuid;
  out.owner_snapshot_id = CurrentSnapshot(owner_view).value_or(-1);
  out.replica_snapshot_id = CurrentSnapshot(replica_view).value_or(-1);
  out.owner_retention = SnapshotRetention(owner_view);
  const std::string name = table.ToString();

  std::string retention_note;
  const auto needed = policy.max_staleness + policy.retention_margin;
  if (out.owner_retention < needed) {
    out.retention_too_short = true;
    retention_note = "; snapshot retention " + FormatLagDuration(out.owner_retention) +
                     " is shorter than max staleness " + FormatLagDuration(policy.max_staleness) +
                     " + margin " + FormatLagDuration(policy.retention_margin) +
                     ": replicas may lose snapshots before they catch up";
  }

  if (!out.owner_uuid.empty() && !out.replica_uuid.empty() && out.owner_uuid != out.replica_uuid) {
    out.uuid_mismatch = true;
    out.state = LagState::kNotSameTable;
    out.reason = name + ": NOT THE SAME TABLE: " + owner + " has table-uuid " + out.owner_uuid +
                 ", " + replica + " has " + out.replica_uuid + retention_note;
    return out;
  }

  const auto owner_lineage = MainLineage(owner_view);
  const auto replica_lineage = MainLineage(replica_view);
  std::set<std::int64_t> on_replica_line;
  for (const auto& c : replica_lineage) on_replica_line.insert(c.id);
  size_t first_missing = 0;  // index into owner_lineage
  for (size_t i = owner_lineage.size(); i-- > 0;) {
    if (on_replica_line.count(owner_lineage[i].id)) {
      first_missing = i + 1;
      break;
    }
  }
  out.missing_commits = static_cast<int>(owner_lineage.size() - first_missing);
  if (out.missing_commits > 0) {
    out.oldest_missing_at = owner_lineage[first_missing].timestamp_ms;
    out.lag = std::chrono::milliseconds(std::max<std::int64_t>(0, now - *out.oldest_missing_at));
  }
  out.within_max_staleness = out.lag <= policy.max_staleness;

  out.divergent_snapshot_ids = DivergentSnapshots(owner_view, owner_lineage, replica_view,
                                                  replica_lineage, out.owner_retention, now);
  out.diverged = !out.divergent_snapshot_ids.empty();

  for (const SnapshotInfo& snap : replica_view.snapshots) {
    if (!std::binary_search(out.divergent_snapshot_ids.begin(), out.divergent_snapshot_ids.end(),
                            snap.snapshot_id))
      continue;
    if (!out.newest_divergent_at || snap.timestamp_ms > *out.newest_divergent_at)
      out.newest_divergent_at = snap.timestamp_ms;
  }
  for (const SnapshotLogEntry& e : replica_view.snapshot_log) {
    if (out.newest_divergent_at ||
        !std::binary_search(out.divergent_snapshot_ids.begin(), out.divergent_snapshot_ids.end(),
                            e.snapshot_id))
      continue;
    out.newest_divergent_at = e.timestamp_ms;  // no snapshot list: the log's time
  }

  if (out.diverged) {
    const auto& ids = out.divergent_snapshot_ids;
    const bool main_line = std::find(ids.begin(), ids.end(), out.replica_snapshot_id) != ids.end();
    out.state = LagState::kDiverged;
    out.reason = name + ": DIVERGED: " + replica + " has " +
                 (ids.size() == 1 ? "snapshot " : "snapshots ") + Join(ids) + " that " + owner +
                 " never had (two histories under one name" +
                 (main_line ? "" : "; not on the replica's current lineage") + ")";
  } else if (out.missing_commits > 0) {
    out.state = LagState::kBehind;
    out.reason = name + ": " + replica + " is " + Plural(out.missing_commits, "commit", "commits") +
                 " behind " + owner + ", oldest " + FormatLagDuration(out.lag) + " ago";
    if (!out.within_max_staleness) {
      out.reason += ", over the max staleness of " + FormatLagDuration(policy.max_staleness);
    }
    const bool shares_history = first_missing > 0;
    if (!shares_history && out.replica_snapshot_id >= 0) {
      out.reason += " (its current snapshot " + std::to_string(out.replica_snapshot_id) +
                    " predates " + owner +
                    "'s retained history, so it is at least this far behind)";
    }
  } else {
    out.state = LagState::kCaughtUp;
    out.reason =
        name + ": " + replica + " is caught up with " + owner +
        (out.owner_snapshot_id >= 0 ? " at snapshot " + std::to_string(out.owner_snapshot_id)
                                    : std::string(" (no snapshots)"));
  }
  out.reason += retention_note;
  return out;
}

TableLag UncomparedLag(const TableIdent& table, const std::string& owner,
                       const std::string& replica, LagState state, const std::string& why) {
  TableLag out;
  out.table = table;
  out.owner = owner;
  out.replica = replica;
  out.state = state;
  out.within_max_staleness = false;
  out.reason = table.ToString() + ": " + why;
  return out;
}

ScopeLag Summarise(const std::vector<TableLag>& rows, std::optional<UnixMillis> now) {
  ScopeLag out;
  for (const auto& r : rows) {
    std::optional<std::chrono::milliseconds> bound;
    if (now || r.state != LagState::kUnknown) bound = LagUpperBound(r, now.value_or(0));
    if (!bound) {
      ++out.unbounded;
    } else if (*bound > out.worst_bound) {
      out.worst_bound = *bound;
      out.worst_bound_table = r.table;
      out.worst_bound_replica = r.replica;
    }
    ++out.tables;
    out.total_missing += r.missing_commits;
    if (r.diverged || r.uuid_mismatch) out.any_divergence = true;
    if (r.state == LagState::kUnknown) out.complete = false;
    const bool lag_known = r.state != LagState::kUnknown && r.state != LagState::kNotInOwner &&
                           r.state != LagState::kNotSameTable;
    if (lag_known && !r.within_max_staleness) out.all_within_max_staleness = false;
    if (r.missing_commits > 0 && (!out.worst_table || r.lag > out.worst_lag)) {
      out.worst_lag = r.lag;
      out.worst_table = r.table;
      out.worst_replica = r.replica;
    }
  }
  return out;
}

std::string FormatLagDuration(std::chrono::milliseconds d) {
  std::int64_t ms = d.count();
  // Appending rather than `"-" + FormatLagDuration(-d)`: GCC 12 at -O3 inlines that
  // operator+ into a memcpy it then flags with a false -Wrestrict (GCC bug 105651).
  if (ms < 0) {
    std::string out = "-";
    out += FormatLagDuration(-d);
    return out;
  }
  if (ms < 1000) return std::to_string(ms) + "ms";
  struct Unit {
    std::int64_t ms;
    const char* suffix;
  };
  static constexpr Unit kUnits[] = {
      {86'400'000, "d"}, {3'600'000, "h"}, {60'000, "m"}, {1'000, "s"}};
  std::string out;
  int parts = 0;
  for (const Unit& u : kUnits) {
    if (parts == 2) break;
    const std::int64_t n = ms / u.ms;
    if (n == 0 && parts == 0) continue;
    if (n > 0) out += std::to_string(n) + u.suffix;
    ms -= n * u.ms;
    ++parts;  // a zero after the leading unit still counts: "1d" not "1d5s"
  }
  return out;
}

}  // namespace icewarden

namespace icewarden {

std::optional<std::chrono::milliseconds> LagUpperBound(const TableLag& row, UnixMillis now) {
  switch (row.state) {
    case LagState::kBehind:
    case LagState::kCaughtUp:
      return row.lag;
    case LagState::kUnknown:
      if (!row.last_known_at) return std::nullopt;
      return row.last_known_lag +
             std::chrono::milliseconds(std::max<UnixMillis>(0, now - *row.last_known_at));
    default:
      return std::nullopt;
  }
}

}  // namespace icewarden
