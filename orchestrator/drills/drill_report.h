// The report of one drill run, built from the stores alone (the run, its step journal, its
// notes and, for a live run, the failover reports of its failover and failback), so it reads
// the same during the run, after it and after a restart:
//
//   run        id, drill, mode, phase, trigger, scope, from -> to, when
//   verdict    passed | failed | pending, the reason, the failing step
//   rto        the target, the measured RTO and whether it is within the target
//   rpo        the measured RPO (worst lag of the scope at the transfer), null when unknown
//   durations  detection, approval, fencing, transfer, DNS, verification (ms; null when the
//              mode has no such phase: a shadow run has no detection and no approval)
//   steps      each step's status (not_started, running, succeeded, failed, timed_out,
//              skipped), attempts, duration, error and cleanup
//   timeline   what happened, in order
//   notes      operators' notes (`icewarden drill note`)
//   plan, guards (plan mode); failover, failback (live mode: their failover reports)
// Thread-safety: pure functions over the stores.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "state/status.h"

namespace icewarden {

class DrillStore;
class StateStore;

// kNotFound for an unknown id. `rto_target_ms`: the drill's configured target (0: unknown).
Result<nlohmann::json> BuildDrillReport(DrillStore& drills, StateStore& store,
                                        const std::string& run_id, long long rto_target_ms);

// The report for people: sections of aligned text.
std::string RenderDrillReportText(const nlohmann::json& report);

// A run's summary as the API lists it.
struct DrillRun;
nlohmann::json DrillRunJson(const DrillRun& run);

}  // namespace icewarden
