#include "state/region_health_machine.h"

#include <array>

namespace icewarden {
namespace {

using H = RegionHealth;

// A guard reads the counters as they will be after the event is counted.
enum class HealthGuard {
  kAlways,
  kBelowFall,
  kReachesFall,
  kBelowRise,
  kReachesRise,
  kNoFailures,    // no probe round has failed since the last pass
  kSomeFailures,  // the probes are failing too
};

struct HealthTransition {
  H from;
  HealthEvent event;
  HealthGuard guard;
  H to;
};

// The whole health machine for probe rounds and suspicion, top to bottom. A region goes
// down one step on the first failure (degraded: suspect, nothing acts on it) and is only
// declared unreachable after `fall` failed rounds in a row; it comes back only after `rise`
// passed rounds in a row, passing through degraded, so a flapping catalog never bounces
// between healthy and unreachable. A catalog that answers with something icewarden cannot
// parse is alive (DESIGN.md rule 7): at most degraded, never unreachable, and such a round
// breaks both runs, so it neither counts towards fall nor towards rise.
constexpr std::array<HealthTransition, 18> kHealthTransitions{{
    // from            event                  guard                to
    {H::kHealthy, HealthEvent::kProbeRoundPassed, HealthGuard::kAlways, H::kHealthy},
    {H::kHealthy, HealthEvent::kProbeRoundFailed, HealthGuard::kBelowFall, H::kDegraded},
    {H::kHealthy, HealthEvent::kProbeRoundFailed, HealthGuard::kReachesFall, H::kUnreachable},
    {H::kHealthy, HealthEvent::kProbeRoundUnparsed, HealthGuard::kAlways, H::kDegraded},
    {H::kHealthy, HealthEvent::kMarkSuspect, HealthGuard::kAlways, H::kDegraded},
    {H::kHealthy, HealthEvent::kLiftSuspect, HealthGuard::kAlways, H::kHealthy},
    {H::kDegraded, HealthEvent::kProbeRoundPassed, HealthGuard::kBelowRise, H::kDegraded},
    {H::kDegraded, HealthEvent::kProbeRoundPassed, HealthGuard::kReachesRise, H::kHealthy},
    {H::kDegraded, HealthEvent::kProbeRoundFailed, HealthGuard::kBelowFall, H::kDegraded},
    {H::kDegraded, HealthEvent::kProbeRoundFailed, HealthGuard::kReachesFall, H::kUnreachable},
    {H::kDegraded, HealthEvent::kProbeRoundUnparsed, HealthGuard::kAlways, H::kDegraded},
    {H::kDegraded, HealthEvent::kMarkSuspect, HealthGuard::kAlways, H::kDegraded},
    // Lifting a suspicion never overrules the probes: a failing round keeps it degraded.
    {H::kDegraded, HealthEvent::kLiftSuspect, HealthGuard::kNoFailures, H::kHealthy},
    {H::kDegraded, HealthEvent::kLiftSuspect, HealthGuard::kSomeFailures, H::kDegraded},
    {H::kUnreachable, HealthEvent::kProbeRoundFailed, HealthGuard::kAlways, H::kUnreachable},
    {H::kUnreachable, HealthEvent::kProbeRoundPassed, HealthGuard::kBelowRise, H::kDegraded},
    {H::kUnreachable, HealthEvent::kProbeRoundPassed, HealthGuard::kReachesRise, H::kHealthy},
    {H::kUnreachable, HealthEvent::kProbeRoundUnparsed, HealthGuard::kAlways, H::kDegraded},
    // kUnreachable + kMarkSuspect has no row: it is already worse than suspect; nor has
    // kUnreachable + kLiftSuspect: only probe rounds bring an unreachable region back.
}};

// Overlays: which event sets which flag, and who may send it.
struct OverlayTransition {
  HealthEvent event;
  bool Region::*flag;
  bool value;
};
constexpr std::array<OverlayTransition, 4> kOverlays{{
    {HealthEvent::kSetFenced, &Region::fenced, true},
    {HealthEvent::kClearFenced, &Region::fenced, false},
    {HealthEvent::kSetMaintenance, &Region::maintenance, true},
    {HealthEvent::kClearMaintenance, &Region::maintenance, false},
}};

bool MaySend(EventSource source, HealthEvent event) {
  switch (event) {
    case HealthEvent::kProbeRoundFailed:
    case HealthEvent::kProbeRoundPassed:
    case HealthEvent::kProbeRoundUnparsed:
      return source == EventSource::kProbe;
    case HealthEvent::kMarkSuspect:
    case HealthEvent::kLiftSuspect:
      return source != EventSource::kOrchestrator;
    default:  // overlays: rule 4 of DESIGN.md, observers never change administrative state
      return source == EventSource::kOperator || source == EventSource::kOrchestrator;
  }
}

bool GuardHolds(HealthGuard g, const Region& counted, const HealthThresholds& t) {
  switch (g) {
    case HealthGuard::kAlways:
      return true;
    case HealthGuard::kBelowFall:
      return counted.consecutive_failures < t.fall;
    case HealthGuard::kReachesFall:
      return counted.consecutive_failures >= t.fall;
    case HealthGuard::kBelowRise:
      return counted.consecutive_successes < t.rise;
    case HealthGuard::kReachesRise:
      return counted.consecutive_successes >= t.rise;
    case HealthGuard::kNoFailures:
      return counted.consecutive_failures == 0;
    case HealthGuard::kSomeFailures:
      return counted.consecutive_failures > 0;
  }
  return false;
}

std::string Plural(int n, const std::string& word) {
  return std::to_string(n) + " " + word + (n == 1 ? "" : "s");
}

std::string Describe(const Region& r, const HealthInput& in, const HealthThresholds& t) {
  const std::string head = r.name + " " + RegionHealthName(r.health) + ": ";
  const std::string probe = in.probe.empty() ? "probe" : in.probe;
  switch (in.event) {
    case HealthEvent::kProbeRoundFailed:
      return head + std::to_string(r.consecutive_failures) + " consecutive " + probe +
             (r.consecutive_failures == 1 ? " failure" : " failures") +
             (r.health == H::kUnreachable ? "" : " (fall " + std::to_string(t.fall) + ")") +
             (in.detail.empty() ? "" : ": " + in.detail);
    case HealthEvent::kProbeRoundPassed:
      return head + Plural(r.consecutive_successes, "consecutive passed round") +
             (r.health == H::kHealthy ? "" : " (rise " + std::to_string(t.rise) + ")");
    case HealthEvent::kProbeRoundUnparsed:
      return head + probe + " answered with something icewarden cannot parse" +
             (in.detail.empty() ? "" : ": " + in.detail);
    case HealthEvent::kMarkSuspect:
      return head + "marked suspect by " + EventSourceName(in.source) +
             (in.detail.empty() ? "" : ": " + in.detail);
    case HealthEvent::kLiftSuspect:
      return head + "suspicion lifted by " + EventSourceName(in.source) +
             (r.health == H::kHealthy ? "" : " (probes are still failing)") +
             (in.detail.empty() ? "" : ": " + in.detail);
    default:
      return head + in.detail;
  }
}

}  // namespace

const char* HealthEventName(HealthEvent e) {
  switch (e) {
    case HealthEvent::kProbeRoundFailed:
      return "probe_round_failed";
    case HealthEvent::kProbeRoundPassed:
      return "probe_round_passed";
    case HealthEvent::kProbeRoundUnparsed:
      return "probe_round_unparsed";
    case HealthEvent::kMarkSuspect:
      return "mark_suspect";
    case HealthEvent::kLiftSuspect:
      return "lift_suspect";
    case HealthEvent::kSetFenced:
      return "set_fenced";
    case HealthEvent::kClearFenced:
      return "clear_fenced";
    case HealthEvent::kSetMaintenance:
      return "set_maintenance";
    case HealthEvent::kClearMaintenance:
      return "clear_maintenance";
  }
  return "unknown";
}

const char* EventSourceName(EventSource s) {
  switch (s) {
    case EventSource::kProbe:
      return "probe";
    case EventSource::kWebhook:
      return "webhook";
    case EventSource::kOperator:
      return "operator";
    case EventSource::kOrchestrator:
      return "orchestrator";
  }
  return "unknown";
}

HealthDecision ApplyHealthEvent(const Region& current, const HealthInput& input,
                                const HealthThresholds& thresholds) {
  HealthDecision d;
  d.next = current;
  if (!MaySend(input.source, input.event)) {
    d.reason = std::string("refused: ") + EventSourceName(input.source) + " may not send " +
               HealthEventName(input.event) + " for " + current.name;
    return d;
  }

  for (const auto& o : kOverlays) {
    if (o.event != input.event) continue;
    d.accepted = true;
    d.changed = current.*o.flag != o.value;
    d.next.*o.flag = o.value;
    const char* what = o.flag == &Region::fenced ? "fenced" : "maintenance";
    d.reason = current.name + " " + (o.value ? "" : "no longer ") + what + " (" +
               EventSourceName(input.source) + (input.detail.empty() ? "" : ": " + input.detail) +
               ")";
    if (d.changed) d.next.reason = d.reason;
    return d;
  }

  Region counted = current;
  if (input.event == HealthEvent::kProbeRoundFailed) {
    counted.consecutive_failures += 1;
    counted.consecutive_successes = 0;
  } else if (input.event == HealthEvent::kProbeRoundPassed) {
    counted.consecutive_successes += 1;
    counted.consecutive_failures = 0;
  } else if (input.event == HealthEvent::kProbeRoundUnparsed) {
    counted.consecutive_successes = 0;
    counted.consecutive_failures = 0;
  }

  for (const auto& t : kHealthTransitions) {
    if (t.from != current.health || t.event != input.event) continue;
    if (!GuardHolds(t.guard, counted, thresholds)) continue;
    d.accepted = true;
    d.next = counted;
    // One replica of several cannot tell its own partition from the region's loss: without
    // the others agreeing, the failures still count but the region is degraded at worst.
    const bool withheld = t.to == H::kUnreachable && !input.not_unreachable_because.empty();
    d.next.health = withheld ? H::kDegraded : t.to;
    d.changed = d.next.health != current.health;
    d.reason = Describe(d.next, input, thresholds);
    if (withheld) d.reason += "; not unreachable: " + input.not_unreachable_because;
    // The round that would have made it unreachable is news even if the health stays put:
    // persisted and logged once, so the region says why it is only degraded.
    if (withheld && !d.changed && counted.consecutive_failures == thresholds.fall) {
      d.changed = true;
      d.next.reason = d.reason;
    }
    if (d.changed) {
      d.next.since = input.at;
      d.next.reason = d.reason;
    }
    return d;
  }

  d.reason = "refused: " + current.name + " is " + RegionHealthName(current.health) + "; " +
             HealthEventName(input.event) + " does not apply";
  return d;
}

}  // namespace icewarden
