#include "orchestrator/api/lag.h"
#include "orchestrator/api/command_body.h"
#include "orchestrator/api/query.h"

#include <algorithm>
#include <cstdio>
#include <iterator>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <tuple>

namespace icewarden {
namespace {

using nlohmann::json;

json SnapshotId(std::int64_t id) { return id < 0 ? json(nullptr) : json(std::to_string(id)); }

json Millis(std::optional<std::chrono::milliseconds> ms) {
  return ms ? json(ms->count()) : json(nullptr);
}

// `now`: when the row was measured (the report's time), for the age of its last comparison.
json TableLagJson(const TableLag& t, UnixMillis now) {
  json ids = json::array();
  for (auto id : t.divergent_snapshot_ids) ids.push_back(std::to_string(id));
  json last_known = nullptr;
  if (t.last_known_at) {
    last_known = {{"at", FormatUnixMillis(*t.last_known_at)},
                  {"at_unix_ms", *t.last_known_at},
                  {"age_ms", std::max<UnixMillis>(0, now - *t.last_known_at)},
                  {"lag_ms", t.last_known_lag.count()},
                  {"missing_commits", t.last_known_missing}};
  }
  return {
      {"table", t.table.ToString()},
      {"namespace", t.table.namespace_levels},
      {"name", t.table.name},
      {"owner", t.owner},
      {"replica", t.replica},
      {"state", LagStateName(t.state)},
      {"owner_uuid", t.owner_uuid},
      {"replica_uuid", t.replica_uuid},
      {"owner_snapshot_id", SnapshotId(t.owner_snapshot_id)},
      {"replica_snapshot_id", SnapshotId(t.replica_snapshot_id)},
      {"missing_commits", t.missing_commits},
      {"oldest_missing_at",
       t.oldest_missing_at ? json(FormatUnixMillis(*t.oldest_missing_at)) : json(nullptr)},
      {"lag_ms", t.lag.count()},
      {"within_max_staleness", t.within_max_staleness},
      {"diverged", t.diverged},
      {"divergent_snapshot_ids", std::move(ids)},
      {"newest_divergent_at",
       t.newest_divergent_at ? json(FormatUnixMillis(*t.newest_divergent_at)) : json(nullptr)},
      {"uuid_mismatch", t.uuid_mismatch},
      {"owner_retention_ms", t.owner_retention.count()},
      {"retention_too_short", t.retention_too_short},
      {"reason", t.reason},
      // For an unknown row: the last round that compared the pair. lag_bound_ms is the most
      // the replica can trail now (null when nothing bounds it); lag_ms for compared rows.
      {"last_known", std::move(last_known)},
      {"lag_bound_ms", Millis(LagUpperBound(t, now))},
  };
}

// `table` is the filter's table, parsed once (nullopt when the filter names none).
bool Matches(const TableLag& t, const LagFilter& f, const std::optional<TableIdent>& table) {
  if (f.table && (!table || t.table != *table)) return false;
  if (f.region && t.owner != *f.region && t.replica != *f.region) return false;
  if (f.state && *f.state != LagStateName(t.state)) return false;
  return true;
}

// Label values escaped as the exposition format requires.
std::string Label(const std::string& v) {
  std::string out;
  for (char c : v) {
    if (c == '\\' || c == '"') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out;
}

std::string Seconds(double s) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.3f", s);
  return buf;
}

}  // namespace

namespace {

// Per (owner, replica) pair over `rows`: how many tables in each state, the commits missing,
// and the worst bound with its table. One pass, no copies: the dashboard's lag page.
json PairsJson(const std::vector<TableLag>& rows, UnixMillis now) {
  struct Pair {
    std::map<std::string, int> states;
    std::int64_t missing = 0;
    std::int64_t worst_bound_ms = -1;
    const TableLag* worst = nullptr;
    int tables = 0, unbounded = 0;
  };
  std::map<std::pair<std::string, std::string>, Pair> pairs;
  for (const TableLag& t : rows) {
    Pair& p = pairs[{t.owner, t.replica}];
    ++p.tables;
    ++p.states[LagStateName(t.state)];
    p.missing += t.missing_commits;
    if (auto bound = LagUpperBound(t, now)) {
      if (bound->count() > p.worst_bound_ms) {
        p.worst_bound_ms = bound->count();
        p.worst = &t;
      }
    } else {
      ++p.unbounded;
    }
  }
  json out = json::array();
  for (const auto& [key, p] : pairs) {
    out.push_back({{"owner", key.first},
                   {"replica", key.second},
                   {"tables", p.tables},
                   {"states", p.states},
                   {"missing_commits", p.missing},
                   {"worst_bound_ms", p.worst ? json(p.worst_bound_ms) : json(nullptr)},
                   {"worst_table", p.worst ? json(p.worst->table.ToString()) : json(nullptr)},
                   {"unbounded", p.unbounded}});
  }
  return out;
}

}  // namespace

json LagReportJson(const LagReport& report, const LagFilter& filter, const LagPage& page) {
  const std::optional<TableIdent> table =
      filter.table ? TableIdent::Parse(*filter.table) : std::nullopt;
  const bool filtered = filter.table || filter.region || filter.state;
  // Unfiltered, the report is summarised in place; a filter copies only the rows it keeps.
  std::vector<TableLag> kept;
  if (filtered) {
    for (const auto& t : report.tables)
      if (Matches(t, filter, table)) kept.push_back(t);
  }
  const std::vector<TableLag>& rows = filtered ? kept : report.tables;
  const ScopeLag s = Summarise(rows, report.at);
  auto first = rows.begin();
  if (page.after_table) {
    first = std::upper_bound(
        rows.begin(), rows.end(), std::tie(*page.after_table, page.after_replica),
        [](const auto& key, const TableLag& t) { return key < std::tie(t.table, t.replica); });
  }
  json tables = json::array();
  auto it = first;
  for (; it != rows.end() && tables.size() < page.limit; ++it)
    tables.push_back(TableLagJson(*it, report.at));
  json next = nullptr;
  if (it != rows.end() && it != first)
    next = {{"table", std::prev(it)->table.ToString()}, {"replica", std::prev(it)->replica}};
  return {
      {"at", FormatUnixMillis(report.at)},
      {"at_unix_ms", report.at},
      {"summary",
       {{"tables", s.tables},
        {"worst_lag_ms", s.worst_lag.count()},
        {"worst_table", s.worst_table ? json(s.worst_table->ToString()) : json(nullptr)},
        {"worst_replica", s.worst_replica.empty() ? json(nullptr) : json(s.worst_replica)},
        {"total_missing", s.total_missing},
        {"any_divergence", s.any_divergence},
        {"complete", s.complete},
        {"all_within_max_staleness", s.all_within_max_staleness},
        // The RPO bound: worst_lag_ms only counts rows compared this round, so while a
        // catalog is away it says 0; this grows with the age of the last comparisons.
        {"worst_bound_ms", s.worst_bound.count()},
        {"worst_bound_table",
         s.worst_bound_table ? json(s.worst_bound_table->ToString()) : json(nullptr)},
        {"worst_bound_replica",
         s.worst_bound_replica.empty() ? json(nullptr) : json(s.worst_bound_replica)},
        {"unbounded", s.unbounded}}},
      {"pairs", PairsJson(rows, report.at)},
      {"region_errors", report.region_errors},
      {"loads",
       {{"sent", report.loads_sent},
        {"not_modified", report.loads_not_modified},
        {"failed", report.loads_failed}}},
      {"unowned_tables", report.unowned_tables},
      {"duration_ms", report.duration.count()},
      {"tables", std::move(tables)},
      {"next_after", std::move(next)},
  };
}

std::string RenderLagMetrics(const LagReport& report) {
  std::string out;
  auto family = [&](const char* name, const char* help) {
    out += std::string("# HELP ") + name + " " + help + "\n# TYPE " + name + " gauge\n";
  };
  // Bounded cardinality: a series per region pair (regions are few) and per table only for
  // the kLagMetricsWorstTables worst rows, so that a 10,000-table lakehouse does not put
  // 40,000 series into Prometheus every scrape. The JSON API has every row.
  struct Pair {
    std::chrono::milliseconds worst{0};
    std::int64_t missing = 0;
    int diverged = 0, retention_too_short = 0, unbounded = 0, tables = 0;
  };
  std::map<std::pair<std::string, std::string>, Pair> pairs;
  struct Worst {
    std::chrono::milliseconds bound;
    const TableLag* row;
  };
  std::vector<Worst> worst;
  for (const auto& t : report.tables) {
    Pair& p = pairs[{t.owner, t.replica}];
    ++p.tables;
    auto bound = LagUpperBound(t, report.at);
    if (bound) {
      p.worst = std::max(p.worst, *bound);
      worst.push_back({*bound, &t});
    } else {
      ++p.unbounded;
    }
    const bool known = t.state == LagState::kBehind || t.state == LagState::kCaughtUp;
    p.missing += known ? t.missing_commits : t.last_known_missing;
    p.diverged += t.diverged || t.uuid_mismatch ? 1 : 0;
    p.retention_too_short += t.retention_too_short ? 1 : 0;
  }
  auto per_pair = [&](const char* name, const char* help, auto value) {
    family(name, help);
    for (const auto& [key, p] : pairs)
      out += std::string(name) + "{owner=\"" + Label(key.first) + "\",replica=\"" +
             Label(key.second) + "\"} " + value(p) + "\n";
  };
  per_pair("icewarden_replication_lag_seconds",
           "The worst lag bound of the pair's tables: how far the replica trails the owner (0 "
           "when caught up; unknown rows count with their last known lag plus its age).",
           [](const Pair& p) { return Seconds(p.worst.count() / 1000.0); });
  per_pair("icewarden_replication_missing_commits",
           "Owner commits the replica does not have yet, summed over the pair's tables.",
           [](const Pair& p) { return std::to_string(p.missing); });
  per_pair("icewarden_replication_unbounded_tables",
           "The pair's tables whose lag nothing bounds (never compared, diverged, another table).",
           [](const Pair& p) { return std::to_string(p.unbounded); });
  per_pair("icewarden_replication_diverged_tables",
           "The pair's tables where the replica has commits the owner never had, or is another "
           "table.",
           [](const Pair& p) { return std::to_string(p.diverged); });
  per_pair("icewarden_replication_retention_too_short_tables",
           "The pair's tables whose snapshot retention is shorter than max staleness plus the "
           "margin.",
           [](const Pair& p) { return std::to_string(p.retention_too_short); });
  const std::size_t keep = std::min(worst.size(), kLagMetricsWorstTables);
  std::partial_sort(worst.begin(), worst.begin() + keep, worst.end(),
                    [](const Worst& a, const Worst& b) {
                      if (a.bound != b.bound) return a.bound > b.bound;
                      return a.row->table.ToString() < b.row->table.ToString();
                    });
  family("icewarden_replication_worst_table_lag_seconds",
         "Lag bound of the tables that trail the most (at most 10 series, worst first).");
  for (std::size_t i = 0; i < keep; ++i) {
    const TableLag& t = *worst[i].row;
    out += "icewarden_replication_worst_table_lag_seconds{table=\"" + Label(t.table.ToString()) +
           "\",owner=\"" + Label(t.owner) + "\",replica=\"" + Label(t.replica) + "\"} " +
           Seconds(worst[i].bound.count() / 1000.0) + "\n";
  }

  std::map<std::string, int> by_state;
  for (auto s : {LagState::kNotSameTable, LagState::kDiverged, LagState::kUnknown,
                 LagState::kNotInOwner, LagState::kBehind, LagState::kCaughtUp})
    by_state[LagStateName(s)] = 0;
  for (const auto& t : report.tables) ++by_state[LagStateName(t.state)];
  family("icewarden_replication_tables", "Table/replica pairs by lag state in the last round.");
  for (const auto& [state, n] : by_state)
    out += "icewarden_replication_tables{state=\"" + state + "\"} " + std::to_string(n) + "\n";

  family("icewarden_lag_round_timestamp_seconds", "When the last lag round finished.");
  out += "icewarden_lag_round_timestamp_seconds " + Seconds(report.at / 1000.0) + "\n";
  family("icewarden_lag_round_duration_seconds", "How long the last lag round took.");
  out += "icewarden_lag_round_duration_seconds " + Seconds(report.duration.count() / 1000.0) + "\n";
  family("icewarden_lag_loads", "Table loads in the last lag round, by result.");
  out += "icewarden_lag_loads{result=\"sent\"} " + std::to_string(report.loads_sent) + "\n";
  out += "icewarden_lag_loads{result=\"not_modified\"} " +
         std::to_string(report.loads_not_modified) + "\n";
  out += "icewarden_lag_loads{result=\"failed\"} " + std::to_string(report.loads_failed) + "\n";
  return out;
}

std::string RenderProbeMetrics(const std::map<std::string, ProbeRoundView>& rounds) {
  std::string out =
      "# HELP icewarden_probe_round_success 1 when the region's latest probe round passed.\n"
      "# TYPE icewarden_probe_round_success gauge\n";
  for (const auto& [region, r] : rounds)
    out += "icewarden_probe_round_success{region=\"" + Label(region) + "\"} " + (r.ok ? "1" : "0") +
           "\n";
  out +=
      "# HELP icewarden_probe_round_duration_seconds How long the region's latest probe round "
      "took.\n"
      "# TYPE icewarden_probe_round_duration_seconds gauge\n";
  for (const auto& [region, r] : rounds)
    out += "icewarden_probe_round_duration_seconds{region=\"" + Label(region) + "\"} " +
           Seconds(r.latency.count() / 1000.0) + "\n";
  return out;
}

std::string RenderUnparsedMetrics(
    const std::map<std::pair<std::string, std::string>, std::uint64_t>& counts) {
  std::string out =
      "# HELP icewarden_catalog_responses_unparsed_total Answers from a region's catalog that "
      "icewarden could not parse, by what was expected; the catalog is alive.\n"
      "# TYPE icewarden_catalog_responses_unparsed_total counter\n";
  for (const auto& [key, n] : counts)
    out += "icewarden_catalog_responses_unparsed_total{region=\"" + Label(key.first) +
           "\",kind=\"" + Label(key.second) + "\"} " + std::to_string(n) + "\n";
  return out;
}

ApiResponse HandleLagList(const LiveView* live, const QueryParams& query) {
  auto report = live != nullptr ? live->Lag() : nullptr;
  if (!report) {
    return JsonErrorResponse(503, "not_ready",
                             "no replication-lag round has finished yet; rounds run every "
                             "policies.lag_interval once the daemon has reached the catalogs");
  }
  LagFilter filter;
  for (auto [name, field, example] : {std::tuple{"table", &filter.table, "table=sales.orders"},
                                      std::tuple{"region", &filter.region, "region=eu-central-1"},
                                      std::tuple{"state", &filter.state, "state=behind"}}) {
    auto v = query.Text(name, example);
    if (!v.ok()) return BadRequestResponse(v.status().message());
    *field = *v;
  }
  if (query.Get("after_replica") && !query.Get("after"))
    return BadRequestResponse(
        "after_replica goes with after: pass both from next_after of the previous page, e.g. "
        "after=sales.orders&after_replica=eu-central-1");
  LagPage page;
  if (auto after = query.Get("after")) {
    page.after_table = TableIdent::Parse(*after);
    if (!page.after_table) {
      return BadRequestResponse(
          "after must be a table name with its namespace, e.g. after=sales.orders "
          "(pass next_after.table of the previous page, and next_after.replica as "
          "after_replica)");
    }
    if (auto replica = query.Get("after_replica")) page.after_replica = *replica;
  }
  auto limit = query.Integer("limit", kTablePageDefault, 1, kTablePageMax);
  if (!limit.ok()) return BadRequestResponse(limit.status().message());
  page.limit = static_cast<std::size_t>(*limit);
  json body = LagReportJson(*report, filter, page);
  // A diverged row the split-brain watch acted on: a second writer, not a lagging replica.
  const auto marks = live->SplitBrain();
  for (json& row : body["tables"]) {
    row["split_brain"] = nullptr;
    if (!row.value("diverged", false)) continue;
    auto it = marks.find({row.value("table", ""), row.value("replica", "")});
    if (it == marks.end()) continue;
    row["split_brain"] = {{"detected_at", FormatUnixMillis(it->second.detected_at)},
                          {"reason", it->second.reason}};
  }
  return JsonResponse(200, body);
}

}  // namespace icewarden
