// Observations as the API shows them: JSON for GET /api/v1/lag, and the lag and probe
// families of /metrics.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>

#include <nlohmann/json_fwd.hpp>

#include "health/lag_monitor.h"
#include "orchestrator/api/api.h"
#include "orchestrator/watch/live_view.h"

namespace icewarden {

class QueryParams;

struct LagFilter {
  std::optional<std::string> table;   // dotted name
  std::optional<std::string> region;  // owner or replica
  std::optional<std::string> state;   // LagStateName
};

// One page of rows, in the report's (table, replica) order: at most `limit` rows after the
// row (after_table, after_replica), exclusive.
struct LagPage {
  std::optional<TableIdent> after_table;
  std::string after_replica;
  std::size_t limit = 1000;
};

// {"at", "summary": {...}, "pairs": [{owner, replica, tables, states: {state: n},
//  missing_commits, worst_bound_ms, worst_table, unbounded}], "region_errors",
//  "loads": {...}, "tables": [TableLag...],
//  "next_after": {"table", "replica"} | null}. The summary covers every row the filter
// matches, not only the page; its worst_bound_ms (with unbounded, the rows nothing bounds)
// is the RPO bound while rows are unknown. Rows carry lag_bound_ms and, when unknown,
// last_known {at, at_unix_ms, age_ms, lag_ms, missing_commits} (null when never compared).
// Snapshot ids are strings: they are 63-bit and lose precision as JSON numbers.
nlohmann::json LagReportJson(const LagReport& report, const LagFilter& filter,
                             const LagPage& page = {});

// How many tables the worst-lag family names: the one per-table family, kept bounded.
inline constexpr std::size_t kLagMetricsWorstTables = 10;

// The lag families, with # HELP and # TYPE, for appending to the /metrics page. Per region
// pair (owner, replica), never per table, except the kLagMetricsWorstTables worst:
//   icewarden_replication_lag_seconds{owner,replica}                 gauge, worst bound
//   icewarden_replication_missing_commits{owner,replica}             gauge, sum
//   icewarden_replication_unbounded_tables{owner,replica}            gauge
//   icewarden_replication_diverged_tables{owner,replica}             gauge
//   icewarden_replication_retention_too_short_tables{owner,replica}  gauge
//   icewarden_replication_worst_table_lag_seconds{table,owner,replica} gauge, <= 10 series
//   icewarden_replication_tables{state}                           gauge
//   icewarden_lag_round_timestamp_seconds                         gauge
//   icewarden_lag_round_duration_seconds                          gauge
//   icewarden_lag_loads{result}                                   gauge, last round
std::string RenderLagMetrics(const LagReport& report);

// GET /api/v1/lag: ?table= &region= &state= &after=a.b.t &after_replica=R &limit=1..10000
// (1000): one page of LagReportJson, diverged rows marked with the split-brain watch's
// finding; 503 until the first round has finished (or without `live`).
ApiResponse HandleLagList(const LiveView* live, const QueryParams& query);

// The latest probe round per region:
//   icewarden_probe_round_success{region}          gauge 0/1
//   icewarden_probe_round_duration_seconds{region} gauge
std::string RenderProbeMetrics(const std::map<std::string, ProbeRoundView>& rounds);

// Answers icewarden could not parse, by region and what was expected (LiveView::CountUnparsed):
//   icewarden_catalog_responses_unparsed_total{region,kind}  counter
std::string RenderUnparsedMetrics(
    const std::map<std::pair<std::string, std::string>, std::uint64_t>& counts);

}  // namespace icewarden
