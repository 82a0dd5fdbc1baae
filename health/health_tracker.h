// HealthTracker: turns probe rounds into region health. It holds every region's Region
// record (initialised from the store's records), feeds each round through the pure state
// machine ApplyHealthEvent (state/region_health_machine.h) with fall/rise per region, and
// keeps the counters in memory. It calls the sink only when a region's health or an
// overlay changed: the orchestrator persists that decision (StateStore::PutRegion) and
// decides what, if anything, to do. Counter-only updates are not persisted, so after a
// restart counting starts again from the stored health.
//
// Thread-safety: none. Call every method on the loop thread (the one that runs the
// ProbeScheduler). The sink runs on that thread, inside ApplyRound/ApplyEvent.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "health/probe_scheduler.h"
#include "state/clock.h"
#include "state/region_health_machine.h"
#include "state/status.h"
#include "state/types.h"

namespace icewarden {

class HealthTracker {
 public:
  using Sink = std::function<void(const HealthDecision&)>;

  // `regions`: the store's records. `thresholds`: per region name; regions not named use
  // `defaults`. `clock` stamps transitions (Region::since) and must outlive the tracker.
  HealthTracker(std::vector<Region> regions, const Clock& clock, Sink sink,
                HealthThresholds defaults = {},
                std::map<std::string, HealthThresholds> thresholds = {});

  // Applies one round as kProbeRoundFailed/kProbeRoundPassed from EventSource::kProbe, with
  // probe = round.kind and detail = round.detail; a failed round in which a probe got an
  // answer it could not parse is kProbeRoundUnparsed, with that probe's kind and detail
  // (which holds the region at degraded: DESIGN.md rule 7). `not_unreachable_because`, for a
  // failed round: the other replicas do not agree the region is gone (HealthInput's field of
  // that name). Returns the decision (sent to the sink too when `changed`); kNotFound for a
  // region the tracker does not know.
  Result<HealthDecision> ApplyRound(const ProbeRound& round,
                                    std::string not_unreachable_because = {});

  // Any other event for a region (overlays from the orchestrator, suspicion from a
  // webhook), so that the records here stay the ones the machine last produced. Refused
  // events come back with accepted == false and change nothing.
  Result<HealthDecision> ApplyEvent(const std::string& region, HealthInput input);

  // Every region, in the order given to the constructor.
  std::vector<Region> Regions() const;
  std::optional<Region> Get(const std::string& region) const;
  // The last round applied for `region` (latency, detail, per-probe results).
  std::optional<ProbeRound> LastRound(const std::string& region) const;
  HealthThresholds ThresholdsFor(const std::string& region) const;

 private:
  struct Tracked {
    Region region;
    HealthThresholds thresholds;
    std::optional<ProbeRound> last_round;
  };
  Tracked* Find(const std::string& region);
  const Tracked* Find(const std::string& region) const;
  Result<HealthDecision> Apply(Tracked& t, const HealthInput& input);

  std::vector<Tracked> tracked_;
  const Clock& clock_;
  Sink sink_;
};

}  // namespace icewarden
