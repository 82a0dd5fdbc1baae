// How a region's run of silent probe rounds evolves (DESIGN.md rule 7: only silence is
// evidence). The daemon keeps one run per region in the LiveView; fencing by the evidence
// "old_region_unreachable" reads how long it has lasted.
// Thread-safety: NextSilence is a pure function; RecordProbeRound is as safe as the LiveView.
#pragma once

#include <optional>

#include "health/probe_scheduler.h"
#include "orchestrator/watch/live_view.h"
#include "state/types.h"

namespace icewarden {

// The run after `round`, finished at `at`: a silent round (ProbeRound::silent) starts a run
// (since = at, rounds = 1) or extends `current` (rounds + 1, since kept, detail updated);
// any round that heard from the catalog, passed or failed, ends it (nullopt).
std::optional<RegionSilence> NextSilence(const std::optional<RegionSilence>& current,
                                         const ProbeRound& round, UnixMillis at);

// Publishes `round`, finished at `at`, to `live`: the round, its probes' latencies and the
// region's run of silence after it (logged when a run starts or ends). The leader's watch and
// a standby's prober record rounds alike.
void RecordProbeRound(LiveView& live, const ProbeRound& round, UnixMillis at);

}  // namespace icewarden
