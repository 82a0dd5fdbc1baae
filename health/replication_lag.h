// Replication lag between an owner's catalog and a replica's, for one table, computed from
// what each catalog says (TableSnapshotView). Pure functions: no I/O, no clock (the caller
// passes `now`). LagMonitor (health/lag_monitor.h) feeds them; the orchestrator reads the
// results as the RPO of a failover (DESIGN.md, "Iceberg REST catalog usage").
// Thread-safety: plain values and pure functions.
//
// Definitions used throughout:
//
// Main lineage: walk parent-snapshot-id from the current snapshot (current-snapshot-id, or
// refs["main"] when that is absent) through the retained snapshots, oldest first. The walk
// stops at the first parent the catalog no longer has (expired). When the current snapshot
// is not among `snapshots` at all (a catalog that returned no snapshot list), the snapshot
// log in its order stands in for the lineage.
//
// Missing commits: the owner's main-lineage snapshots after the newest one that is also on
// the replica's main lineage (all of them when none is), in commit order. Measuring from
// the last shared snapshot rather than by set difference keeps expiry on either side from
// counting as lag: a replica that expired old snapshots is not behind on them.
// oldest_missing_at is the first missing commit's timestamp; lag = now - oldest_missing_at
// (never negative: writers' clocks may run ahead of ours), 0 when caught up. When the owner
// has expired part of what the replica lacks, missing_commits counts only what the owner
// still retains, so it is a lower bound, and the reason says the replica's current snapshot
// predates the owner's retained history.
//
// Divergence: a snapshot the replica has (in its snapshots or on its main lineage) that the
// owner does not know (not in its snapshots, snapshot log or refs) was either expired by the
// owner or never the owner's. We call it divergent UNLESS one of these shows it is expired
// history:
//  1. the replica's metadata file is the owner's current one or is in the owner's metadata
//     log: the replica's whole state is a past state of the owner, so everything in it was
//     the owner's (works when both catalogs name the same metadata paths);
//  2. it is older than the oldest snapshot on the owner's retained main lineage, comparing
//     sequence numbers when both have them (the catalog's commit order) and timestamps
//     otherwise (writers' clocks; format v1 has no sequence numbers). Expiry removes the old
//     end of the lineage; the owner keeps every main-line commit newer than that floor, so an
//     unknown snapshot at or above it was never on the owner's main line;
//  3. it is older than now - the owner's retention (history.expire.max-snapshot-age-ms):
//     expire_snapshots may have removed it as an orphan (rolled back, or on a branch) even
//     though older lineage was kept by min-snapshots-to-keep.
// Why: a false "DIVERGED" alarms over routine maintenance and blocks failovers; a rogue
// commit made in the replica since the owner's oldest retained snapshot, the case that
// matters, is always caught. Blind spot: a rogue commit older than both the owner's retained
// lineage and its retention looks exactly like expired history in catalog metadata.
//
// A different table-uuid means the two catalogs hold different tables under one name:
// uuid_mismatch, and no lineage comparison is made (its numbers would mean nothing).
//
// Retention: history.expire.max-snapshot-age-ms from the owner's properties (Iceberg's
// default of 5 days when absent or unparsable) must be at least max_staleness +
// retention_margin, otherwise expiry in the owner can delete files a lagging replica's
// readers still use (the "divergent maintenance" failure).
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "health/catalog_model.h"
#include "state/clock.h"
#include "state/types.h"

namespace icewarden {

struct LagPolicy {
  // The most a replica may trail its owner before it is out of bounds (alerts, guards).
  std::chrono::milliseconds max_staleness{std::chrono::minutes(15)};
  // Extra snapshot retention demanded on top of max_staleness.
  std::chrono::milliseconds retention_margin{std::chrono::hours(1)};
};

// Iceberg's default for history.expire.max-snapshot-age-ms: 5 days.
inline constexpr std::chrono::milliseconds kDefaultSnapshotRetention{432'000'000};

// What one row of a lag report says, most severe first in this order of precedence.
enum class LagState {
  kNotSameTable,  // uuid_mismatch
  kDiverged,      // the replica has commits the owner never had
  kUnknown,       // a catalog could not be read; see reason
  kNotInOwner,    // the replica has the table, the owner's catalog does not
  kBehind,        // missing_commits > 0
  kCaughtUp,
};
// "not_same_table", "diverged", "unknown", "not_in_owner", "behind", "caught_up"
const char* LagStateName(LagState s);

struct TableLag {
  TableIdent table{};
  std::string owner{}, replica{};  // region names
  std::string owner_uuid{}, replica_uuid{};
  LagState state = LagState::kCaughtUp;
  std::int64_t owner_snapshot_id = -1;  // current snapshot, -1 when none (or unknown)
  std::int64_t replica_snapshot_id = -1;
  int missing_commits = 0;
  std::optional<UnixMillis> oldest_missing_at{};
  std::chrono::milliseconds lag{0};
  // lag <= max_staleness; false whenever the lag is not known (unknown, not the same
  // table, not in owner). Divergence is reported separately and does not clear this.
  bool within_max_staleness = false;
  bool diverged = false;
  std::vector<std::int64_t> divergent_snapshot_ids{};  // ascending
  // The newest divergent snapshot's timestamp-ms (the writer's clock): a commit after the
  // table's ownership last changed is a second writer (orchestrator/watch/split_brain.h).
  std::optional<UnixMillis> newest_divergent_at{};
  bool uuid_mismatch = false;
  std::chrono::milliseconds owner_retention{0};  // shown next to the lag on purpose
  bool retention_too_short = false;
  // One sentence for people, starting with the table:
  // "sales.orders: eu-central-1 is 3 commits behind us-east-1, oldest 42s ago"
  std::string reason{};
  // For a row that could not be compared this round (kUnknown), what the last round that
  // did compare the pair said: its lag and missing commits, and when it was measured. The
  // RPO of promoting the replica now is at most last_known_lag + (now - last_known_at).
  std::optional<UnixMillis> last_known_at{};
  std::chrono::milliseconds last_known_lag{0};
  int last_known_missing = 0;
};

// The most this row's replica can trail its owner as of `now`: the lag when it was compared
// this round; for an uncompared row with a last known comparison, that lag plus the time
// since; nullopt when nothing bounds it (never compared, diverged, another table).
std::optional<std::chrono::milliseconds> LagUpperBound(const TableLag& row, UnixMillis now);

// Compares one replica's view of `table` with its owner's, as of `now`. Never fails: odd
// input (no snapshots, a current snapshot missing from the list) degrades to the fallbacks
// described above.
TableLag CompareReplica(const TableIdent& table, const std::string& owner,
                        const TableSnapshotView& owner_view, const std::string& replica,
                        const TableSnapshotView& replica_view, UnixMillis now,
                        const LagPolicy& policy);

// A row for a pair that could not be compared: state kUnknown or kNotInOwner (any other
// state is a caller bug), with the reason after "table: ".
TableLag UncomparedLag(const TableIdent& table, const std::string& owner,
                       const std::string& replica, LagState state, const std::string& why);

// The retention the owner's properties ask for (kDefaultSnapshotRetention when absent or
// not a non-negative integer).
std::chrono::milliseconds SnapshotRetention(const TableSnapshotView& owner_view);

// A lag table's worst and totals: the RPO of a failover over these tables is worst_lag,
// provided complete (no row unknown; otherwise worst_lag is only a lower bound).
struct ScopeLag {
  std::chrono::milliseconds worst_lag{0};
  std::optional<TableIdent> worst_table{};  // nullopt when every row is caught up
  std::string worst_replica{};
  int total_missing = 0;
  bool any_divergence = false;           // diverged or not the same table
  bool complete = true;                  // no unknown rows
  bool all_within_max_staleness = true;  // over rows whose lag is known
  int tables = 0;                        // rows summarised
  // The worst LagUpperBound over the rows that have one, as of Summarise's `now`: with
  // unbounded == 0 the RPO of a failover over these tables is at most worst_bound, even
  // while some are unknown. When every row is behind or caught up, it equals worst_lag.
  std::chrono::milliseconds worst_bound{0};
  std::optional<TableIdent> worst_bound_table{};  // nullopt when no bound is above 0
  std::string worst_bound_replica{};
  int unbounded = 0;  // rows nothing bounds: never compared, diverged, another table, ...
};

// `now` is when the rows were measured (LagReport::at): an unknown row's bound grows with
// the time since its last comparison. Without it, unknown rows count as unbounded.
ScopeLag Summarise(const std::vector<TableLag>& rows, std::optional<UnixMillis> now = std::nullopt);

// "850ms", "42s", "45m", "1h30m", "5d": the two most significant units, truncated.
std::string FormatLagDuration(std::chrono::milliseconds d);

}  // namespace icewarden
