// A shadow drill's steps: the route's runbook, pointed at the drill's targets
// (shadow_targets.h), run one step at a time and journaled in the DrillStore, then cleaned up.
//
// Journal protocol, per step: all steps are journaled not_started when the run starts (so a
// report lists what never ran). Before a step acts, its record says running, with what the
// action's Capture read (the state its cleanup must restore) and cleanup "pending" when the
// action can undo itself: that is the cleanup obligation, durable before any effect. After
// the step: succeeded | failed | timed_out with attempts, error and the action's detail.
// Cleanup walks the records newest first and compensates every step that may have acted
// (running, succeeded, failed, timed_out) with the action's own Compensate, journaling
// cleanup done | failed; it is idempotent (compensations are keyed by run id + step id), so a
// crash during cleanup just runs it again.
//
// Sections run in runbook order (fence, promote, verify), one step at a time: a rehearsal is
// measured, not raced; parallel groups run sequentially. The runbook's compensate section is
// not run: a shadow run undoes its own effects instead of announcing a rollback.
// Thread-safety: one run per call; the stores serialise themselves.
#pragma once

#include <chrono>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>

#include "runbooks/template.h"
#include "state/drill_store.h"

namespace icewarden {

class ActionRegistry;
class Clock;
class LiveView;
struct DrillTargetsConfig;
struct LoadedRoute;

struct ShadowRunDeps {
  const LoadedRoute* route = nullptr;
  DrillStore* drills = nullptr;
  const ActionRegistry* actions = nullptr;
  Clock* clock = nullptr;
  const DrillTargetsConfig* targets = nullptr;
  const LiveView* live = nullptr;  // may be null
  TemplateBindings bindings{};     // scope already the drill's
  std::function<void(std::chrono::milliseconds)> sleep{};
};

struct ShadowOutcome {
  bool steps_ok = true;
  std::string reason{};          // one sentence
  std::string failing_step{};    // empty when steps_ok
  nlohmann::json rpo = nullptr;  // {worst_lag_ms, tables, measured_at} or null (unknown)
};

// Journals every step as not_started.
Status JournalShadowSteps(const ShadowRunDeps& deps, const DrillRun& run);
// Runs the steps; stops at the first failure whose on_failure is not continue.
ShadowOutcome ExecuteShadowSteps(const ShadowRunDeps& deps, const DrillRun& run);

struct CleanupOutcome {
  bool ok = true;
  int undone = 0;
  std::string reason{};
};
// Undoes every step that may have acted, newest first.
CleanupOutcome CleanupShadowSteps(const ShadowRunDeps& deps, const DrillRun& run);

}  // namespace icewarden
