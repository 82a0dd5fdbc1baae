// The region health state machine: healthy ⇄ degraded ⇄ unreachable, driven by probe
// rounds with fall/rise hysteresis, plus the administrative overlays fenced and
// maintenance.
//
// Pure: ApplyHealthEvent() computes the next Region and a reason; the caller persists it
// (StateStore::PutRegion) before acting on it. The transition table in the .cpp file is
// the one place these rules live.
// Thread-safety: stateless functions.
#pragma once

#include <string>

#include "state/types.h"

namespace icewarden {

enum class HealthEvent {
  kProbeRoundFailed,
  kProbeRoundPassed,
  // The catalog answered with something icewarden cannot parse: alive (DESIGN.md rule 7),
  // so degraded at worst, never unreachable, whatever the counters say.
  kProbeRoundUnparsed,
  kMarkSuspect,  // a webhook or an operator says something is wrong; never unreachable
  // The alert that raised the suspicion resolved: healthy again, unless the region's own
  // probes are failing right now (then it stays degraded and the probes decide).
  kLiftSuspect,
  kSetFenced,
  kClearFenced,
  kSetMaintenance,
  kClearMaintenance,
};
const char* HealthEventName(HealthEvent e);

// Who sent the event. Probes and webhooks observe; only the orchestrator and operators
// set the administrative overlays.
enum class EventSource { kProbe, kWebhook, kOperator, kOrchestrator };
const char* EventSourceName(EventSource s);

struct HealthInput {
  HealthEvent event{};
  EventSource source = EventSource::kProbe;
  std::string probe{};   // the probe kind for probe rounds, e.g. "catalog_config"
  std::string detail{};  // "connection refused", or the operator's reason
  UnixMillis at = 0;
  // kProbeRoundFailed from one replica of several (issue 12): set, the other replicas do not
  // agree that the region is gone (this says why), so the round counts but the region goes
  // no further than degraded (DESIGN.md rule 1: unreachable from a quorum of vantage points).
  std::string not_unreachable_because{};
};

struct HealthThresholds {
  int fall = 3;  // failed rounds in a row that make a region unreachable
  int rise = 2;  // passed rounds in a row that make it healthy again
};

struct HealthDecision {
  bool accepted = false;  // false: refused (reason says why); `next` equals the input
  // Health or an overlay changed (counters alone do not count), or a failure the other
  // replicas do not share reached the fall (HealthInput::not_unreachable_because).
  bool changed = false;
  Region next;
  // "us-east-1 unreachable: 3 consecutive catalog_config failures: connection refused"
  std::string reason{};
};

HealthDecision ApplyHealthEvent(const Region& current, const HealthInput& input,
                                const HealthThresholds& thresholds);

}  // namespace icewarden
