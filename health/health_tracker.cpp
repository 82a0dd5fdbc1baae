#include "health/health_tracker.h"

#include <utility>

namespace icewarden {

HealthTracker::HealthTracker(std::vector<Region> regions, const Clock& clock, Sink sink,
                             HealthThresholds defaults,
                             std::map<std::string, HealthThresholds> thresholds)
    : clock_(clock), sink_(std::move(sink)) {
  for (auto& r : regions) {
    auto it = thresholds.find(r.name);
    tracked_.push_back(
        Tracked{std::move(r), it == thresholds.end() ? defaults : it->second, std::nullopt});
  }
}

HealthTracker::Tracked* HealthTracker::Find(const std::string& region) {
  for (auto& t : tracked_)
    if (t.region.name == region) return &t;
  return nullptr;
}

const HealthTracker::Tracked* HealthTracker::Find(const std::string& region) const {
  for (const auto& t : tracked_)
    if (t.region.name == region) return &t;
  return nullptr;
}

Result<HealthDecision> HealthTracker::Apply(Tracked& t, const HealthInput& input) {
  HealthDecision d = ApplyHealthEvent(t.region, input, t.thresholds);
  if (!d.accepted) return d;
  t.region = d.next;
  if (d.changed && sink_) sink_(d);
  return d;
}

Result<HealthDecision> HealthTracker::ApplyRound(const ProbeRound& round,
                                                 std::string not_unreachable_because) {
  Tracked* t = Find(round.region);
  if (!t) return Status::NotFound("probe round for unknown region " + round.region);
  t->last_round = round;
  HealthInput in;
  in.event = round.ok ? HealthEvent::kProbeRoundPassed : HealthEvent::kProbeRoundFailed;
  in.source = EventSource::kProbe;
  in.probe = round.kind;
  in.detail = round.ok ? "" : round.detail;
  if (!round.ok) in.not_unreachable_because = std::move(not_unreachable_because);
  if (const ProbeResult* p = round.unparsed(); p != nullptr && !round.ok) {
    // Alive but unreadable: the parse error is the reason, and the region stays degraded.
    in.event = HealthEvent::kProbeRoundUnparsed;
    in.probe = p->kind;
    in.detail = p->detail;
  }
  in.at = clock_.Now();
  return Apply(*t, in);
}

Result<HealthDecision> HealthTracker::ApplyEvent(const std::string& region, HealthInput input) {
  Tracked* t = Find(region);
  if (!t) return Status::NotFound("health event for unknown region " + region);
  if (input.at == 0) input.at = clock_.Now();
  return Apply(*t, input);
}

std::vector<Region> HealthTracker::Regions() const {
  std::vector<Region> out;
  for (const auto& t : tracked_) out.push_back(t.region);
  return out;
}

std::optional<Region> HealthTracker::Get(const std::string& region) const {
  const Tracked* t = Find(region);
  if (!t) return std::nullopt;
  return t->region;
}

std::optional<ProbeRound> HealthTracker::LastRound(const std::string& region) const {
  const Tracked* t = Find(region);
  if (!t) return std::nullopt;
  return t->last_round;
}

HealthThresholds HealthTracker::ThresholdsFor(const std::string& region) const {
  const Tracked* t = Find(region);
  return t ? t->thresholds : HealthThresholds{};
}

}  // namespace icewarden
