// verify.catalog_healthy, verify.replica_caught_up and fence.catalog_quiet: checks that read
// catalogs and the store and change nothing (idempotent, no compensation).
#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>

#include "actions/catalog_checks.h"
#include "actions/catalog_load.h"
#include "actions/catalog_scope.h"
#include "actions/catalog_session.h"
#include "actions/param_reader.h"
#include "actions/parsed_action.h"
#include "actions/preflight.h"
#include "health/replication_lag.h"
#include "state/state_store.h"

namespace icewarden {

namespace {

using namespace std::chrono_literals;

constexpr std::size_t kMaxCheckDetailRows = 50;

std::string Ms(std::chrono::milliseconds d) { return FormatLagDuration(d); }

// The scope's tables owned by `owner`, from the store.
Result<std::vector<TableIdent>> ScopeTables(const ActionEnv& env, const std::string& scope_text,
                                            const std::string& owner) {
  if (env.store == nullptr)
    return Status::FailedPrecondition("no state store is configured for actions");
  auto scope = CatalogScope::Parse(scope_text);
  if (!scope.ok()) return scope.status();
  auto rows = ListScopeOwnership(*env.store, *scope, owner, kMaxScopeTables);
  if (!rows.ok()) return rows.status();
  std::vector<TableIdent> tables;
  for (const auto& row : *rows) tables.push_back(row.table);
  return tables;
}

// ---- verify.catalog_healthy -------------------------------------------------------------

struct CatalogHealthyParams {
  std::string region;
  std::chrono::milliseconds timeout{5s};
};
class CatalogHealthyCheck final : public ParsedAction<CatalogHealthyParams>,
                                  public ActionPreflight {
 public:
  explicit CatalogHealthyCheck(ActionEnv env) : env_(std::move(env)) {}

  // Readiness: the region's catalog accepts our credentials now (its health is the
  // target_healthy guard's to judge).
  std::vector<std::string> Preflight(const nlohmann::json& params,
                                     const ActionContext& ctx) const override {
    std::vector<ParamError> errors;
    auto p = Read(params, errors);
    if (!p) return {"verify.catalog_healthy: " + FirstParamError(errors)};
    if (auto why = CatalogAcceptsUs(env_, p->region, ctx)) return {*why};
    return {};
  }
  std::string_view kind() const override { return "verify.catalog_healthy"; }
  bool idempotent() const override { return true; }

 protected:
  std::optional<CatalogHealthyParams> Read(const nlohmann::json& params,
                                           std::vector<ParamError>& errors) const override {
    CatalogHealthyParams p = Parse(params, &errors);
    if (!errors.empty()) return std::nullopt;
    return p;
  }

  std::string PlanSpec(const CatalogHealthyParams& p) const override {
    return "check that region " + p.region +
           " is healthy and that its catalog answers GET "
           "/v1/config within " +
           Ms(p.timeout);
  }

  ActionResult RunSpec(const CatalogHealthyParams& p, const ActionContext& ctx) override {
    nlohmann::json detail{{"region", p.region}};
    if (!env_.region_health) return ActionResult::Failed("no region health source is configured");
    auto region = env_.region_health(p.region);
    if (!region) return ActionResult::Failed("region " + p.region + " is not known");
    detail["health"] = RegionHealthName(region->health);
    detail["fenced"] = region->fenced;
    detail["maintenance"] = region->maintenance;
    if (region->health != RegionHealth::kHealthy)
      return ActionResult::Failed("region " + p.region + " is " + RegionHealthName(region->health) +
                                      (region->reason.empty() ? "" : ": " + region->reason),
                                  DumpJson(detail));
    CatalogSession session(env_);
    auto client = session.Client(p.region);
    if (!client.ok()) return ActionResult::Failed(client.status().message(), DumpJson(detail));
    ActionContext bounded = ctx;
    bounded.deadline = std::min(ctx.deadline, std::chrono::steady_clock::now() + p.timeout);
    auto start = std::chrono::steady_clock::now();
    auto config = GetConfigNow(session, **client, bounded);
    auto took = std::chrono::duration_cast<std::chrono::milliseconds>(
        std::chrono::steady_clock::now() - start);
    detail["config_ms"] = took.count();
    if (!config)
      return ActionResult::Failed("region " + p.region +
                                      " is healthy but GET /v1/config did not "
                                      "answer within " +
                                      Ms(p.timeout),
                                  DumpJson(detail));
    if (!config->ok())
      return ActionResult::Failed("region " + p.region + " is healthy but GET /v1/config failed: " +
                                      config->status().ToString(),
                                  DumpJson(detail));
    return ActionResult::Succeeded("region " + p.region +
                                       " is healthy and its catalog answered "
                                       "GET /v1/config in " +
                                       Ms(took),
                                   DumpJson(detail));
  }

 private:
  static CatalogHealthyParams Parse(const nlohmann::json& params, std::vector<ParamError>* errors) {
    CheckParamKeys(params, {"region", "timeout"}, errors);
    CatalogHealthyParams p;
    if (auto r = StringParam(params, "region", errors))
      p.region = *r;
    else if (!params.is_object() || !params.contains("region"))
      errors->push_back({"region", "is required: the region whose catalog to check"});
    if (auto t = DurationParam(params, "timeout", errors)) {
      if (t->count() <= 0)
        errors->push_back({"timeout", "must be more than 0"});
      else
        p.timeout = *t;
    }
    return p;
  }
  ActionEnv env_;
};

// ---- verify.replica_caught_up -----------------------------------------------------------

struct ReplicaCaughtUpParams {
  std::string region, owner, scope;
  std::chrono::milliseconds max_lag{0};
  int concurrency = 16;
};
class ReplicaCaughtUpCheck final : public ParsedAction<ReplicaCaughtUpParams>,
                                   public ActionPreflight {
 public:
  explicit ReplicaCaughtUpCheck(ActionEnv env) : env_(std::move(env)) {}

  // Readiness: the replica's catalog accepts our credentials (the owner's is usually the one
  // that is down; the lag itself is the rpo guard's to judge).
  std::vector<std::string> Preflight(const nlohmann::json& params,
                                     const ActionContext& ctx) const override {
    std::vector<ParamError> errors;
    auto p = Read(params, errors);
    if (!p) return {"verify.replica_caught_up: " + FirstParamError(errors)};
    if (auto why = CatalogAcceptsUs(env_, p->region.empty() ? ctx.to : p->region, ctx))
      return {*why};
    return {};
  }
  std::string_view kind() const override { return "verify.replica_caught_up"; }
  bool idempotent() const override { return true; }

 protected:
  std::optional<ReplicaCaughtUpParams> Read(const nlohmann::json& params,
                                            std::vector<ParamError>& errors) const override {
    ReplicaCaughtUpParams p = Parse(params, &errors);
    if (!errors.empty()) return std::nullopt;
    return p;
  }

  std::string PlanSpec(const ReplicaCaughtUpParams& p) const override {
    std::string replica = p.region.empty() ? "the 'to' region" : p.region;
    std::string owner = p.owner.empty() ? "the 'from' region" : p.owner;
    std::string scope = p.scope.empty() ? "the failover's scope" : p.scope;
    std::string bound = p.max_lag.count() == 0 ? "has the owner's current snapshot"
                                               : "trails by at most " + Ms(p.max_lag);
    return "check that " + replica + " " + bound + " for every table of " + scope + " owned by " +
           owner + ", with no divergence";
  }

  ActionResult RunSpec(const ReplicaCaughtUpParams& p, const ActionContext& ctx) override {
    std::string replica = p.region.empty() ? ctx.to : p.region;
    std::string owner = p.owner.empty() ? ctx.from : p.owner;
    std::string scope = p.scope.empty() ? ctx.scope : p.scope;
    if (replica.empty() || owner.empty() || replica == owner)
      return ActionResult::Failed("needs two different regions, owner '" + owner +
                                  "' and replica '" + replica + "'");
    auto tables = ScopeTables(env_, scope, owner);
    if (!tables.ok()) return ActionResult::Failed(tables.status().message());
    if (tables->empty())
      return ActionResult::Failed("nothing to compare: no table of " + scope + " is owned by " +
                                  owner + " in the store");
    CatalogSession session(env_);
    auto owner_client = session.Client(owner);
    if (!owner_client.ok()) return ActionResult::Failed(owner_client.status().message());
    auto replica_client = session.Client(replica);
    if (!replica_client.ok()) return ActionResult::Failed(replica_client.status().message());
    auto owner_views = LoadTables(session, **owner_client, *tables, {}, p.concurrency, ctx);
    if (ctx.expired())
      return ActionResult::Failed("stopped by the deadline while loading " + owner);
    auto replica_views = LoadTables(session, **replica_client, *tables, {}, p.concurrency, ctx);
    if (ctx.expired())
      return ActionResult::Failed("stopped by the deadline while loading " + replica);

    LagPolicy policy;
    policy.max_staleness = p.max_lag;
    UnixMillis now = session.clock().Now();
    std::vector<TableLag> rows;
    for (size_t i = 0; i < tables->size(); ++i) {
      const auto& t = (*tables)[i];
      const auto& o = *owner_views[i];
      const auto& r = *replica_views[i];
      if (!o.ok()) {
        rows.push_back(UncomparedLag(t, owner, replica, LagState::kUnknown,
                                     owner + " load failed: " + o.status().ToString()));
      } else if (!r.ok()) {
        rows.push_back(UncomparedLag(t, owner, replica, LagState::kUnknown,
                                     replica + " load failed: " + r.status().ToString()));
      } else {
        rows.push_back(CompareReplica(t, owner, o->table, replica, r->table, now, policy));
      }
    }
    auto passes = [&](const TableLag& row) {
      if (row.state == LagState::kCaughtUp) return true;
      return row.state == LagState::kBehind && p.max_lag.count() > 0 && row.lag <= p.max_lag;
    };
    // Most severe first: the LagState order, then the longest lag.
    std::stable_sort(rows.begin(), rows.end(), [&](const TableLag& a, const TableLag& b) {
      bool pa = passes(a), pb = passes(b);
      if (pa != pb) return !pa;
      if (a.state != b.state) return a.state < b.state;
      return a.lag > b.lag;
    });
    int failing = 0;
    for (const auto& row : rows) failing += passes(row) ? 0 : 1;
    ScopeLag summary = Summarise(rows);
    nlohmann::json detail{{"owner", owner},
                          {"replica", replica},
                          {"scope", scope},
                          {"max_lag_ms", p.max_lag.count()},
                          {"tables", rows.size()},
                          {"failing", failing},
                          {"worst_lag_ms", summary.worst_lag.count()}};
    nlohmann::json out = nlohmann::json::array();
    for (size_t i = 0; i < rows.size() && i < kMaxCheckDetailRows; ++i) {
      const auto& row = rows[i];
      out.push_back({{"table", row.table.ToString()},
                     {"state", LagStateName(row.state)},
                     {"owner_snapshot_id", row.owner_snapshot_id},
                     {"replica_snapshot_id", row.replica_snapshot_id},
                     {"missing_commits", row.missing_commits},
                     {"lag_ms", row.lag.count()},
                     {"passes", passes(row)},
                     {"reason", row.reason}});
    }
    detail["rows"] = out;
    detail["rows_truncated"] = rows.size() > kMaxCheckDetailRows;
    if (failing > 0)
      return ActionResult::Failed(rows.front().reason + " (worst of " + std::to_string(failing) +
                                      " failing out of " + std::to_string(rows.size()) + " tables)",
                                  DumpJson(detail));
    std::string bound = p.max_lag.count() == 0 ? "has the current snapshot of"
                                               : "is within " + Ms(p.max_lag) + " on";
    std::string reason = replica + " " + bound + " all " + std::to_string(rows.size()) +
                         " tables of " + scope + " owned by " + owner;
    if (summary.worst_table)
      reason +=
          "; worst " + summary.worst_table->ToString() + " " + Ms(summary.worst_lag) + " behind";
    return ActionResult::Succeeded(reason, DumpJson(detail));
  }

 private:
  static ReplicaCaughtUpParams Parse(const nlohmann::json& params,
                                     std::vector<ParamError>* errors) {
    CheckParamKeys(params, {"region", "owner", "scope", "max_lag", "concurrency"}, errors);
    ReplicaCaughtUpParams p;
    if (auto v = StringParam(params, "region", errors)) p.region = *v;
    if (auto v = StringParam(params, "owner", errors)) p.owner = *v;
    if (auto v = StringParam(params, "scope", errors)) {
      p.scope = *v;
      if (auto s = CatalogScope::Parse(*v); !s.ok())
        errors->push_back({"scope", s.status().message()});
    }
    if (auto v = DurationParam(params, "max_lag", errors)) p.max_lag = *v;
    if (auto v = IntParam(params, "concurrency", 1, 256, errors))
      p.concurrency = static_cast<int>(*v);
    return p;
  }
  ActionEnv env_;
};

}  // namespace

std::unique_ptr<Action> MakeCatalogHealthyCheck(const ActionEnv& env) {
  return std::make_unique<CatalogHealthyCheck>(env);
}
std::unique_ptr<Action> MakeReplicaCaughtUpCheck(const ActionEnv& env) {
  return std::make_unique<ReplicaCaughtUpCheck>(env);
}

}  // namespace icewarden
