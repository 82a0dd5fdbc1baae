#include "orchestrator/failovers/failover_service.h"

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

// Reasons and comments are for people; a bound keeps the audit log and reports readable.
// Failovers considered for the cooldown and overlap guards.
constexpr std::size_t kRecentFailovers = 200;
// Tables a scope may hold: a bound on what one proposal reads from the store.
constexpr std::size_t kMaxScopeTables = 1'000'000;

std::string NewFailoverId(UnixMillis now) {
  static thread_local std::mt19937_64 rng{std::random_device{}()};
  std::string day = FormatUnixMillis(now).substr(0, 10);  // 2026-12-01
  day.erase(std::remove(day.begin(), day.end(), '-'), day.end());
  static constexpr char kAlphabet[] = "0123456789abcdefghjkmnpqrstvwxyz";
  std::string suffix;
  for (int i = 0; i < 6; ++i) suffix += kAlphabet[rng() % 32];
  return "fo-" + day + "-" + suffix;
}

json AllowedEventsJson(FailoverPhase phase) {
  json out = json::array();
  for (FailoverEvent e : AllowedEvents(phase)) out.push_back(FailoverEventName(e));
  return out;
}

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

CommandOutcome FailoverService::Approve(const Caller& caller, const std::string& id,
                                        const ApproveRequest& req) {
  for (const auto& [what, text] : {std::pair{"an approval", req.reason},
                                   {"accept_data_loss", req.accept_data_loss},
                                   {"cooldown_override", req.cooldown_override},
                                   {"force_candidate", req.force_candidate}})
    if (Status s = CheckReason(what, text, false); !s.ok()) return Refuse(s);
  if (req.plan_hash.empty())
    return Refuse(Status::InvalidArgument(
        "plan_hash is required: the hash of the plan you were shown (plan_now.plan_hash in "
        "GET /api/v1/failovers/" +
        id + "?plan=true)"));
  // A hash is echoed in refusals: accept only what a hash looks like.
  if (req.plan_hash.size() > 80 || req.plan_hash.find_first_of("\n\r\"") != std::string::npos)
    return Refuse(
        Status::InvalidArgument("plan_hash must be a plan's hash as GET /api/v1/failovers/" + id +
                                "?plan=true shows it (sha256:<64 hex digits>)"));
  if (!req.cooldown_override.empty() && caller.kind != ActorKind::kAdmin)
    return Refuse(Status::PermissionDenied("cooldown_override needs the admin role"));

  auto found = d_.store->GetFailover(id);
  if (!found.ok()) return Refuse(found.status());
  if (!found->has_value()) return Refuse(Status::NotFound("no failover with id '" + id + "'"));
  Failover f = **found;
  const bool reapproval = f.phase == FailoverPhase::kFenced;
  if (f.phase != FailoverPhase::kProposed && !(reapproval && !f.promotion_hold.empty())) {
    return Refuse(
        Status::FailedPrecondition(
            "refused: approve " + id + " (" + FailoverPhaseName(f.phase) + "): " +
            (reapproval ? "it is not held before promotion, so there is nothing to approve"
                        : "not allowed from " + std::string(FailoverPhaseName(f.phase)))),
        {{"phase", FailoverPhaseName(f.phase)}, {"allowed_events", AllowedEventsJson(f.phase)}});
  }
  const LoadedRoute* route = RouteOf(f);
  if (route == nullptr)
    return Refuse(
        Status::FailedPrecondition("route '" + f.plan.route + "' of " + id +
                                   " is no longer in the config; abort it and propose again"));
  auto plan = PlanOf(f, *route);
  if (!plan.ok())
    return Refuse(
        Status::FailedPrecondition("the plan cannot be made: " + plan.status().message()));
  if (plan->second != f.plan.plan_hash) {
    // The runbook or its parameters changed since the proposal: the failover now carries the
    // new plan, and approvals of the old one no longer count.
    f.plan.plan_hash = plan->second;
    f.plan.runbook_hash = route->runbook_hash;
    f.plan.params_json = DumpJson(plan->first.value("parameters", json::object()));
    AuditEvent why;
    why.actor = caller.name;
    why.source = caller.source;
    why.action = "failover.plan_changed";
    why.target = id;
    why.reason = id + "'s plan changed since it was proposed (runbook " + route->config.runbook +
                 "): approvals of the earlier plan no longer count";
    if (Status s = d_.store->UpdateFailover(f, f.version, why); !s.ok()) return Refuse(s);
  }
  if (req.plan_hash != f.plan.plan_hash) {
    return Refuse(
        Status::FailedPrecondition("the plan changed: you approved " + req.plan_hash + " but " +
                                   id + " would now run " + f.plan.plan_hash +
                                   "; review the plan and approve again"),
        {{"code", "plan_changed"}, {"plan", plan->first}, {"plan_hash", f.plan.plan_hash}});
  }

  FailoverInput in;
  in.event = FailoverEvent::kApprove;
  in.actor_kind = caller.kind;
  in.actor = caller.name;
  in.reason = req.reason;
  in.at = d_.clock->Now();
  in.approval_expires_at = in.at + d_.config->policies.approval_ttl.count();
  // Who may approve is the machine's to say, before any guard: a proposer's own approval
  // under the two-person rule is refused for that, whatever the guards would say.
  if (FailoverDecision pre = ApplyFailoverEvent(f, in, d_.orchestrator->Policy()); !pre.accepted) {
    AuditEvent why;
    why.at = in.at;
    why.actor = caller.name;
    why.source = caller.source;
    why.action = "failover.approve.refused";
    why.target = id;
    why.reason = pre.reason;
    if (Status s = d_.store->AppendAudit(why); !s.ok()) return Refuse(s);
    return Refuse(
        Status::FailedPrecondition(pre.reason),
        {{"phase", FailoverPhaseName(f.phase)}, {"allowed_events", AllowedEventsJson(f.phase)}});
  }
  Failover candidate = f;
  if (!req.accept_data_loss.empty()) candidate.accept_data_loss = req.accept_data_loss;
  auto snapshot = Snapshot(candidate);
  if (!snapshot.ok()) return Refuse(snapshot.status());
  snapshot->waivers.cooldown_override = req.cooldown_override;
  snapshot->waivers.force_candidate = req.force_candidate;
  const std::vector<GuardResult> guards = EvaluateGuards(*snapshot);
  json body = {{"guards", GuardResultsJson(guards)}, {"plan_hash", f.plan.plan_hash}};
  if (!GuardsPass(guards)) {
    if (Status s = AppendGuardCheck(id, reapproval ? "reapproval" : "approval", guards, caller);
        !s.ok())
      return Refuse(s);
    return Refuse(Status::FailedPrecondition("refused: approve " + id +
                                             ": guards failed: " + GuardFailures(guards)),
                  body);
  }

  const std::string point = reapproval ? "reapproval" : "approval";
  auto d = d_.orchestrator->ApplyToFailover(id, in, caller.source, [&](Failover& next) {
    if (!req.accept_data_loss.empty()) next.accept_data_loss = req.accept_data_loss;
    json checks = json::parse(next.guard_checks_json, nullptr, false);
    if (!checks.is_array()) checks = json::array();
    checks.push_back({{"point", point},
                      {"at", in.at},
                      {"by", caller.name},
                      {"results", GuardResultsJson(guards)}});
    next.guard_checks_json = DumpJson(checks);
  });
  CommandOutcome out = FromDecision(d, id);
  if (out.status.ok()) out.body["guards"] = GuardResultsJson(guards);
  return out;
}

CommandOutcome FailoverService::ConfirmFencing(const Caller& caller, const std::string& id,
                                               const std::string& reason) {
  if (Status s = CheckReason("an operator's fencing confirmation", reason, true); !s.ok())
    return Refuse(s);
  FailoverInput in;
  in.event = FailoverEvent::kConfirmFencing;
  in.actor_kind = caller.kind;
  in.actor = caller.name;
  in.reason = reason;
  in.fencing_kind = FencingKind::kOperator;
  in.at = d_.clock->Now();
  in.evidence_json = DumpJson(
      json{{"kind", "operator"}, {"by", caller.name}, {"from", caller.source}, {"reason", reason}});
  return FromDecision(d_.orchestrator->ApplyToFailover(id, in, caller.source), id);
}

CommandOutcome FailoverService::Abort(const Caller& caller, const std::string& id,
                                      const std::string& reason) {
  if (Status s = CheckReason("an abort", reason, true); !s.ok()) return Refuse(s);
  FailoverInput in;
  in.event = FailoverEvent::kAbort;
  in.actor_kind = caller.kind;
  in.actor = caller.name;
  in.reason = reason;
  in.at = d_.clock->Now();
  return FromDecision(d_.orchestrator->ApplyToFailover(id, in, caller.source), id);
}

CommandOutcome FailoverService::Ack(const Caller& caller, const std::string& id,
                                    const std::string& comment) {
  if (Status s = CheckReason("an acknowledgement", comment, true); !s.ok()) return Refuse(s);
  auto found = d_.store->GetFailover(id);
  if (!found.ok()) return Refuse(found.status());
  if (!found->has_value()) return Refuse(Status::NotFound("no failover with id '" + id + "'"));
  Failover f = **found;
  if (!IsTerminal(f.phase) && f.phase != FailoverPhase::kNeedsAttention)
    return Refuse(
        Status::FailedPrecondition("refused: ack " + id + " (" + FailoverPhaseName(f.phase) +
                                   "): only a finished failover can be acknowledged"),
        {{"phase", FailoverPhaseName(f.phase)}, {"allowed_events", AllowedEventsJson(f.phase)}});
  if (f.ack)
    return Refuse(Status::FailedPrecondition("refused: ack " + id + ": already acknowledged by " +
                                             f.ack->by));
  f.ack = FailoverAck{caller.name, comment, d_.clock->Now()};
  AuditEvent why;
  why.at = f.ack->at;
  why.actor = caller.name;
  why.source = caller.source;
  why.action = "failover.ack";
  why.target = id;
  why.reason = id + " acknowledged by " + caller.name +
               " (its cooldown no longer blocks the scope): " + comment;
  if (Status s = d_.store->UpdateFailover(f, f.version, why); !s.ok()) return Refuse(s);
  ++f.version;
  CommandOutcome out;
  out.decision = why.reason;
  out.body = {{"decision", why.reason}, {"failover", FailoverJson(f)}};
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

Status CheckReason(const std::string& what, const std::string& reason, bool required) {
  if (required && reason.empty()) return Status::InvalidArgument(what + " needs a reason");
  if (reason.size() > kMaxReasonBytes)
    return Status::InvalidArgument(what + ": the reason is longer than " +
                                   std::to_string(kMaxReasonBytes) + " bytes");
  return Status::Ok();
}

}  // namespace icewarden
