#include "orchestrator/api/failovers.h"

#include <nlohmann/json.hpp>

#include "orchestrator/api/command_body.h"
#include "orchestrator/api/query.h"
#include "orchestrator/api/readiness.h"
#include "orchestrator/failovers/failover_report.h"
#include "orchestrator/failovers/failover_service.h"
#include "state/json_text.h"
#include "state/record_json.h"

namespace icewarden {
namespace {

using nlohmann::json;

ApiResponse Bad(const std::string& message) { return BadRequestResponse(message); }

ApiResponse Answer(const CommandOutcome& out, int ok_status) {
  if (out.status.ok()) return JsonResponse(ok_status, out.body);
  json body = out.body.is_object() ? out.body : json::object();
  std::string code = ErrorCodeOf(out.status);
  if (body.contains("code")) {
    code = body["code"].get<std::string>();
    body.erase("code");
  }
  body["error"] = {{"code", code}, {"message", out.status.message()}};
  return JsonResponse(HttpStatusOf(out.status), body);
}

// What an approver is shown: the plan the failover would run now, its hash, the tables and
// the guards as they stand.
json PlanNow(FailoverService& failovers, const ReadinessBoard* readiness, const Failover& f,
             UnixMillis now) {
  json out = json::object();
  const LoadedRoute* route = failovers.RouteOf(f);
  if (route == nullptr) {
    out["error"] = "route '" + f.plan.route + "' is no longer in the config";
    return out;
  }
  auto plan = failovers.PlanOf(f, *route);
  if (!plan.ok()) {
    out["error"] = plan.status().message();
  } else {
    out["plan"] = plan->first;
    out["plan_hash"] = plan->second;
  }
  auto guards = failovers.CurrentGuards(f);
  if (guards.ok()) out["guards"] = GuardResultsJson(*guards);
  out["readiness"] = ReadinessOfRoute(readiness, f.plan.route, now);
  return out;
}

}  // namespace

ApiResponse HandleFailoverCommand(FailoverService& service, FailoverCommand command,
                                  const Caller& caller, const std::string& id,
                                  const std::string& body) {
  switch (command) {
    case FailoverCommand::kPropose: {
      auto doc = ReadBody(
          body, {"kind", "to", "scope", "from", "route", "reason", "dry_run", "accept_data_loss"});
      if (!doc.ok()) return Bad(doc.status().message());
      ProposeRequest req;
      std::string kind = "failover";
      for (auto [key, out] : {std::pair{"kind", &kind},
                              {"to", &req.to},
                              {"scope", &req.scope},
                              {"from", &req.from},
                              {"route", &req.route},
                              {"reason", &req.reason},
                              {"accept_data_loss", &req.accept_data_loss}})
        if (Status s = StringField(*doc, key, out); !s.ok()) return Bad(s.message());
      if (kind != "failover" && kind != "switchover" && kind != "failback")
        return Bad("kind must be failover, switchover or failback, got '" + kind + "'");
      if (auto it = doc->find("dry_run"); it != doc->end()) {
        if (!it->is_boolean()) return Bad("dry_run must be true or false");
        req.dry_run = it->get<bool>();
      }
      if (kind == "failback") {
        // The way back: the region and the tables come from the failover being undone.
        if (!req.to.empty() || !req.from.empty())
          return Bad(
              "a failback takes no to or from: it returns the scope to the region its "
              "last failover left");
        if (req.scope.empty()) return Bad("scope is required");
        if (!req.route.empty())
          return Bad(
              "a failback takes no route: it runs the switchover route back to the "
              "region its last failover left");
        FailbackRequest back{req.scope, req.reason, req.accept_data_loss, req.dry_run};
        return Answer(service.Failback(caller, back), req.dry_run ? 200 : 201);
      }
      req.kind = *ParseFailoverKind(kind);
      for (auto [key, value] : {std::pair{"to", &req.to}, {"scope", &req.scope}})
        if (value->empty()) return Bad(std::string(key) + " is required");
      CommandOutcome out = service.Propose(caller, req);
      return Answer(out, req.dry_run ? 200 : 201);
    }
    case FailoverCommand::kApprove: {
      auto doc = ReadBody(body, {"plan_hash", "reason", "accept_data_loss", "cooldown_override",
                                 "force_candidate"});
      if (!doc.ok()) return Bad(doc.status().message());
      ApproveRequest req;
      for (auto [key, out] : {std::pair{"plan_hash", &req.plan_hash},
                              {"reason", &req.reason},
                              {"accept_data_loss", &req.accept_data_loss},
                              {"cooldown_override", &req.cooldown_override},
                              {"force_candidate", &req.force_candidate}})
        if (Status s = StringField(*doc, key, out); !s.ok()) return Bad(s.message());
      return Answer(service.Approve(caller, id, req), 200);
    }
    case FailoverCommand::kConfirmFencing:
    case FailoverCommand::kAbort:
    case FailoverCommand::kAck: {
      const std::string field = command == FailoverCommand::kAck ? "comment" : "reason";
      auto doc = ReadBody(body, {field});
      if (!doc.ok()) return Bad(doc.status().message());
      std::string text;
      if (Status s = StringField(*doc, field, &text); !s.ok()) return Bad(s.message());
      if (text.empty()) return Bad(field + " is required: say why, for the audit log");
      if (command == FailoverCommand::kAck) return Answer(service.Ack(caller, id, text), 200);
      if (command == FailoverCommand::kAbort) return Answer(service.Abort(caller, id, text), 200);
      return Answer(service.ConfirmFencing(caller, id, text), 200);
    }
  }
  return JsonErrorResponse(500, "internal", "unknown command");
}

ApiResponse HandleFailoverList(StateStore& store, const QueryParams& query) {
  auto limit = query.Integer("limit", kListPageDefault, 1, kListPageMax);
  if (!limit.ok()) return BadRequestResponse(limit.status().message());
  auto active = query.Get("active");
  if (active && *active != "true" && *active != "false")
    return BadRequestResponse("active must be true or false, e.g. active=true");
  // active=true: only the failovers not yet ended (an index), which is what the dashboard's
  // overview shows after every change, from each browser.
  auto failovers = active == "true" ? store.ListActiveFailovers()
                                    : store.ListFailovers(static_cast<std::size_t>(*limit));
  if (!failovers.ok()) return StoreErrorResponse(failovers.status());
  if (active == "true") {
    // Oldest first from the store; newest first here as for the whole list.
    std::reverse(failovers->begin(), failovers->end());
    if (failovers->size() > static_cast<std::size_t>(*limit))
      failovers->resize(static_cast<std::size_t>(*limit));
  }
  json list = json::array();
  for (const Failover& f : *failovers) list.push_back(FailoverJson(f));
  return JsonResponse(200, {{"failovers", std::move(list)}});
}

ApiResponse HandleFailoverDetail(StateStore& store, FailoverService* failovers,
                                 const ReadinessBoard* readiness, const std::string& id,
                                 const QueryParams& query, UnixMillis now) {
  auto failover = store.GetFailover(id);
  if (!failover.ok()) return StoreErrorResponse(failover.status());
  if (!failover->has_value()) {
    return JsonErrorResponse(404, "not_found", "no failover with id '" + id + "'");
  }
  auto steps = store.ListSteps(id);
  if (!steps.ok()) return StoreErrorResponse(steps.status());
  json body = FailoverJson(**failover);
  json journal = json::array();
  for (const StepRecord& s : *steps) journal.push_back(StepJson(s));
  body["steps"] = std::move(journal);
  // ?plan=true: the plan and the guards as they stand, for an approver. They read the
  // whole scope, so a watcher polling the failover does not pay for them.
  auto plan = query.Get("plan");
  if (plan && *plan != "true" && *plan != "false")
    return BadRequestResponse("plan must be true or false, e.g. plan=true");
  if (plan == "true" && failovers != nullptr && !IsTerminal((*failover)->phase))
    body["plan_now"] = PlanNow(*failovers, readiness, **failover, now);
  // Waiting in fencing: what the old_region_unreachable evidence still lacks ("no quorum
  // yet: 1 of 3 replicas heard nothing ..."), so whoever looks sees why it waits.
  if (failovers != nullptr && (*failover)->phase == FailoverPhase::kFencing &&
      !(*failover)->fencing) {
    std::string why;
    if (!failovers->UnreachableEvidence(**failover, &why)) body["evidence_wait"] = why;
  }
  return JsonResponse(200, body);
}

ApiResponse HandleFailoverReport(StateStore& store, const std::string& id) {
  auto report = BuildFailoverReport(store, id);
  if (!report.ok()) {
    if (report.status().code() == StatusCode::kNotFound)
      return JsonErrorResponse(404, "not_found", "no failover with id '" + id + "'");
    return StoreErrorResponse(report.status());
  }
  return JsonResponse(200, *report);
}

}  // namespace icewarden
