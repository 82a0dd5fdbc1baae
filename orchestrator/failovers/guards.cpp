#include "orchestrator/failovers/guards.h"

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <unordered_map>

#include "actions/catalog_scope.h"
#include "actions/param_reader.h"
#include "health/lag_monitor.h"
#include "runbooks/runbook.h"

namespace icewarden {
namespace {

using std::chrono::milliseconds;

std::string Ms(milliseconds d) { return FormatLagDuration(d); }

const Region* FindRegion(const GuardSnapshot& s, const std::string& name) {
  for (const Region& r : s.regions)
    if (r.name == name) return &r;
  return nullptr;
}

// The runbook's guard of `kind`, if it declares one.
const RunbookGuard* RunbookGuardOf(const GuardSnapshot& s, const std::string& kind) {
  for (const RunbookGuard& g : s.runbook_guards)
    if (g.kind == kind) return &g;
  return nullptr;
}

milliseconds TightenedDuration(const GuardSnapshot& s, const std::string& kind,
                               const std::string& key, milliseconds policy) {
  const RunbookGuard* g = RunbookGuardOf(s, kind);
  if (g == nullptr || !g->params.contains(key) || !g->params[key].is_string()) return policy;
  auto d = ParseParamDuration(g->params[key].get<std::string>());
  return d ? std::min(*d, policy) : policy;
}

// Each replica's row of the latest lag round for every scope table, aligned with
// s.scope_tables (null: the round has no row for it). Built once per evaluation with one
// hash lookup per lag row: the guards read it for several regions, over scopes of 10,000s.
class LagOfScope {
 public:
  explicit LagOfScope(const GuardSnapshot& s) : none_(s.scope_tables.size(), nullptr) {
    if (!s.lag) return;
    ScopeIndex built;
    if (!s.scope_index) {
      built.reserve(s.scope_tables.size());
      for (std::size_t i = 0; i < s.scope_tables.size(); ++i) built.emplace(s.scope_tables[i], i);
    }
    const ScopeIndex& index = s.scope_index ? *s.scope_index : built;
    for (const TableLag& row : s.lag->tables) {
      auto it = index.find(row.table);
      if (it == index.end()) continue;
      auto [rows, added] = by_replica_.try_emplace(row.replica);
      if (added) rows->second = none_;
      rows->second[it->second] = &row;
    }
  }
  const std::vector<const TableLag*>& For(const std::string& replica) const {
    auto it = by_replica_.find(replica);
    return it == by_replica_.end() ? none_ : it->second;
  }

 private:
  std::vector<const TableLag*> none_;
  std::map<std::string, std::vector<const TableLag*>> by_replica_;
};

// The most `row`'s replica can trail as of s.now: the bound at the round, plus the time
// since the round (commits made since then are not seen yet).
std::optional<milliseconds> BoundNow(const GuardSnapshot& s, const TableLag& row) {
  auto bound = LagUpperBound(row, s.lag->at);
  if (!bound) return std::nullopt;
  return *bound + milliseconds(std::max<UnixMillis>(0, s.now - s.lag->at));
}

GuardResult Leadership() {
  return {"leadership", true, false, "single replica (SQLite state): this daemon leads"};
}

GuardResult TargetHealthy(const GuardSnapshot& s) {
  const std::string& to = s.failover.to;
  const Region* r = FindRegion(s, to);
  if (r == nullptr) return {"target_healthy", false, false, to + " is not a known region"};
  if (r->fenced) return {"target_healthy", false, false, to + " is fenced: " + r->reason};
  if (r->maintenance) return {"target_healthy", false, false, to + " is in maintenance"};
  if (r->health != RegionHealth::kHealthy)
    return {"target_healthy", false, false,
            to + " is " + RegionHealthName(r->health) + ": " + r->reason};
  return {"target_healthy", true, false, to + " is healthy"};
}

// A switchover reads its demotion token from the old owner and fences it through its own
// catalog: that region must answer. An unreachable old owner is a failover's case.
GuardResult SourceHealthy(const GuardSnapshot& s) {
  const std::string& from = s.failover.from;
  const Region* r = FindRegion(s, from);
  if (r == nullptr) return {"source_healthy", false, false, from + " is not a known region"};
  if (r->health != RegionHealth::kHealthy)
    return {"source_healthy", false, false,
            from + " is " + RegionHealthName(r->health) +
                (r->reason.empty() ? "" : ": " + r->reason) +
                "; a switchover needs both regions healthy (propose a failover instead)"};
  return {"source_healthy", true, false, from + " is healthy"};
}

GuardResult Rpo(const GuardSnapshot& s, const LagOfScope& lag) {
  GuardResult g{"rpo", false, false, ""};
  const milliseconds max = TightenedDuration(s, "max_lag", "max_staleness", s.max_staleness);
  if (s.scope_tables.empty()) {
    g.ok = true;
    g.reason = "the scope holds no table owned by " + s.failover.from;
    return g;
  }
  if (!s.lag) {
    g.reason = "no replication-lag round has finished yet, so no table's lag is known";
  } else {
    const auto& rows = lag.For(s.failover.to);
    milliseconds worst{0};
    std::string worst_table;
    std::vector<std::string> unbounded, over;
    for (std::size_t i = 0; i < s.scope_tables.size(); ++i) {
      const TableIdent& t = s.scope_tables[i];
      std::optional<milliseconds> bound;
      if (rows[i] != nullptr) bound = BoundNow(s, *rows[i]);
      if (!bound) {
        unbounded.push_back(t.ToString());
        continue;
      }
      if (worst_table.empty() || *bound > worst) {
        worst = *bound;
        worst_table = t.ToString();
      }
      if (*bound > max) over.push_back(t.ToString());
    }
    auto list = [](const std::vector<std::string>& v) {
      std::string out;
      for (std::size_t i = 0; i < v.size() && i < 5; ++i) out += (i ? ", " : "") + v[i];
      if (v.size() > 5) out += " and " + std::to_string(v.size() - 5) + " more";
      return out;
    };
    if (unbounded.empty() && over.empty()) {
      g.ok = true;
      g.reason = std::to_string(s.scope_tables.size()) + " tables within max_staleness " + Ms(max) +
                 " in " + s.failover.to + "; worst " + Ms(worst) +
                 (worst_table.empty() ? "" : " (" + worst_table + ")");
      return g;
    }
    if (!over.empty()) {
      g.reason = std::to_string(over.size()) + " of " + std::to_string(s.scope_tables.size()) +
                 " tables may trail by more than max_staleness " + Ms(max) + " in " +
                 s.failover.to + " (worst " + Ms(worst) + ", " + worst_table + "): " + list(over);
    }
    if (!unbounded.empty()) {
      g.reason += std::string(g.reason.empty() ? "" : "; ") + std::to_string(unbounded.size()) +
                  " tables have no known lag in " + s.failover.to + ": " + list(unbounded);
    }
  }
  if (!s.waivers.accept_data_loss.empty()) {
    g.waived = true;
    g.reason += "; data loss accepted: " + s.waivers.accept_data_loss;
  } else {
    g.reason += "; approve with accept_data_loss and a reason to promote anyway";
  }
  return g;
}

GuardResult NoOverlap(const GuardSnapshot& s) {
  for (const Failover& o : s.others) {
    if (o.id == s.failover.id || IsTerminal(o.phase)) continue;
    if (ScopesOverlap(s.failover, s.scope_tables, o))
      return {"no_overlap", false, false,
              o.id + " (" + FailoverPhaseName(o.phase) + ", scope " + o.scope +
                  ") is active on tables of this scope"};
  }
  return {"no_overlap", true, false, "no other active failover touches the scope"};
}

GuardResult Cooldown(const GuardSnapshot& s) {
  const milliseconds wait = CooldownOf(s.cooldown, s.runbook_guards);
  // How long ago a failover ended is the age of its cooldown timer, by the state store's clock
  // (GuardSnapshot::cooldown_elapsed): the end's updated_at is stamped by whichever replica led
  // then, and a leader 30 s off moved every cooldown by 30 s (issue 30). One without a running
  // timer (it ended longer ago than the longest cooldown, or before timers existed) holds
  // nothing.
  const Failover* last = nullptr;
  milliseconds since{0};
  for (const Failover& o : s.others) {
    if (o.id == s.failover.id || !IsTerminal(o.phase) || o.phase == FailoverPhase::kAborted)
      continue;
    if (o.ack) continue;
    if (!s.scope_moved_by.count(o.id) && !ScopesOverlap(s.failover, s.scope_tables, o)) continue;
    auto timer = s.cooldown_elapsed.find(o.id);
    if (timer == s.cooldown_elapsed.end() || timer->second >= wait) continue;
    if (last == nullptr || timer->second < since) {
      last = &o;
      since = timer->second;
    }
  }
  if (last != nullptr) {
    GuardResult g{"cooldown", false, false,
                  last->id + " ended " + Ms(since) +
                      " ago by the state store's clock, inside the cooldown of " + Ms(wait) + " (" +
                      Ms(wait - since) + " left); `failover ack " + last->id + "` lifts it"};
    if (!s.waivers.cooldown_override.empty()) {
      g.waived = true;
      g.reason += "; overridden by an admin: " + s.waivers.cooldown_override;
    }
    return g;
  }
  return {"cooldown", true, false,
          "no failover of this scope ended inside the cooldown of " + Ms(wait)};
}

GuardResult Divergence(const GuardSnapshot& s, const LagOfScope& lag) {
  constexpr std::size_t kNamed = 20;
  std::vector<const TableLag*> bad;
  for (const TableLag* row : lag.For(s.failover.to)) {
    if (row == nullptr) continue;
    if (row->state == LagState::kDiverged || row->state == LagState::kNotSameTable)
      bad.push_back(row);
  }
  if (bad.empty())
    return {"divergence", true, false,
            s.failover.to + " holds no commit that " + s.failover.from + " never had"};
  // Each table with the snapshots only the target has: what an operator reconciles.
  std::string why = std::to_string(bad.size()) + " tables hold commits in " + s.failover.to +
                    " that " + s.failover.from + " never had: ";
  for (std::size_t i = 0; i < bad.size() && i < kNamed; ++i) {
    const TableLag& row = *bad[i];
    if (i > 0) why += "; ";  // appended piece by piece: GCC 12 -O3 -Wrestrict misfires
    why += row.table.ToString();
    if (row.uuid_mismatch) {
      why += " (another table under the same name)";
      continue;
    }
    why += " (snapshot";
    why += row.divergent_snapshot_ids.size() == 1 ? " " : "s ";
    for (std::size_t k = 0; k < row.divergent_snapshot_ids.size(); ++k) {
      if (k > 0) why += ", ";
      why += std::to_string(row.divergent_snapshot_ids[k]);
    }
    why += ")";
  }
  if (bad.size() > kNamed) why += "; and " + std::to_string(bad.size() - kNamed) + " more";
  GuardResult g{"divergence", false, false,
                why + ". Promoting " + s.failover.to +
                    " would lose them or fork the tables' history: reconcile them by hand "
                    "(make " +
                    s.failover.to + "'s copies match " + s.failover.from +
                    " again), or approve with accept_data_loss and a reason (those commits "
                    "are then given up, and the approval records it)"};
  if (!s.waivers.accept_data_loss.empty()) {
    g.waived = true;
    g.reason += "; accepted by an approver: " + s.waivers.accept_data_loss;
  }
  return g;
}

GuardResult BestCandidate(const GuardSnapshot& s, const LagOfScope& lag) {
  auto missing = [&](const std::string& region) -> std::optional<long long> {
    long long total = 0;
    for (const TableLag* row : lag.For(region)) {
      if (row == nullptr) return std::nullopt;
      const TableLag& r = *row;
      if (r.state != LagState::kBehind && r.state != LagState::kCaughtUp) return std::nullopt;
      total += r.missing_commits;
    }
    return total;
  };
  std::vector<const Region*> others;
  for (const Region& r : s.regions)
    if (r.name != s.failover.from && r.name != s.failover.to &&
        r.health == RegionHealth::kHealthy && !r.fenced && !r.maintenance)
      others.push_back(&r);
  if (others.empty())
    return {"best_candidate", true, false, "no other healthy region to compare with"};
  const auto target = missing(s.failover.to);
  for (const Region* r : others) {
    auto theirs = missing(r->name);
    if (!theirs || (target && *theirs >= *target)) continue;
    GuardResult g{"best_candidate", false, false,
                  r->name + " lacks " + std::to_string(*theirs) + " commits of the scope, " +
                      s.failover.to + " " +
                      (target ? std::to_string(*target) : "an unknown number") +
                      ": promote the most advanced replica, or force with a reason"};
    if (!s.waivers.force_candidate.empty()) {
      g.waived = true;
      g.reason += "; forced: " + s.waivers.force_candidate;
    }
    return g;
  }
  return {"best_candidate", true, false,
          s.failover.to + " is at least as far ahead as any other healthy region"};
}

}  // namespace

milliseconds CooldownOf(milliseconds policy, const std::vector<RunbookGuard>& runbook_guards) {
  // The runbook's cooldown may lengthen the policy's: the longer of the two holds.
  milliseconds wait = policy;
  for (const RunbookGuard& g : runbook_guards) {
    if (g.kind != "cooldown" || !g.params.contains("period") || !g.params["period"].is_string())
      continue;
    if (auto d = ParseParamDuration(g.params["period"].get<std::string>()))
      wait = std::max(*d, wait);
  }
  return wait;
}

bool ScopesOverlap(const Failover& a, const std::vector<TableIdent>& a_tables, const Failover& b) {
  auto scope = CatalogScope::Parse(b.scope);
  if (!scope.ok()) return true;  // cannot tell: assume it does
  if (scope->kind == CatalogScope::Kind::kOwner) {
    if (scope->owner_region() == a.from) return !a_tables.empty() || a.scope == b.scope;
    return false;
  }
  if (b.from != a.from && b.to != a.from) return false;
  return std::any_of(a_tables.begin(), a_tables.end(),
                     [&](const TableIdent& t) { return scope->Matches(t); });
}

std::vector<GuardResult> EvaluateGuards(const GuardSnapshot& s) {
  const LagOfScope lag(s);
  std::vector<GuardResult> out{Leadership(), TargetHealthy(s)};
  if (s.failover.kind == FailoverKind::kSwitchover) out.push_back(SourceHealthy(s));
  for (GuardResult& g : std::vector<GuardResult>{Rpo(s, lag), NoOverlap(s), Cooldown(s),
                                                 Divergence(s, lag), BestCandidate(s, lag)})
    out.push_back(std::move(g));
  return out;
}

bool GuardsPass(const std::vector<GuardResult>& results) {
  return std::all_of(results.begin(), results.end(),
                     [](const GuardResult& g) { return g.ok || g.waived; });
}

std::string GuardFailures(const std::vector<GuardResult>& results) {
  std::string out;
  for (const GuardResult& g : results)
    if (!g.ok && !g.waived) out += (out.empty() ? "" : "; ") + g.guard + ": " + g.reason;
  return out;
}

nlohmann::json GuardResultsJson(const std::vector<GuardResult>& results) {
  nlohmann::json out = nlohmann::json::array();
  for (const GuardResult& g : results)
    out.push_back({{"guard", g.guard}, {"ok", g.ok}, {"waived", g.waived}, {"reason", g.reason}});
  return out;
}

}  // namespace icewarden
