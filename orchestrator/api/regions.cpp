#include "orchestrator/api/regions.h"

#include <nlohmann/json.hpp>

#include "orchestrator/api/command_body.h"
#include "orchestrator/failovers/failover_service.h"
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

}  // namespace icewarden
