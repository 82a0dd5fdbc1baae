// ReadinessEvaluator: one route's readiness, checked with no side effect (readiness.h).
#include <algorithm>
#include <nlohmann/json.hpp>

#include "actions/action.h"
#include "actions/catalog_scope.h"
#include "actions/preflight.h"
#include "orchestrator/config/config.h"
#include "orchestrator/failovers/failover_service.h"
#include "orchestrator/failovers/route_table.h"
#include "orchestrator/readiness/readiness.h"
#include "runbooks/template.h"
#include "state/clock.h"
#include "state/table_pattern.h"

namespace icewarden {
namespace {

// The scope a proposal of `route` from `from` would name; nullopt with *why when the route's
// scope glob names none that readiness can check.
std::optional<std::string> ProposalScope(const FailoverRouteConfig& route, const std::string& from,
                                         std::string* why) {
  const std::string owner = "owner:" + from;
  if (GlobMatch(route.scope, owner)) return owner;
  auto parsed = CatalogScope::Parse(route.scope);
  if (parsed.ok() && parsed->kind != CatalogScope::Kind::kOwner) return route.scope;
  *why = "the route's scope '" + route.scope + "' matches neither " + owner +
         " nor is it a scope itself (namespace:P, tables:P): readiness cannot pick the scope "
         "a proposal would name";
  return std::nullopt;
}

// Every step the runbook can run, in run order, with its section: fence, promote, verify,
// compensate, and each step's inline compensation after it.
struct PlannedStep {
  std::string id;
  std::string action;
  const nlohmann::json* params;
  std::chrono::milliseconds timeout;
};

std::vector<PlannedStep> StepsOf(const Runbook& runbook) {
  std::vector<PlannedStep> out;
  for (RunbookSection s : {RunbookSection::kFence, RunbookSection::kPromote,
                           RunbookSection::kVerify, RunbookSection::kCompensate}) {
    for (const RunbookStep& step : runbook.Section(s)) {
      out.push_back({step.id, step.action, &step.params, step.timeout});
      if (step.compensate)
        out.push_back({step.id + ".compensate", step.compensate->action, &step.compensate->params,
                       step.timeout});
    }
  }
  return out;
}

}  // namespace

nlohmann::json RouteReadinessJson(const RouteReadiness& r) {
  nlohmann::json checks = nlohmann::json::array();
  for (const ReadinessCheck& c : r.checks) {
    nlohmann::json j = {{"kind", c.kind}, {"name", c.name},       {"from", c.from},
                        {"ok", c.ok},     {"checked", c.checked}, {"reason", c.reason}};
    if (!c.action.empty()) j["action"] = c.action;
    checks.push_back(std::move(j));
  }
  return {{"route", r.route},
          {"kind", r.kind},
          {"from", r.from},
          {"to", r.to},
          {"scope", r.scope},
          {"ready", r.ready},
          {"reasons", r.reasons},
          {"checks", std::move(checks)},
          {"checked_at", FormatUnixMillis(r.checked_at)},
          {"checked_at_unix_ms", r.checked_at},
          {"took_ms", r.took.count()}};
}

ReadinessEvaluator::ReadinessEvaluator(ReadinessDeps deps) : d_(std::move(deps)) {}

std::vector<RouteReadiness> ReadinessEvaluator::EvaluateAll() const {
  std::vector<RouteReadiness> out;
  for (const LoadedRoute& route : d_.routes->routes()) out.push_back(Evaluate(route));
  return out;
}

void SettleReasons(RouteReadiness* r) {
  r->reasons.clear();
  for (const ReadinessCheck& c : r->checks) {
    if (c.ok) continue;
    std::string reason = c.from.empty() || r->from != "*" ? "" : "from " + c.from + ": ";
    reason += c.kind + " " + c.name;
    if (!c.action.empty()) reason += " (" + c.action + ")";
    reason += ": " + c.reason;
    r->reasons.push_back(std::move(reason));
  }
  r->ready = r->reasons.empty();
}

RouteReadiness WithoutGuardChecks(RouteReadiness r) {
  std::erase_if(r.checks, [](const ReadinessCheck& c) { return c.kind == "guard"; });
  SettleReasons(&r);
  return r;
}

RouteReadiness ReadinessEvaluator::Evaluate(const LoadedRoute& route) const {
  const auto started = std::chrono::steady_clock::now();
  RouteReadiness out;
  out.route = route.config.name;
  out.kind = route.config.kind;
  out.from = route.config.from;
  out.to = route.config.to;
  out.checked_at = d_.clock->Now();
  if (route.config.from != "*") {
    EvaluateFrom(route, route.config.from, false, &out);
  } else {
    // A route from any region is ready when a proposal from each of them would work.
    for (const RegionConfig& r : d_.config->regions)
      if (r.name != route.config.to) EvaluateFrom(route, r.name, true, &out);
  }
  SettleReasons(&out);
  out.took = std::chrono::duration_cast<std::chrono::milliseconds>(
      std::chrono::steady_clock::now() - started);
  return out;
}

void ReadinessEvaluator::EvaluateFrom(const LoadedRoute& route, const std::string& from, bool many,
                                      RouteReadiness* out) const {
  auto add = [&](ReadinessCheck c) {
    c.from = from;
    out->checks.push_back(std::move(c));
  };
  std::string why;
  auto scope = ProposalScope(route.config, from, &why);
  if (!scope) {
    add({"proposal", "scope", "", from, false, true, why});
    return;
  }
  if (!many) out->scope = *scope;
  Failover f;  // never stored: a proposal as `failover propose --dry-run` would make it
  f.kind = ParseFailoverKind(route.config.kind).value_or(FailoverKind::kFailover);
  f.from = from;
  f.to = route.config.to;
  f.scope = *scope;
  f.runbook = route.config.runbook;
  f.plan.route = route.config.name;
  f.plan.runbook_hash = route.runbook_hash;

  // 1. The guards, as they stand now.
  auto guards = d_.failovers->CurrentGuards(f);
  if (!guards.ok()) {
    add({"guard", "all", "", from, false, true,
         "the guards could not be evaluated: " + guards.status().message()});
  } else {
    for (const GuardResult& g : *guards)
      add({"guard", g.guard, "", from, g.ok || g.waived, true, g.reason});
  }

  // 2. Every template of every step resolves (secrets present), and 3. each step's preflight.
  auto bindings = d_.failovers->BindingsOf(f, route);
  if (!bindings.ok()) {
    add({"templates", "parameters", "", from, false, true, bindings.status().message()});
    return;
  }
  for (const PlannedStep& step : StepsOf(route.runbook)) {
    auto resolved = ResolveTemplates(*step.params, *bindings);
    if (!resolved.ok()) {
      add({"templates", step.id, step.action, from, false, true, resolved.status().message()});
      continue;  // what the step would be sent cannot be known: nothing to preflight
    }
    const Action* action = d_.actions->Find(step.action);
    if (action == nullptr) {
      add({"preflight", step.id, step.action, from, false, true,
           d_.actions->UnknownKindMessage(step.action)});
      continue;
    }
    const ActionPreflight* preflight = PreflightOf(*action);
    if (preflight == nullptr) {
      add({"preflight", step.id, step.action, from, true, false,
           step.action + " has no preflight: not checked"});
      continue;
    }
    ActionContext ctx;
    ctx.failover_id = "readiness";
    ctx.step_id = step.id;
    ctx.from = from;
    ctx.to = route.config.to;
    ctx.scope = *scope;
    ctx.deadline = std::chrono::steady_clock::now() + std::min(step.timeout, d_.preflight_timeout);
    std::vector<std::string> problems = preflight->Preflight(resolved->value, ctx);
    if (problems.empty()) {
      add({"preflight", step.id, step.action, from, true, true, "ok"});
      continue;
    }
    for (std::string& p : problems)
      add({"preflight", step.id, step.action, from, false, true, std::move(p)});
  }
}

}  // namespace icewarden
