#include "orchestrator/api/readiness.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "orchestrator/readiness/readiness.h"
#include "state/clock.h"
#include "state/json_text.h"

namespace icewarden {

using nlohmann::json;

ApiResponse ReadinessResponse(const ReadinessBoard* board) {
  if (board == nullptr)
    return JsonErrorResponse(503, "unavailable", "this daemon does not evaluate readiness");
  auto latest = board->Latest();
  if (!latest)
    return JsonErrorResponse(503, "not_ready",
                             "the first readiness round has not finished yet; it starts when the "
                             "daemon does and repeats every policies.readiness_interval");
  json routes = json::array();
  bool ready = true;
  UnixMillis at = 0;
  for (const RouteReadiness& r : *latest) {
    routes.push_back(RouteReadinessJson(r));
    ready = ready && r.ready;
    at = std::max(at, r.checked_at);
  }
  return JsonResponse(200, {{"ready", ready},
                            {"checked_at", at > 0 ? json(FormatUnixMillis(at)) : json(nullptr)},
                            {"routes", std::move(routes)}});
}

json ReadinessOfRoute(const ReadinessBoard* board, const std::string& route, UnixMillis now) {
  std::string why;
  if (board == nullptr) {
    why = "this daemon does not evaluate readiness";
  } else if (!board->Latest()) {
    why = "the first readiness round has not finished yet";
  } else if (auto r = board->Route(route)) {
    // The plan's guards are evaluated at the request; the round's, up to readiness_interval
    // older, would contradict them after a command that changed one (`failover ack`).
    json j = RouteReadinessJson(WithoutGuardChecks(*r));
    j["guards"] = "left out: the plan's guards are evaluated now";
    j["age_ms"] = std::max<UnixMillis>(0, now - r->checked_at);
    return j;
  } else {
    why = "route '" + route + "' was not in the latest readiness round";
  }
  return {{"route", route}, {"ready", nullptr}, {"reasons", json::array({why})}};
}

ApiResponse WithReadiness(const ReadinessBoard* board, ApiResponse response, UnixMillis now) {
  json body = json::parse(response.body, nullptr, false);
  if (!body.is_object()) return response;
  auto plan = body.find("plan");
  if (plan == body.end() || !plan->is_object() || !plan->contains("route")) return response;
  const json& route = (*plan)["route"];
  if (!route.is_string()) return response;
  body["readiness"] = ReadinessOfRoute(board, route.get<std::string>(), now);
  response.body = DumpJson(body);
  return response;
}

}  // namespace icewarden
