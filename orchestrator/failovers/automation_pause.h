// Paused automation (`icewarden pause`, state/pause_store.h) as the daemon's intake applies
// it: which pause covers what automation is about to start, how a refusal reads, and which
// scopes a person may pause. Webhooks' proposals are refused here (FailoverService::Propose
// with a webhook caller); the drill scheduler skips a covered slot (drill_scheduler.cpp).
// Operators' own commands are never paused: a pause takes the decision back into people's
// hands, and they must still be able to act.
// Thread-safety: stateless functions.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "state/clock.h"
#include "state/pause_store.h"
#include "state/status.h"

namespace icewarden {

struct Config;

// What automation is about to start: a failover route from one region to another, or a
// drill (which runs a route). Empty fields match no scope of their kind.
struct AutomationTarget {
  std::string route, from, to, drill;
};

// The pause that covers `target`: "all", then "region:" of from or to, "route:", "drill:";
// nullopt when none does.
std::optional<Pause> CoveringPause(const std::vector<Pause>& pauses,
                                   const AutomationTarget& target);

// "automation is paused for region:eu-central-1 by otto since 2026-12-07T03:00:00.000Z
// (expected until 2026-12-07T05:00:00.000Z, overdue by 12 min): db maintenance; `icewarden
// resume --scope region:eu-central-1` lifts it"
std::string PauseRefusal(const Pause& pause, UnixMillis now);

// How long past its expected end a pause is at `now`: 0 before it, or with no expected end.
std::int64_t PauseOverdueMillis(const Pause& pause, UnixMillis now);

// kInvalidArgument, saying what a scope may be, unless `scope` is "all" or names a region,
// route or drill of `config` ("region:NAME", "route:NAME", "drill:NAME").
Status CheckPauseScope(const std::string& scope, const Config& config);

}  // namespace icewarden
