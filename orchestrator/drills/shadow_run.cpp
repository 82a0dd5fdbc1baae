#include "orchestrator/drills/shadow_run.h"

#include <algorithm>
#include <map>
#include <thread>

#include "actions/action.h"
#include "orchestrator/config/config.h"
#include "orchestrator/drills/shadow_targets.h"
#include "orchestrator/failovers/route_table.h"
#include "orchestrator/watch/live_view.h"
#include "runbooks/yaml_reader.h"
#include "state/clock.h"
#include "state/json_text.h"
#include "state/table_pattern.h"

namespace icewarden {
namespace {

using nlohmann::json;

struct PlannedStep {
  const RunbookStep* step = nullptr;
  RunbookSection section = RunbookSection::kFence;
};

std::vector<PlannedStep> StepsInOrder(const Runbook& rb) {
  std::vector<PlannedStep> out;
  for (RunbookSection s :
       {RunbookSection::kFence, RunbookSection::kPromote, RunbookSection::kVerify})
    for (const RunbookStep& step : rb.Section(s)) out.push_back({&step, s});
  return out;
}

// The step's params resolved and pointed at the drill targets: what to run with, and the
// masked copy (what is journaled).
struct Prepared {
  ShadowStep run;
  json masked;
  std::string error;  // templates that do not resolve
};

Prepared Prepare(const ShadowRunDeps& deps, const RunbookStep& step) {
  Prepared p;
  auto resolved = ResolveTemplates(step.params, deps.bindings);
  if (!resolved.ok()) {
    p.error = resolved.status().message();
    return p;
  }
  p.run = RetargetForShadow(step.action, resolved->value, *deps.targets);
  p.masked = RetargetForShadow(step.action, resolved->masked, *deps.targets).params;
  return p;
}

ActionContext ContextFor(const ShadowRunDeps& deps, const DrillRun& run, const std::string& key,
                         std::chrono::milliseconds timeout, const Cancellation* cancel) {
  ActionContext ctx;
  ctx.failover_id = run.id;
  ctx.step_id = key;
  ctx.idempotency_key = run.id + "/" + key;
  ctx.from = run.from;
  ctx.to = run.to;
  ctx.scope = deps.bindings.scope;
  ctx.deadline = std::chrono::steady_clock::now() + timeout;
  ctx.cancel = cancel;
  return ctx;
}

void Sleep(const ShadowRunDeps& deps, std::chrono::milliseconds d) {
  if (deps.sleep) {
    deps.sleep(d);
  } else {
    std::this_thread::sleep_for(d);
  }
}

std::chrono::milliseconds Backoff(const StepRetry& r, int failed) {
  double ms = static_cast<double>(r.initial_backoff.count());
  for (int i = 1; i < failed; ++i) ms *= r.multiplier;
  return std::min(r.max_backoff, std::chrono::milliseconds(static_cast<long long>(ms)));
}

// The worst lag of the drill namespace's tables towards the target, from the latest round.
json MeasureRpo(const ShadowRunDeps& deps, const DrillRun& run) {
  if (deps.live == nullptr) return nullptr;
  auto lag = deps.live->Lag();
  if (!lag) return nullptr;
  long long worst = 0;
  int tables = 0;
  bool complete = true;
  for (const TableLag& t : lag->tables) {
    if (t.replica != run.to) continue;
    if (!GlobMatch(deps.targets->namespace_ + ".*", t.table.ToString())) continue;
    ++tables;
    if (t.state == LagState::kUnknown) complete = false;
    worst = std::max<long long>(worst, t.lag.count());
  }
  if (tables == 0) return nullptr;
  return {{"worst_lag_ms", worst},
          {"tables", tables},
          {"complete", complete},
          {"measured_at", FormatUnixMillis(lag->at)}};
}

}  // namespace

Status JournalShadowSteps(const ShadowRunDeps& deps, const DrillRun& run) {
  int ordinal = 0;
  for (const PlannedStep& p : StepsInOrder(deps.route->runbook)) {
    DrillStep rec;
    rec.run_id = run.id;
    rec.step_id = p.step->id;
    rec.ordinal = ++ordinal;
    rec.section = RunbookSectionName(p.section);
    rec.action = p.step->action;
    if (Status s = deps.drills->PutDrillStep(rec); !s.ok()) return s;
  }
  return Status::Ok();
}

ShadowOutcome ExecuteShadowSteps(const ShadowRunDeps& deps, const DrillRun& run) {
  ShadowOutcome out;
  auto journal = deps.drills->ListDrillSteps(run.id);
  if (!journal.ok()) {
    out.steps_ok = false;
    out.reason = "cannot read the drill's step journal: " + journal.status().message();
    return out;
  }
  std::map<std::string, DrillStep> records;
  for (const DrillStep& r : *journal) records[r.step_id] = r;
  int failed_continue = 0;
  for (const PlannedStep& p : StepsInOrder(deps.route->runbook)) {
    const RunbookStep& step = *p.step;
    DrillStep rec = records[step.id];
    rec.run_id = run.id;
    rec.step_id = step.id;
    Prepared prep = Prepare(deps, step);
    Action* action = deps.actions->FindMutable(step.action);
    if (!prep.error.empty() || action == nullptr) {
      rec.state = "failed";
      rec.error = !prep.error.empty() ? prep.error : deps.actions->UnknownKindMessage(step.action);
      rec.started_at = rec.finished_at = deps.clock->Now();
      (void)deps.drills->PutDrillStep(rec);
      out.steps_ok = false;
      out.failing_step = step.id;
      out.reason = "step " + step.id + " could not be prepared: " + rec.error;
      return out;
    }
    rec.params_json = DumpJson(prep.masked);
    if (!prep.run.run) {
      rec.state = "skipped";
      rec.error = prep.run.skip_reason;
      rec.started_at = rec.finished_at = deps.clock->Now();
      if (Status s = deps.drills->PutDrillStep(rec); !s.ok()) {
        out.steps_ok = false;
        out.reason = s.message();
        return out;
      }
      continue;
    }
    if (step.action == "ownership.transfer") out.rpo = MeasureRpo(deps, run);
    Cancellation cancel;
    ActionContext ctx = ContextFor(deps, run, step.id, step.timeout, &cancel);
    auto before = action->Capture(prep.run.params, ctx);
    rec.started_at = deps.clock->Now();
    rec.before_json = before.ok() ? *before : "";
    rec.cleanup = action->has_compensation() ? "pending" : "";
    rec.state = "running";
    rec.attempts = 0;
    // The cleanup obligation is durable before the step can act.
    if (Status s = deps.drills->PutDrillStep(rec); !s.ok()) {
      out.steps_ok = false;
      out.reason = "cannot journal step " + step.id + ": " + s.message();
      return out;
    }
    std::string state = "failed", error, detail = "{}";
    if (!before.ok()) {
      rec.attempts = 1;
      error = "capturing the state before the step failed: " + before.status().message();
    }
    for (int attempt = 1; before.ok() && attempt <= step.retry.attempts; ++attempt) {
      rec.attempts = attempt;
      ctx.deadline = std::chrono::steady_clock::now() + step.timeout;
      ctx.before_json = rec.before_json;
      ActionResult r = action->Run(prep.run.params, ctx);
      const bool late = std::chrono::steady_clock::now() > ctx.deadline;
      detail = r.detail_json;
      if (r.ok() && !late) {
        state = "succeeded";
        error.clear();
        break;
      }
      state = late ? "timed_out" : "failed";
      error = late ? "timed out after " + FormatDuration(step.timeout) + ": " + r.reason : r.reason;
      if (attempt < step.retry.attempts) Sleep(deps, Backoff(step.retry, attempt));
    }
    rec.state = state;
    rec.error = error;
    rec.detail_json = detail.empty() ? "{}" : detail;
    rec.finished_at = deps.clock->Now();
    if (Status s = deps.drills->PutDrillStep(rec); !s.ok()) {
      out.steps_ok = false;
      out.reason = "cannot journal step " + step.id + ": " + s.message();
      return out;
    }
    if (state == "succeeded") continue;
    if (step.on_failure == OnFailure::kContinue) {
      // The runbook accepts this failure (a fence whose failure is no evidence); the drill
      // still reports it, and it still fails the verdict when it is a verify step.
      if (p.section == RunbookSection::kVerify) {
        out.steps_ok = false;
        if (out.failing_step.empty()) out.failing_step = step.id;
        out.reason = "verify step " + step.id + " " + state + ": " + error;
      }
      ++failed_continue;
      continue;
    }
    out.steps_ok = false;
    out.failing_step = step.id;
    out.reason = "step " + step.id + " (" + step.action + ") " + state + " after " +
                 std::to_string(rec.attempts) + " attempt(s): " + error;
    return out;
  }
  if (out.steps_ok)
    out.reason = "every step succeeded or was skipped" +
                 (failed_continue > 0
                      ? "; " + std::to_string(failed_continue) + " failed with on_failure: continue"
                      : std::string());
  return out;
}

CleanupOutcome CleanupShadowSteps(const ShadowRunDeps& deps, const DrillRun& run) {
  CleanupOutcome out;
  auto journal = deps.drills->ListDrillSteps(run.id);
  if (!journal.ok()) {
    out.ok = false;
    out.reason = "cannot read the drill's step journal: " + journal.status().message();
    return out;
  }
  std::map<std::string, const RunbookStep*> steps;
  for (const PlannedStep& p : StepsInOrder(deps.route->runbook)) steps[p.step->id] = p.step;
  std::vector<DrillStep> records = *journal;
  std::sort(records.begin(), records.end(),
            [](const DrillStep& a, const DrillStep& b) { return a.ordinal > b.ordinal; });
  for (DrillStep rec : records) {
    if (rec.cleanup != "pending" && rec.cleanup != "failed") continue;
    auto it = steps.find(rec.step_id);
    Action* action = deps.actions->FindMutable(rec.action);
    if (it == steps.end() || action == nullptr) {
      rec.cleanup = "failed";
      rec.cleanup_reason = "the runbook no longer has this step: undo it by hand";
      (void)deps.drills->PutDrillStep(rec);
      out.ok = false;
      out.reason = "step " + rec.step_id + ": " + rec.cleanup_reason;
      continue;
    }
    Prepared prep = Prepare(deps, *it->second);
    if (!prep.error.empty()) {
      rec.cleanup = "failed";
      rec.cleanup_reason = prep.error;
      (void)deps.drills->PutDrillStep(rec);
      out.ok = false;
      out.reason = "step " + rec.step_id + ": " + prep.error;
      continue;
    }
    Cancellation cancel;
    ActionContext ctx =
        ContextFor(deps, run, rec.step_id + ".compensate", it->second->timeout, &cancel);
    ctx.before_json = rec.before_json;
    json detail = json::parse(rec.detail_json, nullptr, false);
    if (!detail.is_object()) detail = json::object();
    // A step that failed or was cut short by a crash has no result detail; what Capture read
    // before it acted is the state to restore (the executor's contract for Capture).
    json before = json::parse(rec.before_json.empty() ? "{}" : rec.before_json, nullptr, false);
    if (before.is_object())
      for (const auto& [k, v] : before.items())
        if (!detail.contains(k)) detail[k] = v;
    ActionResult r = action->Compensate(prep.run.params, detail, ctx);
    rec.cleanup = r.ok() ? "done" : "failed";
    rec.cleanup_reason = r.reason;
    if (Status s = deps.drills->PutDrillStep(rec); !s.ok()) {
      out.ok = false;
      out.reason = s.message();
      return out;
    }
    if (r.ok()) {
      ++out.undone;
    } else {
      out.ok = false;
      out.reason = "cleanup of step " + rec.step_id + " failed: " + r.reason;
    }
  }
  if (out.ok) out.reason = std::to_string(out.undone) + " step(s) undone";
  return out;
}

}  // namespace icewarden
