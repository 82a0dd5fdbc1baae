// How a region's run of silent probe rounds evolves (DESIGN.md rule 7: only silence is
// evidence). The daemon keeps one run per region in the LiveView; fencing by the evidence
// "old_region_unreachable" reads how long it has lasted.
// Thread-safety: a pure function.
#pragma once

#include <optional>

#include "health/probe_scheduler.h"
#include "orchestrator/live_view.h"
#include "state/types.h"

namespace icewarden {

// The run after `round`, finished at `at`: a silent round (ProbeRound::silent) starts a run
// (since = at, rounds = 1) or extends `current` (rounds + 1, since kept, detail updated);
// any round that heard from the catalog, passed or failed, ends it (nullopt).
std::optional<RegionSilence> NextSilence(const std::optional<RegionSilence>& current,
                                         const ProbeRound& round, UnixMillis at);

}  // namespace icewarden
