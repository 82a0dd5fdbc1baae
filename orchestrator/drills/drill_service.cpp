#include "orchestrator/drills/drill_service.h"

#include <algorithm>
#include <random>

#include "orchestrator/config/config.h"
#include "orchestrator/drills/drill_report.h"
#include "orchestrator/drills/shadow_run.h"
#include "orchestrator/drills/shadow_targets.h"
#include "orchestrator/failovers/route_table.h"
#include "state/clock.h"
#include "state/json_text.h"
#include "state/state_store.h"

namespace icewarden {
namespace {

// The proposal a plan or live run makes: the drill's route, from, to and scope.
ProposeRequest DrillProposal(const DrillConfig& drill, const LoadedRoute& route,
                             std::string reason) {
  ProposeRequest req;
  req.kind =
      route.config.kind == "switchover" ? FailoverKind::kSwitchover : FailoverKind::kFailover;
  req.to = drill.to;
  req.from = drill.from;
  req.scope = drill.scope;
  req.route = route.config.name;
  req.reason = std::move(reason);
  return req;
}

using nlohmann::json;

AuditEvent Why(const std::string& actor, const std::string& source, const std::string& action,
               const std::string& target, const std::string& reason, UnixMillis at) {
  AuditEvent e;
  e.at = at;
  e.actor = actor;
  e.source = source.empty() ? "internal" : source;
  e.action = action;
  e.target = target;
  e.reason = reason;
  return e;
}

CommandOutcome Refused(Status s) {
  CommandOutcome out;
  out.status = std::move(s);
  out.decision = out.status.message();
  return out;
}

}  // namespace

std::string NewDrillRunId(UnixMillis now) {
  static thread_local std::mt19937_64 rng{std::random_device{}()};
  std::string t = FormatUnixMillis(now);  // 2026-12-01T17:05:01.123Z
  std::string stamp = t.substr(0, 4) + t.substr(5, 2) + t.substr(8, 2) + "-" + t.substr(11, 2) +
                      t.substr(14, 2) + t.substr(17, 2);
  static constexpr char kAlphabet[] = "0123456789abcdefghjkmnpqrstvwxyz";
  std::string suffix;
  for (int i = 0; i < 4; ++i) suffix += kAlphabet[rng() % 32];
  return "dr-" + stamp + "-" + suffix;
}

DrillService::DrillService(DrillServiceDeps deps) : d_(std::move(deps)) {}

DrillService::~DrillService() { Stop(); }

void DrillService::Log(const std::string& line) const {
  if (d_.log) d_.log(line);
}

void DrillService::Stop() {
  std::vector<std::thread> workers;
  {
    std::lock_guard lock(mu_);
    workers.swap(workers_);
  }
  for (std::thread& t : workers)
    if (t.joinable()) t.join();
}

Status DrillService::Finish(DrillRun run, const std::string& verdict, const std::string& reason,
                            const std::string& failing_step) {
  const std::int64_t version = run.version;
  run.phase = DrillPhase::kFinished;
  run.verdict = verdict;
  run.verdict_reason = reason;
  run.failing_step = failing_step;
  run.finished_at = d_.clock->Now();
  Status s = d_.drills->UpdateDrillRun(
      run, version,
      Why("drill:" + run.drill, "", "drill.finish", run.id,
          "drill " + run.drill + " run " + run.id + " " + verdict + ": " + reason,
          run.finished_at));
  Log("drill run " + run.id + " " + verdict + ": " + reason);
  return s;
}

CommandOutcome DrillService::Run(const Caller& caller, const DrillRunRequest& req) {
  if (d_.drills == nullptr)
    return Refused(Status::Unavailable("this daemon's state store keeps no drill runs"));
  const DrillConfig* drill = d_.config->FindDrill(req.drill);
  if (drill == nullptr) {
    std::string known;
    for (const DrillConfig& d : d_.config->drills) known += (known.empty() ? "" : ", ") + d.name;
    return Refused(Status::NotFound(
        "no drill named '" + req.drill + "'" +
        (known.empty() ? "; the config has no drills: section" : "; drills are " + known)));
  }
  const std::string mode = req.mode.empty() ? drill->mode : req.mode;
  if (mode != "plan" && mode != "shadow" && mode != "live")
    return Refused(
        Status::InvalidArgument("mode must be plan, shadow or live, got '" + mode + "'"));
  if (mode == "shadow" && drill->targets.namespace_.empty())
    return Refused(Status::InvalidArgument(
        "drill " + drill->name +
        " has no targets.namespace: a shadow run needs canary tables to move instead of "
        "production's"));
  const LoadedRoute* route = d_.routes->Named(drill->route);
  if (route == nullptr)
    return Refused(Status::FailedPrecondition("drill " + drill->name + ": no route named '" +
                                              drill->route + "' is loaded"));
  const UnixMillis now = d_.clock->Now();
  DrillRun run;
  run.id = NewDrillRunId(now);
  run.drill = drill->name;
  run.mode = mode;
  run.phase = DrillPhase::kRunning;
  run.trigger = req.scheduled_for != 0 ? "schedule" : "operator:" + caller.name;
  run.scheduled_for = req.scheduled_for;
  run.from = drill->from;
  run.to = drill->to;
  run.scope = mode == "shadow" ? ShadowScope(drill->targets) : drill->scope;
  run.started_at = now;
  const std::string reason =
      "drill " + drill->name + " " + mode + " run " + run.id + " by " + run.trigger +
      (req.scheduled_for != 0 ? " for the slot " + FormatUnixMillis(req.scheduled_for)
                              : std::string());
  if (Status s = d_.drills->CreateDrillRun(
          run, Why(caller.name, caller.source, "drill.run", run.id, reason, now));
      !s.ok())
    return Refused(s);
  run.version = 1;
  Log(reason);

  Status s = Status::Ok();
  if (mode == "plan") {
    s = RunPlan(caller, run, *drill);
  } else if (mode == "live") {
    s = RunLive(caller, run, *drill);
  } else {
    Status bound;
    ShadowRunDeps deps = ShadowDeps(run, *drill, *route, &bound);
    if (!bound.ok()) {
      s = Finish(run, "failed", "the runbook's parameters do not bind: " + bound.message(), "");
    } else {
      s = JournalShadowSteps(deps, run);
      if (s.ok()) {
        if (d_.run_inline) {
          RunShadow(run, *drill);
        } else {
          std::lock_guard lock(mu_);
          workers_.emplace_back([this, run, drill] { RunShadow(run, *drill); });
        }
      }
    }
  }
  if (!s.ok()) return Refused(s);
  auto stored = d_.drills->GetDrillRun(run.id);
  CommandOutcome out;
  out.decision = reason;
  out.body = {
      {"run", stored.ok() && stored->has_value() ? DrillRunJson(**stored) : DrillRunJson(run)},
      {"decision", reason}};
  return out;
}

Status DrillService::RunPlan(const Caller& caller, DrillRun run, const DrillConfig& drill) {
  const LoadedRoute* route = d_.routes->Named(drill.route);
  ProposeRequest req = DrillProposal(drill, *route, "drill " + drill.name + " plan run " + run.id);
  req.dry_run = true;
  Caller as = caller;
  CommandOutcome planned = d_.failovers->Propose(as, req);
  json result = {{"plan", planned.body.value("plan", json(nullptr))},
                 {"plan_hash", planned.body.value("plan_hash", json(nullptr))},
                 {"tables", planned.body.value("tables", json(nullptr))},
                 {"guards", planned.body.value("guards", json::array())}};
  run.result_json = DumpJson(result);
  if (!planned.status.ok())
    return Finish(run, "failed", "the plan cannot be made: " + planned.status.message(), "plan");
  for (const json& g : result["guards"])
    if (!g.value("ok", false) && !g.value("waived", false))
      return Finish(run, "failed",
                    "guard " + g.value("guard", std::string("?")) +
                        " fails: " + g.value("reason", std::string()),
                    "guard:" + g.value("guard", std::string("?")));
  return Finish(run, "passed",
                "the plan has " +
                    std::to_string(result["plan"].value("steps", json::array()).size()) +
                    " steps and every guard passes",
                "");
}

Status DrillService::RunLive(const Caller& caller, DrillRun run, const DrillConfig& drill) {
  const LoadedRoute* route = d_.routes->Named(drill.route);
  ProposeRequest req = DrillProposal(
      drill, *route,
      "drill " + drill.name + " live run " + run.id +
          ": a rehearsal; approve it to fail over, a failback is proposed once it completes");
  // The proposer is the caller (or the scheduler): never an approver acting for itself.
  Caller proposer = caller;
  proposer.kind = ActorKind::kOperator;
  CommandOutcome proposed = d_.failovers->Propose(proposer, req);
  if (!proposed.status.ok())
    return Finish(run, "failed", "the failover proposal was refused: " + proposed.status.message(),
                  "propose");
  const std::int64_t version = run.version;
  run.failover_id = proposed.body["failover"].value("id", std::string());
  run.phase = DrillPhase::kWaiting;
  return d_.drills->UpdateDrillRun(run, version,
                                   Why("drill:" + run.drill, "", "drill.wait", run.id,
                                       "drill run " + run.id + " proposed failover " +
                                           run.failover_id + "; it waits for a person's approval",
                                       d_.clock->Now()));
}

ShadowRunDeps DrillService::ShadowDeps(const DrillRun& run, const DrillConfig& drill,
                                       const LoadedRoute& route, Status* bound) const {
  ShadowRunDeps deps;
  deps.route = &route;
  deps.drills = d_.drills;
  deps.actions = d_.actions;
  deps.clock = d_.clock.get();
  deps.targets = &drill.targets;
  deps.live = d_.live;
  deps.sleep = d_.sleep;
  Failover f;  // never stored: the runbook's ${from}, ${to}, ${scope} of this run
  f.id = run.id;
  f.from = run.from;
  f.to = run.to;
  f.scope = run.scope;
  auto bindings = d_.failovers->BindingsOf(f, route);
  *bound = bindings.status();
  if (bindings.ok()) deps.bindings = *std::move(bindings);
  return deps;
}

void DrillService::RunShadow(DrillRun run, const DrillConfig& drill) {
  Status bound;
  ShadowRunDeps deps = ShadowDeps(run, drill, *d_.routes->Named(drill.route), &bound);
  if (!bound.ok()) {
    (void)Finish(run, "failed", bound.message(), "");
    return;
  }
  ShadowOutcome steps = ExecuteShadowSteps(deps, run);
  // Cleaning is recorded before the cleanup runs: a crash from here on is cleaned up again.
  {
    auto current = d_.drills->GetDrillRun(run.id);
    if (current.ok() && current->has_value()) run = **current;
    const std::int64_t version = run.version;
    run.phase = DrillPhase::kCleaning;
    run.result_json = DumpJson(json{{"rpo", steps.rpo}, {"steps_reason", steps.reason}});
    if (d_.drills
            ->UpdateDrillRun(
                run, version,
                Why("drill:" + run.drill, "", "drill.cleanup", run.id,
                    "drill run " + run.id + " cleaning up: " + steps.reason, d_.clock->Now()))
            .ok())
      run.version = version + 1;
  }
  CleanupOutcome cleanup = CleanupShadowSteps(deps, run);
  std::string verdict = "passed", reason = steps.reason, failing = steps.failing_step;
  if (!steps.steps_ok) verdict = "failed";
  if (!cleanup.ok) {
    verdict = "failed";
    reason += "; cleanup failed: " + cleanup.reason;
  } else {
    reason += "; cleanup: " + cleanup.reason;
  }
  if (verdict == "passed") {
    // The RTO target decides too: a rehearsal that works but too slowly has failed.
    auto report = BuildDrillReport(*d_.drills, *d_.store, run.id, drill.rto_target.count());
    if (report.ok() && (*report)["rto"]["within_target"] == false) {
      verdict = "failed";
      reason = "measured RTO " + (*report)["rto"]["measured_ms"].dump() +
               " ms exceeds the target " + std::to_string(drill.rto_target.count()) + " ms; " +
               reason;
      failing = "rto";
    }
  }
  (void)Finish(run, verdict, reason, failing);
}

std::vector<std::string> DrillService::ResumeAtStart() {
  std::vector<std::string> out;
  if (d_.drills == nullptr) return out;
  auto runs = d_.drills->ListDrillRuns("", 0);
  if (!runs.ok()) return {"drills: cannot list runs: " + runs.status().message()};
  for (DrillRun run : *runs) {
    if (run.mode != "shadow" ||
        (run.phase != DrillPhase::kRunning && run.phase != DrillPhase::kCleaning))
      continue;
    const DrillConfig* drill = d_.config->FindDrill(run.drill);
    const LoadedRoute* route = drill != nullptr ? d_.routes->Named(drill->route) : nullptr;
    if (drill == nullptr || route == nullptr) {
      (void)Finish(run, "failed",
                   "interrupted by a restart, and drill " + run.drill +
                       " is no longer configured: check its targets by hand",
                   "");
      out.push_back("drill run " + run.id + ": not configured any more, marked failed");
      continue;
    }
    // Bindings that no longer bind still leave the journaled captures to restore from.
    Status bound;
    ShadowRunDeps deps = ShadowDeps(run, *drill, *route, &bound);
    std::string interrupted_at;
    auto steps = d_.drills->ListDrillSteps(run.id);
    if (steps.ok())
      for (const DrillStep& s : *steps)
        if (s.state == "running") interrupted_at = s.step_id;
    CleanupOutcome cleanup = CleanupShadowSteps(deps, run);
    auto current = d_.drills->GetDrillRun(run.id);
    if (current.ok() && current->has_value()) run = **current;
    const std::string reason =
        "interrupted by a restart" +
        (interrupted_at.empty() ? std::string() : " during step " + interrupted_at) +
        "; cleanup after the restart: " + cleanup.reason;
    (void)Finish(run, "failed", reason, interrupted_at);
    out.push_back("drill run " + run.id + ": " + reason);
  }
  return out;
}

std::string DrillService::RefreshLive(DrillRun run) {
  auto fo = d_.store->GetFailover(run.failover_id);
  if (!fo.ok() || !fo->has_value()) return "";
  const Failover& f = **fo;
  if (!IsTerminal(f.phase) && f.phase != FailoverPhase::kNeedsAttention) return "";
  if (f.phase != FailoverPhase::kCompleted) {
    (void)Finish(run, "failed",
                 "failover " + f.id + " ended " + FailoverPhaseName(f.phase) + ": " + f.last_reason,
                 "failover");
    return "drill run " + run.id + " failed: failover " + f.id + " " + FailoverPhaseName(f.phase);
  }
  if (run.failback_id.empty()) {
    // The way back is proposed once the region the failover left is healthy again: a
    // failback onto a region that is still down could not pass its guards.
    auto home = d_.store->GetRegion(f.from);
    if (!home.ok() || !home->has_value() || (*home)->health != RegionHealth::kHealthy) return "";
    Caller proposer{"drill:" + run.drill, ActorKind::kOperator, "internal"};
    FailbackRequest back;
    back.scope = "failover:" + f.id;
    back.reason = "drill " + run.drill + " live run " + run.id + ": failing back after " + f.id;
    CommandOutcome out = d_.failovers->Failback(proposer, back);
    if (!out.status.ok()) {
      (void)Finish(run, "failed", "the failback proposal was refused: " + out.status.message(),
                   "failback");
      return "drill run " + run.id + ": failback refused";
    }
    const std::int64_t version = run.version;
    run.failback_id = out.body["failover"].value("id", std::string());
    (void)d_.drills->UpdateDrillRun(run, version,
                                    Why("drill:" + run.drill, "", "drill.wait", run.id,
                                        "drill run " + run.id + " proposed failback " +
                                            run.failback_id + "; it waits for a person's approval",
                                        d_.clock->Now()));
    return "drill run " + run.id + ": failback " + run.failback_id + " proposed";
  }
  auto back = d_.store->GetFailover(run.failback_id);
  if (!back.ok() || !back->has_value()) return "";
  const Failover& b = **back;
  if (!IsTerminal(b.phase) && b.phase != FailoverPhase::kNeedsAttention) return "";
  if (b.phase != FailoverPhase::kCompleted) {
    (void)Finish(run, "failed",
                 "failback " + b.id + " ended " + FailoverPhaseName(b.phase) + ": " + b.last_reason,
                 "failback");
    return "drill run " + run.id + " failed: failback " + b.id;
  }
  const DrillConfig* drill = d_.config->FindDrill(run.drill);
  const long long target = drill != nullptr ? drill->rto_target.count() : 0;
  auto report = BuildDrillReport(*d_.drills, *d_.store, run.id, target);
  if (report.ok() && (*report)["rto"]["within_target"] == false) {
    (void)Finish(run, "failed",
                 "failover RTO " + (*report)["rto"]["measured_ms"].dump() +
                     " ms exceeds the target " + std::to_string(target) + " ms",
                 "rto");
  } else {
    (void)Finish(run, "passed", "failover " + f.id + " and failback " + b.id + " completed", "");
  }
  return "drill run " + run.id + " finished";
}

std::vector<std::string> DrillService::Refresh() {
  std::vector<std::string> out;
  if (d_.drills == nullptr) return out;
  auto runs = d_.drills->ListDrillRuns("", 200);
  if (!runs.ok()) return out;
  for (const DrillRun& run : *runs) {
    if (run.mode != "live" || run.phase != DrillPhase::kWaiting) continue;
    std::string line = RefreshLive(run);
    if (!line.empty()) out.push_back(line);
  }
  return out;
}

CommandOutcome DrillService::Note(const Caller& caller, const std::string& run_id,
                                  const std::string& text) {
  if (d_.drills == nullptr)
    return Refused(Status::Unavailable("this daemon's state store keeps no drill runs"));
  if (Status s = CheckReason("a note", text, true); !s.ok()) return Refused(s);
  const UnixMillis now = d_.clock->Now();
  DrillNote note{run_id, caller.name, text, now};
  if (Status s = d_.drills->AddDrillNote(
          note, Why(caller.name, caller.source, "drill.note", run_id, text, now));
      !s.ok())
    return Refused(s);
  CommandOutcome out;
  out.decision = "note added to drill run " + run_id;
  out.body = {
      {"note",
       {{"run_id", run_id}, {"by", caller.name}, {"text", text}, {"at", FormatUnixMillis(now)}}}};
  return out;
}

Result<json> DrillService::Report(const std::string& run_id) {
  if (d_.drills == nullptr)
    return Status::Unavailable("this daemon's state store keeps no drill runs");
  auto run = d_.drills->GetDrillRun(run_id);
  if (!run.ok()) return run.status();
  if (!run->has_value()) return Status::NotFound("no drill run with id '" + run_id + "'");
  if ((*run)->mode == "live" && (*run)->phase == DrillPhase::kWaiting) (void)RefreshLive(**run);
  const DrillConfig* drill = d_.config->FindDrill((*run)->drill);
  return BuildDrillReport(*d_.drills, *d_.store, run_id,
                          drill != nullptr ? drill->rto_target.count() : 0);
}

std::vector<DrillMetric> DrillService::Metrics() {
  std::vector<DrillMetric> out;
  if (d_.drills == nullptr) return out;
  for (const DrillConfig& d : d_.config->drills) {
    DrillMetric m;
    m.drill = d.name;
    auto runs = d_.drills->ListDrillRuns(d.name, 50);
    if (runs.ok()) {
      for (const DrillRun& r : *runs) {
        if (r.phase != DrillPhase::kFinished) continue;
        if (m.last_success_at == 0 && r.verdict == "passed") m.last_success_at = r.finished_at;
        if (m.last_rto_ms < 0 && r.mode != "plan") {
          auto report = BuildDrillReport(*d_.drills, *d_.store, r.id, d.rto_target.count());
          if (report.ok() && (*report)["rto"]["measured_ms"].is_number())
            m.last_rto_ms = (*report)["rto"]["measured_ms"].get<long long>();
        }
      }
    }
    out.push_back(m);
  }
  return out;
}

Result<json> DrillService::List(std::size_t limit) {
  if (d_.drills == nullptr)
    return Status::Unavailable("this daemon's state store keeps no drill runs");
  json drills = json::array();
  for (const DrillConfig& d : d_.config->drills) {
    auto last = d_.drills->ListDrillRuns(d.name, 1);
    if (!last.ok()) return last.status();
    drills.push_back({{"name", d.name},
                      {"route", d.route},
                      {"from", d.from},
                      {"to", d.to},
                      {"scope", d.scope},
                      {"mode", d.mode},
                      {"schedule", d.schedule.empty() ? json(nullptr) : json(d.schedule)},
                      {"time_zone", d.time_zone},
                      {"rto_target_ms", d.rto_target.count()},
                      {"last_run", last->empty() ? json(nullptr) : DrillRunJson(last->front())}});
  }
  auto runs = d_.drills->ListDrillRuns("", limit);
  if (!runs.ok()) return runs.status();
  json list = json::array();
  for (const DrillRun& r : *runs) list.push_back(DrillRunJson(r));
  return json{{"drills", drills}, {"runs", list}};
}

}  // namespace icewarden
