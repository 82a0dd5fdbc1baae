// The region overlay commands of the HTTP API (DESIGN.md: fenced and maintenance are set only
// by the orchestrator or an operator):
//   POST /api/v1/regions/{r}/fence     {reason}  sets the fenced overlay: no failover targets r
//   POST /api/v1/regions/{r}/unfence   {reason}  clears it, e.g. once a split brain that fenced
//                                                the region has been reconciled
// The change goes through the region's health machine on the watch's thread (the sink), which
// persists and audits it with the caller's name and reason. 200 with the region; 400 without a
// reason; 404 for an unknown region; 409 when the machine refuses; 503 while the watch is down.
// Thread-safety: pure function over the sink.
#pragma once

#include <functional>
#include <string>

#include "orchestrator/api/api.h"
#include "state/region_health_machine.h"

namespace icewarden {

class LiveView;

// GET /api/v1/regions: {"regions":[...]}, each with silent_since, silent_rounds and the
// last probe round from `live` (null or absent without it).
ApiResponse HandleRegionList(StateStore& store, const LiveView* live);

ApiResponse HandleRegionOverlay(const RegionEventSink& sink, HealthEvent event,
                                const std::string& actor, const std::string& region,
                                const std::string& body, UnixMillis now);

}  // namespace icewarden
