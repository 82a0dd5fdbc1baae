// FailoverService's commands on a proposed failover: approve, confirm fencing, abort, ack.
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
  // For people: when the approval stops counting, as this replica's clock sees it. What
  // decides is the approval's store timer, which runs on the store's clock (issue 30).
  in.approval_expires_at = in.at + d_.config->policies.approval_ttl.count();
  auto live = d_.store->ListTimers(ApprovalTimerPrefix(id));
  if (!live.ok()) return Refuse(live.status());
  std::set<std::string> running;
  for (const StoreTimer& t : *live) running.insert(t.name);
  for (std::size_t i = 0; i < f.approvals.size(); ++i)
    if (running.count(ApprovalTimerName(id, f.approvals[i].by, f.approvals[i].at)))
      in.live_approvals.insert(i);
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
  // The timer before the approval: an approval on record always has one (a crash between
  // leaves a timer that runs out unused).
  if (Status s = d_.store->StartTimer(ApprovalTimerName(id, caller.name, in.at),
                                      d_.config->policies.approval_ttl);
      !s.ok())
    return Refuse(s);
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

}  // namespace icewarden
