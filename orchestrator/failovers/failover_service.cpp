#include "orchestrator/failovers/failover_service.h"

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
namespace {

using nlohmann::json;

}  // namespace

std::string PlanHash(const Failover& f, const std::string& runbook_hash,
                     const json& bound_parameters) {
  json doc = {{"kind", FailoverKindName(f.kind)},
              {"scope", f.scope},
              {"from", f.from},
              {"to", f.to},
              {"runbook_hash", runbook_hash},
              {"parameters", bound_parameters}};
  return Sha256Tag(DumpJson(doc));  // nlohmann sorts object keys: the text is canonical
}

FailoverService::FailoverService(FailoverServiceDeps deps) : d_(std::move(deps)) {}

CommandOutcome FailoverService::Refuse(const Status& status, json body) {
  CommandOutcome out;
  out.status = status;
  out.decision = "refused: " + status.message();
  out.body = std::move(body);
  return out;
}

const LoadedRoute* FailoverService::RouteOf(const Failover& f) const {
  return d_.routes->Named(f.plan.route);
}

Result<TemplateBindings> FailoverService::BindingsOf(const Failover& f,
                                                     const LoadedRoute& route) const {
  TemplateBindings b;
  b.failover_id = f.id.empty() ? "(dry run)" : f.id;
  b.from = f.from;
  b.to = f.to;
  b.scope = f.scope;
  std::map<std::string, json> given;
  for (const auto& [name, value] : route.config.params) given[name] = value;
  b.env = d_.env;
  b.base_dir = std::filesystem::path(route.config.runbook).parent_path().string();
  auto bound = BindRunbookParameters(route.runbook, given);
  if (!bound.ok()) return bound.status();
  b.params = *bound;
  return b;
}

Result<std::pair<json, std::string>> FailoverService::PlanOf(const Failover& f,
                                                             const LoadedRoute& route) const {
  auto b = BindingsOf(f, route);
  if (!b.ok()) return b.status();
  auto plan = PlanRunbook(route.runbook, *d_.actions, *b);
  if (!plan.ok()) return plan.status();
  json params = json::object();
  for (const auto& [k, v] : b->params) params[k] = v;
  json rendered = RenderPlanJson(*plan);
  rendered["runbook_hash"] = route.runbook_hash;
  rendered["route"] = route.config.name;
  return std::pair{rendered, PlanHash(f, route.runbook_hash, params)};
}

Result<std::shared_ptr<const FailoverService::ScopeListing>> FailoverService::ListScope(
    const Failover& f) {
  // Read before the listing: a change after this read moves the revision the next check sees.
  const std::optional<std::int64_t> revision = d_.store->OwnershipRevision();
  if (revision) {
    std::lock_guard lock(listing_mu_);
    if (listing_ && listing_->revision == *revision && listing_->scope == f.scope &&
        listing_->owner == f.from)
      return listing_;
  }
  auto scope = CatalogScope::Parse(f.scope);
  if (!scope.ok()) return scope.status();
  auto rows = ListScopeOwnership(*d_.store, *scope, f.from, kMaxScopeTables);
  if (!rows.ok()) return rows.status();
  auto listing = std::make_shared<ScopeListing>();
  listing->scope = f.scope;
  listing->owner = f.from;
  listing->tables.reserve(rows->size());
  auto index = std::make_shared<ScopeIndex>();
  index->reserve(rows->size());
  for (Ownership& o : *rows) {
    index->emplace(o.table, listing->tables.size());
    listing->tables.push_back(std::move(o.table));
    if (!o.failover_id.empty()) listing->moved_by.insert(std::move(o.failover_id));
  }
  listing->index = std::move(index);
  if (revision) {
    listing->revision = *revision;
    std::lock_guard lock(listing_mu_);
    listing_ = listing;
  }
  return std::shared_ptr<const ScopeListing>(std::move(listing));
}

Result<GuardSnapshot> FailoverService::Snapshot(const Failover& f) {
  GuardSnapshot s;
  s.now = d_.clock->Now();
  s.failover = f;
  auto regions = d_.store->ListRegions();
  if (!regions.ok()) return regions.status();
  s.regions = std::move(*regions);
  auto listing = ListScope(f);
  if (!listing.ok()) return listing.status();
  s.scope_tables = (*listing)->tables;
  s.scope_index = (*listing)->index;
  s.scope_moved_by = (*listing)->moved_by;
  if (d_.live != nullptr) s.lag = d_.live->Lag();
  auto others = d_.store->ListFailovers(kRecentFailovers);
  if (!others.ok()) return others.status();
  auto active = d_.store->ListActiveFailovers();
  if (!active.ok()) return active.status();
  s.others = std::move(*others);
  for (Failover& a : *active)
    if (std::none_of(s.others.begin(), s.others.end(),
                     [&](const Failover& o) { return o.id == a.id; }))
      s.others.push_back(std::move(a));
  auto timers = d_.store->ListTimers(kCooldownTimerPrefix);
  if (!timers.ok()) return timers.status();
  for (const StoreTimer& t : *timers)
    s.cooldown_elapsed[t.name.substr(std::string_view(kCooldownTimerPrefix).size())] = t.elapsed;
  s.max_staleness = d_.config->policies.max_staleness;
  s.cooldown = d_.config->policies.cooldown;
  if (const LoadedRoute* route = d_.routes->Named(f.plan.route))
    s.runbook_guards = route->runbook.guards;
  if (f.accept_data_loss) s.waivers.accept_data_loss = *f.accept_data_loss;
  return s;
}

Status FailoverService::AppendGuardCheck(const std::string& id, const std::string& point,
                                         const std::vector<GuardResult>& results,
                                         const Caller& caller) {
  // A refusal changes nothing but the record of the check: a compare-and-set on the version,
  // retried when the executor moved the failover meanwhile.
  for (int attempt = 0; attempt < 5; ++attempt) {
    auto found = d_.store->GetFailover(id);
    if (!found.ok()) return found.status();
    if (!found->has_value()) return Status::NotFound("no failover with id '" + id + "'");
    Failover next = **found;
    json checks = json::parse(next.guard_checks_json, nullptr, false);
    if (!checks.is_array()) checks = json::array();
    checks.push_back({{"point", point},
                      {"at", d_.clock->Now()},
                      {"by", caller.name},
                      {"results", GuardResultsJson(results)}});
    next.guard_checks_json = DumpJson(checks);
    AuditEvent why;
    why.actor = caller.name;
    why.source = caller.source;
    why.action = "failover.guards_refused";
    why.target = id;
    why.reason = GuardFailures(results);
    why.detail_json = DumpJson(json{{"point", point}, {"results", GuardResultsJson(results)}});
    Status s = d_.store->UpdateFailover(next, next.version, why);
    if (s.code() != StatusCode::kConflict) return s;
  }
  return Status::Conflict("failover " + id + " kept changing while its guard check was recorded");
}

CommandOutcome FailoverService::FromDecision(const Result<FailoverDecision>& d,
                                             const std::string& id) {
  if (!d.ok()) return Refuse(d.status());
  if (!d->accepted) {
    return Refuse(Status::FailedPrecondition(d->reason),
                  {{"phase", FailoverPhaseName(d->next.phase)},
                   {"allowed_events", AllowedEventsJson(d->next.phase)}});
  }
  CommandOutcome out;
  out.decision = d->reason;
  out.body = {{"decision", d->reason}, {"failover", FailoverJson(d->next)}};
  if (d_.wake) d_.wake(id);
  return out;
}
Result<GuardSnapshot> FailoverService::SnapshotWithWaivers(const Failover& f) {
  auto s = Snapshot(f);
  if (!s.ok()) return s.status();
  // What the approval waived stays waived: the approver took that decision.
  json checks = json::parse(f.guard_checks_json, nullptr, false);
  if (checks.is_array()) {
    for (auto it = checks.rbegin(); it != checks.rend(); ++it) {
      const std::string point = it->value("point", "");
      if (point != "approval" && point != "reapproval") continue;
      for (const json& r : it->value("results", json::array())) {
        if (!r.value("waived", false)) continue;
        const std::string guard = r.value("guard", "");
        const std::string why = "waived at approval";
        if (guard == "cooldown") s->waivers.cooldown_override = why;
        if (guard == "best_candidate") s->waivers.force_candidate = why;
      }
      break;
    }
  }
  return s;
}

Result<std::vector<GuardResult>> FailoverService::CurrentGuards(const Failover& f) {
  auto s = SnapshotWithWaivers(f);
  if (!s.ok()) return s.status();
  return EvaluateGuards(*s);
}

std::chrono::milliseconds FailoverService::LongestCooldown() const {
  std::chrono::milliseconds longest = d_.config->policies.cooldown;
  for (const LoadedRoute& route : d_.routes->routes())
    longest = std::max(longest, CooldownOf(d_.config->policies.cooldown, route.runbook.guards));
  return longest;
}

Status CheckReason(const std::string& what, const std::string& reason, bool required) {
  if (required && reason.empty()) return Status::InvalidArgument(what + " needs a reason");
  if (reason.size() > kMaxReasonBytes)
    return Status::InvalidArgument(what + ": the reason is longer than " +
                                   std::to_string(kMaxReasonBytes) + " bytes");
  return Status::Ok();
}

}  // namespace icewarden
