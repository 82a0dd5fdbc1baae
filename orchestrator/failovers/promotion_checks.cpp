// What FailoverService checks right before a promotion, and the fencing evidence it
// waits for.
#include "orchestrator/failovers/failover_service.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <set>
#include <unordered_set>

#include "actions/action.h"
#include "actions/catalog_scope.h"
#include "health/lag_monitor.h"
#include "orchestrator/config/config.h"
#include "orchestrator/failovers/automation_pause.h"
#include "orchestrator/failovers/route_table.h"
#include "orchestrator/orchestrator.h"
#include "orchestrator/watch/live_view.h"
#include "runbooks/plan.h"
#include "state/clock.h"
#include "state/json_text.h"
#include "state/pause_store.h"
#include "state/record_json.h"
#include "state/state_store.h"

namespace icewarden {

using nlohmann::json;

namespace {

// Tables listed by name in the RPO record: the worst ones. The record is kept on the
// failover, which every later transition reads and writes, so it must not grow with the
// scope; the totals cover every table.
constexpr std::size_t kRpoTablesListed = 100;

// The RPO as it stands at promotion: per table of the scope what the target lacked and the
// bound on its lag, the worst first.
std::string RpoRecord(const GuardSnapshot& s) {
  json tables = json::array();
  long long worst = 0, missing = 0;
  std::size_t counted = 0, unbounded = 0;
  if (s.lag) {
    const LagReport& lag = *s.lag;
    ScopeIndex built;
    if (!s.scope_index) {
      for (std::size_t i = 0; i < s.scope_tables.size(); ++i) built.emplace(s.scope_tables[i], i);
    }
    const ScopeIndex& scope = s.scope_index ? *s.scope_index : built;
    // Every table counts toward the totals; only the kRpoTablesListed worst are written out
    // (a JSON object per table of a 10,000-table scope cost more than the rest of the check).
    struct Row {
      long long bound;
      const TableLag* lag;
      bool known;
    };
    std::vector<Row> rows;
    for (const TableLag& row : lag.tables) {
      if (row.replica != s.failover.to || row.owner != s.failover.from || !scope.count(row.table))
        continue;
      ++counted;
      auto bound = LagUpperBound(row, lag.at);
      const long long b = bound ? bound->count() + std::max<long long>(0, s.now - lag.at) : -1;
      if (!bound) ++unbounded;
      worst = std::max(worst, b);
      const bool known = row.state == LagState::kBehind || row.state == LagState::kCaughtUp;
      missing += known ? row.missing_commits : row.last_known_missing;
      rows.push_back({b, &row, known});
    }
    const std::size_t keep = std::min(rows.size(), kRpoTablesListed);
    std::partial_sort(rows.begin(), rows.begin() + keep, rows.end(),
                      [](const Row& x, const Row& y) { return x.bound > y.bound; });
    for (std::size_t i = 0; i < keep; ++i) {
      const TableLag& row = *rows[i].lag;
      const bool known = rows[i].known;
      tables.push_back({{"table", row.table.ToString()},
                        {"state", LagStateName(row.state)},
                        {"missing_commits", known ? row.missing_commits : row.last_known_missing},
                        {"lag_ms", known ? row.lag.count() : row.last_known_lag.count()},
                        {"bound_ms", rows[i].bound >= 0 ? json(rows[i].bound) : json(nullptr)}});
    }
  }
  const bool complete = s.lag && unbounded == 0 && counted == s.scope_tables.size();
  return DumpJson(json{{"worst_lag_ms", worst},
                       {"missing_commits", missing},
                       {"tables_measured", counted},
                       {"tables_in_scope", s.scope_tables.size()},
                       {"complete", complete},
                       {"measured_at", s.lag ? s.lag->at : 0},
                       {"tables", tables}});
}

}  // namespace

std::optional<std::string> FailoverService::CheckBeforePromotion(const Failover& f,
                                                                 std::string* rpo_json) {
  // One snapshot for the guards and the RPO record: listing the scope twice costs as much
  // as the rest of the check at 10,000 tables.
  auto snapshot = SnapshotWithWaivers(f);
  if (!snapshot.ok()) return "the guards could not be checked: " + snapshot.status().message();
  const std::vector<GuardResult> guards = EvaluateGuards(*snapshot);
  if (!GuardsPass(guards)) {
    const std::string failures = GuardFailures(guards);
    // The hold and the check in one write: the failover stays fenced until re-approved.
    for (int attempt = 0; attempt < 5; ++attempt) {
      auto found = d_.store->GetFailover(f.id);
      if (!found.ok() || !found->has_value()) break;
      Failover next = **found;
      next.promotion_hold = failures;
      json checks = json::parse(next.guard_checks_json, nullptr, false);
      if (!checks.is_array()) checks = json::array();
      checks.push_back({{"point", "promotion"},
                        {"at", d_.clock->Now()},
                        {"by", "executor"},
                        {"results", GuardResultsJson(guards)}});
      next.guard_checks_json = DumpJson(checks);
      AuditEvent why;
      why.actor = "executor";
      why.source = "executor";
      why.action = "failover.promotion_held";
      why.target = f.id;
      why.reason = f.id + " held in fenced before promotion: " + failures +
                   "; an approver must approve again (or someone abort)";
      why.detail_json = DumpJson(json{{"results", GuardResultsJson(guards)}});
      Status s = d_.store->UpdateFailover(next, next.version, why);
      if (s.code() != StatusCode::kConflict) break;
    }
    return failures;
  }
  *rpo_json = RpoRecord(*snapshot);
  return std::nullopt;
}

std::optional<std::string> FailoverService::UnreachableEvidence(const Failover& f,
                                                                std::string* why) {
  const FailoverPolicy policy = d_.orchestrator->Policy();
  if (std::find(policy.accepted_fencing.begin(), policy.accepted_fencing.end(),
                FencingKind::kEvidenceUnreachable) == policy.accepted_fencing.end()) {
    *why = "policy does not accept old_region_unreachable";
    return std::nullopt;
  }
  if (d_.live == nullptr) {
    *why = "no probe has looked at " + f.from;
    return std::nullopt;
  }
  const UnixMillis now = d_.clock->Now();
  const auto needed = d_.config->policies.unreachable_for.count();
  json evidence = {{"kind", "old_region_unreachable"}, {"region", f.from}, {"window_ms", needed}};
  if (d_.replica_views) {
    // Several replicas: a majority of them must each have heard nothing for the window.
    const QuorumVerdict verdict =
        JudgeUnreachable(f.from, QuorumRulesFor(*d_.config, f.from), d_.replica_views());
    if (!verdict.unreachable) {
      *why = "no quorum yet: " + verdict.why;
      return std::nullopt;
    }
    json observed = json::array();
    for (const ReplicaVote& v : verdict.by_replica) {
      json o = {
          {"replica", v.replica}, {"silent_for_window", v.silent_long_enough}, {"saw", v.saw}};
      if (v.sight) {
        o["silent"] = v.sight->silent;
        o["silent_for_ms"] = v.sight->silent_for_ms;
        o["silent_rounds"] = v.sight->silent_rounds;
        o["last_failure"] = v.sight->detail;
      }
      observed.push_back(std::move(o));
    }
    evidence["quorum"] = {{"votes", verdict.votes},
                          {"needed", verdict.needed},
                          {"replicas", d_.config->state.etcd.replicas}};
    evidence["observed_by"] = std::move(observed);
    *why = verdict.why;
  } else {
    auto silence = d_.live->Silence(f.from);
    if (!silence) {
      *why = f.from +
             " answered its latest probe round (any answer, even an error, means it is alive)";
      return std::nullopt;
    }
    if (now - silence->since < needed) {
      *why = f.from + " has been silent for " +
             FormatLagDuration(std::chrono::milliseconds(now - silence->since)) + " of the " +
             FormatLagDuration(d_.config->policies.unreachable_for) + " policy asks for";
      return std::nullopt;
    }
    evidence["silent_since"] = FormatUnixMillis(silence->since);
    evidence["silent_rounds"] = silence->rounds;
    evidence["last_failure"] = silence->detail;
    evidence["observed_by"] = "icewarden (single replica)";
    *why = f.from + " gave no answer for " +
           FormatLagDuration(std::chrono::milliseconds(now - silence->since)) + " (" +
           std::to_string(silence->rounds) + " probe rounds: " + silence->detail + ")";
  }
  json tables = json::array();
  if (auto lag = d_.live->Lag()) {
    for (const TableLag& row : lag->tables) {
      if (row.owner != f.from || row.replica != f.to) continue;
      json t = {{"table", row.table.ToString()}};
      if (row.owner_snapshot_id >= 0) {
        t["last_snapshot_id"] = row.owner_snapshot_id;
        t["seen_at"] = FormatUnixMillis(lag->at);
      } else if (row.last_known_at) {
        t["last_snapshot_id"] = nullptr;
        t["last_compared_at"] = FormatUnixMillis(*row.last_known_at);
      }
      tables.push_back(std::move(t));
      if (tables.size() >= 1000) break;  // evidence, not an inventory
    }
  }
  evidence["tables"] = std::move(tables);
  return DumpJson(evidence);
}

}  // namespace icewarden
