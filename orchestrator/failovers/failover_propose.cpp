// FailoverService::Propose and ::Failback: how a failover comes to be (failover_service.h).
#include "orchestrator/failovers/failover_service.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <random>
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

std::string NewFailoverId(UnixMillis now) {
  static thread_local std::mt19937_64 rng{std::random_device{}()};
  std::string day = FormatUnixMillis(now).substr(0, 10);  // 2026-12-01
  day.erase(std::remove(day.begin(), day.end(), '-'), day.end());
  static constexpr char kAlphabet[] = "0123456789abcdefghjkmnpqrstvwxyz";
  std::string suffix;
  for (int i = 0; i < 6; ++i) suffix += kAlphabet[rng() % 32];
  return "fo-" + day + "-" + suffix;
}

}  // namespace

CommandOutcome FailoverService::Propose(const Caller& caller, const ProposeRequest& req) {
  if (Status s = CheckReason("a proposal", req.reason, true); !s.ok()) return Refuse(s);
  if (Status s = CheckReason("accept_data_loss", req.accept_data_loss, false); !s.ok())
    return Refuse(s);
  if (req.kind == FailoverKind::kDrill)
    return Refuse(Status::InvalidArgument("kind must be failover or switchover"));
  if (d_.config->FindRegion(req.to) == nullptr)
    return Refuse(Status::InvalidArgument("to: no region named '" + req.to + "'"));
  auto scope = CatalogScope::Parse(req.scope);
  if (!scope.ok()) return Refuse(Status::InvalidArgument("scope: " + scope.status().message()));

  Failover f;
  f.kind = req.kind;
  f.scope = req.scope;
  f.to = req.to;
  f.from = scope->kind == CatalogScope::Kind::kOwner ? scope->owner_region() : req.from;
  if (!req.from.empty() && req.from != f.from)
    return Refuse(Status::InvalidArgument("from: the scope " + req.scope + " is owned by " +
                                          f.from + ", not " + req.from));
  if (f.from.empty())
    return Refuse(Status::InvalidArgument(
        "from: name the region losing ownership, or use a scope of the form owner:REGION"));
  if (d_.config->FindRegion(f.from) == nullptr)
    return Refuse(Status::InvalidArgument("from: no region named '" + f.from + "'"));
  if (f.from == f.to)
    return Refuse(Status::InvalidArgument("to: " + f.to + " already owns the scope " + f.scope));

  const LoadedRoute* route = nullptr;
  if (!req.route.empty()) {
    route = d_.routes->Named(req.route);
    if (route == nullptr)
      return Refuse(Status::InvalidArgument("route: the config has no failover route named '" +
                                            req.route.substr(0, 128) + "'"));
    if (!RouteTable::Covers(*route, f.kind, f.from, f.to, f.scope)) {
      const FailoverRouteConfig& c = route->config;
      std::string why = "route: " + c.name + " is a " + c.kind + " from " + c.from + " to " + c.to +
                        " of scope " + c.scope + "; it does not cover a ";
      why += FailoverKindName(f.kind);
      why += " from " + f.from + " to " + f.to + " of scope " + f.scope;
      return Refuse(Status::InvalidArgument(why));
    }
  } else {
    route = d_.routes->Find(f.kind, f.from, f.to, f.scope);
  }
  if (route == nullptr) {
    std::string known;
    for (const LoadedRoute& r : d_.routes->routes())
      known += (known.empty() ? "" : ", ") + r.config.name + " (" + r.config.kind + " " +
               r.config.from + " -> " + r.config.to + ", scope " + r.config.scope + ")";
    return Refuse(Status::InvalidArgument(
        std::string("no failover route in the config for a ") + FailoverKindName(f.kind) +
        " from " + f.from + " to " + f.to + " of scope " + f.scope +
        (known.empty() ? "; the config has no failovers: section" : "; routes are " + known)));
  }
  // A pause takes automation's proposals back into people's hands (automation_pause.h).
  if (caller.kind == ActorKind::kWebhook) {
    if (PauseStore* pauses = PauseStoreOf(*d_.store)) {
      auto listed = pauses->ListPauses();
      if (!listed.ok()) return Refuse(listed.status());
      if (auto p = CoveringPause(*listed, {route->config.name, f.from, f.to, ""}))
        return Refuse(Status::FailedPrecondition(PauseRefusal(*p, d_.clock->Now())));
    }
  }
  f.runbook = route->config.runbook;
  f.plan.route = route->config.name;
  f.plan.runbook_hash = route->runbook_hash;
  const UnixMillis now = d_.clock->Now();
  if (!req.dry_run) f.id = NewFailoverId(now);
  auto plan = PlanOf(f, *route);
  if (!plan.ok())
    return Refuse(
        Status::FailedPrecondition("the plan cannot be made: " + plan.status().message()));
  f.plan.plan_hash = plan->second;
  f.plan.params_json = DumpJson(plan->first.value("parameters", json::object()));

  auto snapshot = Snapshot(f);
  if (!snapshot.ok()) return Refuse(snapshot.status());
  const std::vector<GuardResult> guards = EvaluateGuards(*snapshot);
  json body = {{"plan", plan->first},
               {"plan_hash", plan->second},
               {"tables", snapshot->scope_tables.size()},
               {"guards", GuardResultsJson(guards)},
               {"guards_pass", GuardsPass(guards)}};
  if (req.dry_run) {
    CommandOutcome out;
    out.decision = "dry run: nothing was created; guards " +
                   std::string(GuardsPass(guards) ? "pass" : "fail: " + GuardFailures(guards));
    body["dry_run"] = true;
    body["decision"] = out.decision;
    out.body = std::move(body);
    return out;
  }
  // Rule 2: at most one active failover per table, from the proposal on.
  for (const GuardResult& g : guards)
    if (g.guard == "no_overlap" && !g.ok)
      return Refuse(Status::FailedPrecondition("guard no_overlap: " + g.reason), body);
  // A failback onto a region holding commits the current owner never had is refused unless the
  // proposer already says the loss is accepted; an approver must still accept it at approval.
  if (!req.failback_of.empty())
    for (const GuardResult& g : guards)
      if (g.guard == "divergence" && !g.ok && req.accept_data_loss.empty())
        return Refuse(Status::FailedPrecondition("refused: failback to " + f.to + ": " + g.reason +
                                                 " (propose again with accept_data_loss to "
                                                 "go on)"),
                      body);

  for (const Region& r : snapshot->regions)
    if (r.name == f.from && r.health == RegionHealth::kUnreachable) f.detected_at = r.since;
  f.proposed_by = caller.name;
  f.reason = req.reason;
  f.created_at = now;
  f.phase = FailoverPhase::kProposed;
  f.guard_checks_json = DumpJson(json::array({{{"point", "proposal"},
                                               {"at", now},
                                               {"by", caller.name},
                                               {"results", GuardResultsJson(guards)}}}));
  f.last_reason =
      f.id + " proposed by " + caller.name + ": " +
      (req.failback_of.empty() ? std::string(FailoverKindName(f.kind))
                               : "failback (a switchover undoing " + req.failback_of + ")") +
      " of " + f.scope + " (" + std::to_string(snapshot->scope_tables.size()) + " tables) from " +
      f.from + " to " + f.to + " with runbook " + route->runbook.name + ": " + req.reason;
  if (!req.accept_data_loss.empty())
    f.last_reason +=
        "; the proposer accepts losing the target's divergent commits: " + req.accept_data_loss;
  AuditEvent why;
  why.at = now;
  why.actor = caller.name;
  why.source = caller.source;
  why.action = "failover.propose";
  why.target = f.id;
  why.reason = f.last_reason;
  why.detail_json = DumpJson(json{{"actor_kind", ActorKindName(caller.kind)},
                                  {"plan_hash", f.plan.plan_hash},
                                  {"route", f.plan.route},
                                  {"failback_of", req.failback_of},
                                  {"guards", GuardResultsJson(guards)}});
  if (Status s = d_.store->CreateFailover(f, why); !s.ok()) return Refuse(s);
  f.version = 1;
  CommandOutcome out;
  out.decision = f.last_reason;
  body["decision"] = out.decision;
  body["failover"] = FailoverJson(f);
  out.body = std::move(body);
  return out;
}

CommandOutcome FailoverService::Failback(const Caller& caller, const FailbackRequest& req) {
  if (Status s = CheckReason("a failback", req.reason, true); !s.ok()) return Refuse(s);
  if (req.scope.size() > kMaxReasonBytes)
    return Refuse(Status::InvalidArgument("scope is longer than " +
                                          std::to_string(kMaxReasonBytes) + " bytes"));
  if (req.scope.empty())
    return Refuse(Status::InvalidArgument(
        "scope is required: the scope of the failover to undo (owner:us-east-1), or failover:ID"));
  auto recent = d_.store->ListFailovers(kRecentFailovers);
  if (!recent.ok()) return Refuse(recent.status());
  // The newest finished move of that scope whose tables are still where it put them.
  const Failover* last = nullptr;
  std::size_t still_there = 0;
  for (const Failover& f : *recent) {  // newest first
    if (f.phase != FailoverPhase::kCompleted) continue;
    if (f.scope != req.scope && "failover:" + f.id != req.scope) continue;
    auto scope = CatalogScope::Parse("failover:" + f.id);
    if (!scope.ok()) continue;
    auto rows = ListScopeOwnership(*d_.store, *scope, f.to, kMaxScopeTables);
    if (!rows.ok()) return Refuse(rows.status());
    if (rows->empty()) continue;  // moved on since (a later failover, or already failed back)
    last = &f;
    still_there = rows->size();
    break;
  }
  if (last == nullptr)
    return Refuse(Status::NotFound(
        "no completed failover of scope " + req.scope +
        " still owns the tables it moved: nothing to fail back (`failover list` shows them)"));
  ProposeRequest p;
  p.kind = FailoverKind::kSwitchover;
  p.from = last->to;
  p.to = last->from;
  p.scope = "failover:" + last->id;
  p.reason = req.reason;
  p.dry_run = req.dry_run;
  p.accept_data_loss = req.accept_data_loss;
  p.failback_of = last->id;
  CommandOutcome out = Propose(caller, p);
  out.body["failback_of"] = last->id;
  out.body["failback_tables"] = still_there;
  return out;
}

}  // namespace icewarden
