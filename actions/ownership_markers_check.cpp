// verify.ownership_markers: reads the icewarden.owner / icewarden.epoch markers of every table
// of a scope in one region's catalog and checks them against the store's ownership rows
// (ownership_markers.h says what each finding means). Read-only, idempotent, no compensation.
//
// Which tables: the store's rows that the scope names, whatever their owner, plus, for owner:
// and failover: scopes (whose membership a transfer changes: "owner:eu" names no table once
// eu's tables have moved), the rows the running failover moved. Every one is loaded from the
// region's catalog (at most `concurrency` loads in flight, refs only) and judged.
#include <map>
#include <nlohmann/json.hpp>

#include "actions/catalog_checks.h"
#include "actions/catalog_load.h"
#include "actions/catalog_scope.h"
#include "actions/catalog_session.h"
#include "actions/ownership_markers.h"
#include "actions/param_reader.h"
#include "actions/parsed_action.h"
#include "actions/preflight.h"
#include "state/state_store.h"

namespace icewarden {

namespace {

constexpr std::size_t kMaxOffending = 20;  // tables listed in the detail
constexpr std::size_t kMaxNamed = 3;       // tables named in the reason

// See the file comment. `failover_id` empty: only the scope's own rows.
Result<std::vector<Ownership>> MarkerScopeRows(StateStore& store, const CatalogScope& scope,
                                               const std::string& failover_id) {
  auto in_scope = [&](const Ownership& row) {
    if (!scope.Matches(row.table)) return false;
    const bool moved_here = !failover_id.empty() && row.failover_id == failover_id;
    switch (scope.kind) {
      case CatalogScope::Kind::kOwner:
        return row.owner == scope.owner_region() || moved_here;
      case CatalogScope::Kind::kFailover:
        return row.failover_id == scope.patterns.front() || moved_here;
      case CatalogScope::Kind::kNamespace:
      case CatalogScope::Kind::kTables:
        return true;
    }
    return true;
  };
  std::vector<Ownership> out;
  OwnershipQuery query;
  query.limit = 1000;
  while (true) {
    auto page = store.ListOwnership(query);
    if (!page.ok()) return page.status();
    for (auto& row : *page) {
      if (!in_scope(row)) continue;
      if (out.size() == kMaxScopeTables)
        return Status::FailedPrecondition("scope " + scope.text + " has more than " +
                                          std::to_string(kMaxScopeTables) + " tables");
      out.push_back(std::move(row));
    }
    if (page->size() < query.limit) return out;
    query.after = page->back().table;
  }
}

struct MarkersParams {
  std::string region;  // empty: the failover's 'to' region
  std::string scope;   // empty: the failover's scope
  bool allow_missing = false;
  int concurrency = 16;
};

class OwnershipMarkersCheck final : public ParsedAction<MarkersParams>, public ActionPreflight {
 public:
  explicit OwnershipMarkersCheck(ActionEnv env) : env_(std::move(env)) {}

  // Readiness: the region's catalog accepts our credentials (what its markers say is only
  // meaningful once a transfer has written them).
  std::vector<std::string> Preflight(const nlohmann::json& params,
                                     const ActionContext& ctx) const override {
    std::vector<ParamError> errors;
    auto p = Read(params, errors);
    if (!p) return {"verify.ownership_markers: " + FirstParamError(errors)};
    if (auto why = CatalogAcceptsUs(env_, p->region.empty() ? ctx.to : p->region, ctx))
      return {*why};
    return {};
  }
  std::string_view kind() const override { return "verify.ownership_markers"; }
  bool idempotent() const override { return true; }

 protected:
  std::optional<MarkersParams> Read(const nlohmann::json& params,
                                    std::vector<ParamError>& errors) const override {
    CheckParamKeys(params, {"region", "scope", "allow_missing", "concurrency"}, &errors);
    MarkersParams p;
    if (auto v = StringParam(params, "region", &errors)) p.region = *v;
    if (auto v = StringParam(params, "scope", &errors)) {
      p.scope = *v;
      if (auto s = CatalogScope::Parse(*v); !s.ok())
        errors.push_back({"scope", s.status().message()});
    }
    if (auto v = BoolParam(params, "allow_missing", &errors)) p.allow_missing = *v;
    if (auto v = IntParam(params, "concurrency", 1, 256, &errors))
      p.concurrency = static_cast<int>(*v);
    if (!errors.empty()) return std::nullopt;
    return p;
  }

  std::string PlanSpec(const MarkersParams& p) const override {
    std::string region = p.region.empty() ? "the 'to' region" : p.region;
    std::string scope = p.scope.empty() ? "the failover's scope" : p.scope;
    return "check the icewarden.owner/icewarden.epoch markers in " + region +
           "'s catalog against the store for every table of " + scope +
           ": none at an epoch lower or higher than the store's, none naming another owner at "
           "the store's epoch, and " +
           (p.allow_missing ? "tables without a marker allowed"
                            : "one on every table a failover moved to " + region);
  }

  ActionResult RunSpec(const MarkersParams& p, const ActionContext& ctx) override {
    const std::string region = p.region.empty() ? ctx.to : p.region;
    const std::string scope_text = p.scope.empty() ? ctx.scope : p.scope;
    if (region.empty())
      return ActionResult::Failed("needs a region: no 'region' param and no 'to' region");
    auto scope = CatalogScope::Parse(scope_text);
    if (!scope.ok()) return ActionResult::Failed(scope.status().message());
    if (env_.store == nullptr)
      return ActionResult::Failed("no state store is configured for actions");
    auto rows = MarkerScopeRows(*env_.store, *scope, ctx.failover_id);
    if (!rows.ok()) return ActionResult::Failed("state store: " + rows.status().ToString());
    if (rows->empty())
      return ActionResult::Failed("nothing to check: the store records no table of " + scope_text);
    CatalogSession session(env_);
    auto client = session.Client(region);
    if (!client.ok()) return ActionResult::Failed(client.status().message());
    std::vector<TableIdent> tables;
    for (const auto& row : *rows) tables.push_back(row.table);
    auto answers =
        LoadTables(session, **client, tables, {}, p.concurrency, ctx, SnapshotsMode::kRefs);

    // Tables by finding: a MarkerVerdictName, or "unreadable" (the load failed, not 404).
    std::map<std::string, int> found;
    int failing = 0;
    nlohmann::json offending = nlohmann::json::array();
    std::string named;
    for (size_t i = 0; i < rows->size(); ++i) {
      const Ownership& row = (*rows)[i];
      if (!answers[i])
        return ActionResult::Failed("stopped by the deadline or cancellation while loading " +
                                    std::to_string(rows->size()) + " tables from " + region);
      const auto& answer = *answers[i];
      std::optional<MarkerProperties> marker;
      if (answer.ok()) marker = ReadMarkerProperties(answer->table.properties);
      std::string problem, reason;
      if (!answer.ok() && answer.status().code() != StatusCode::kNotFound) {
        problem = "unreadable";
        reason = "cannot read it in " + region + ": " + answer.status().ToString();
      } else {
        MarkerJudgement j = JudgeMarker(row, marker, region);
        problem = MarkerVerdictName(j.verdict);
        reason = j.reason;
        if (!MarkerVerdictFails(j.verdict, p.allow_missing)) {
          ++found[problem];
          continue;
        }
      }
      ++found[problem];
      ++failing;
      if (static_cast<size_t>(failing) <= kMaxNamed)
        named += (named.empty() ? "" : "; ") + row.table.ToString() + ": " + reason;
      if (offending.size() < kMaxOffending) {
        nlohmann::json o{{"table", row.table.ToString()},
                         {"problem", problem},
                         {"store_owner", row.owner},
                         {"store_epoch", row.epoch},
                         {"reason", reason}};
        if (marker && marker->owner) o["marker_owner"] = *marker->owner;
        if (marker && marker->epoch) o["marker_epoch"] = *marker->epoch;
        offending.push_back(std::move(o));
      }
    }

    const int checked = static_cast<int>(rows->size());
    nlohmann::json detail{{"region", region},
                          {"scope", scope_text},
                          {"allow_missing", p.allow_missing},
                          {"checked", checked},
                          {"unreadable", found["unreadable"]},
                          {"failing", failing},
                          {"offending", offending},
                          {"offending_truncated", failing > static_cast<int>(kMaxOffending)}};
    // Every finding, failing ones listed for the reason in the order of kMarkerVerdicts.
    std::string kinds;
    for (MarkerVerdict v : kMarkerVerdicts) {
      const int n = found[MarkerVerdictName(v)];
      detail[MarkerVerdictName(v)] = n;
      if (n > 0 && MarkerVerdictFails(v, p.allow_missing))
        kinds += (kinds.empty() ? "" : ", ") + std::to_string(n) + " " + MarkerVerdictName(v);
    }
    if (found["unreadable"] > 0)
      kinds += (kinds.empty() ? "" : ", ") + std::to_string(found["unreadable"]) + " unreadable";
    const std::string of = std::to_string(checked) + " tables of " + scope_text;
    if (failing > 0) {
      std::string reason = std::to_string(failing) + " of " + of + " fail the marker check in " +
                           region + " (" + kinds + "): " + named;
      if (failing > static_cast<int>(kMaxNamed))
        reason += "; and " + std::to_string(failing - static_cast<int>(kMaxNamed)) + " more";
      return ActionResult::Failed(reason, DumpJson(detail));
    }
    std::string reason = "the markers in " + region + " agree with the store for all " + of + ": " +
                         std::to_string(found["ok"]) + " at the store's epoch";
    if (found["missing"] > 0)
      reason += ", " + std::to_string(found["missing"]) + " without a marker (allowed)";
    if (found["unmarked"] > 0)
      reason += ", " + std::to_string(found["unmarked"]) +
                " unmarked (owned elsewhere or never moved by a failover)";
    return ActionResult::Succeeded(reason, DumpJson(detail));
  }

 private:
  ActionEnv env_;
};

}  // namespace

std::unique_ptr<Action> MakeOwnershipMarkersCheck(const ActionEnv& env) {
  return std::make_unique<OwnershipMarkersCheck>(env);
}

}  // namespace icewarden
