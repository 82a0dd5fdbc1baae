#include "orchestrator/api/regions.h"

#include <map>
#include <nlohmann/json.hpp>

#include "orchestrator/api/command_body.h"
#include "orchestrator/failovers/failover_service.h"
#include "orchestrator/watch/live_view.h"
#include "state/record_json.h"

namespace icewarden {

ApiResponse HandleRegionOverlay(const RegionEventSink& sink, HealthEvent event,
                                const std::string& actor, const std::string& region,
                                const std::string& body, UnixMillis now) {
  if (!sink) return JsonErrorResponse(503, "unavailable", "this daemon does not watch regions");
  auto doc = ReadBody(body, {"reason"});
  if (!doc.ok()) return BadRequestResponse(doc.status().message());
  std::string reason;
  if (Status s = StringField(*doc, "reason", &reason); !s.ok())
    return BadRequestResponse(s.message());
  if (reason.empty()) return BadRequestResponse("reason is required: say why, for the audit log");
  if (Status s = CheckReason("a region overlay", reason, true); !s.ok())
    return BadRequestResponse(s.message());
  HealthInput in;
  in.event = event;
  in.source = EventSource::kOperator;
  in.detail = reason;
  in.at = now;
  auto d = sink(region, in, actor);
  if (!d.ok())
    return JsonErrorResponse(HttpStatusOf(d.status()), ErrorCodeOf(d.status()),
                             d.status().message());
  if (!d->accepted) return JsonErrorResponse(409, "refused", d->reason);
  return JsonResponse(
      200, {{"decision", d->changed ? d->reason : region + ": nothing to change: " + d->reason},
            {"changed", d->changed},
            {"region", RegionJson(d->next)}});
}

using nlohmann::json;

ApiResponse HandleRegionList(StateStore& store, const LiveView* live) {
  auto regions = store.ListRegions();
  if (!regions.ok()) return StoreErrorResponse(regions.status());
  const auto rounds =
      live != nullptr ? live->ProbeRounds() : std::map<std::string, ProbeRoundView>{};
  json list = json::array();
  for (const Region& r : *regions) {
    json region = RegionJson(r);
    // Rule 7 of DESIGN.md: how long the region has given no answer at all; null while
    // it answers (any status counts) or before its first probe round.
    const auto silence = live != nullptr ? live->Silence(r.name) : std::nullopt;
    region["silent_since"] = silence ? json(FormatUnixMillis(silence->since)) : json(nullptr);
    region["silent_rounds"] = silence ? json(silence->rounds) : json(nullptr);
    if (auto it = rounds.find(r.name); it != rounds.end()) {
      region["last_probe_round"] = {{"ok", it->second.ok},
                                    {"latency_ms", it->second.latency.count()},
                                    {"kind", it->second.kind},
                                    {"detail", it->second.detail},
                                    {"at", FormatUnixMillis(it->second.at)}};
    }
    list.push_back(std::move(region));
  }
  return JsonResponse(200, {{"regions", std::move(list)}});
}

}  // namespace icewarden
