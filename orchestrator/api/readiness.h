// Standing failover readiness as the API shows it (orchestrator/readiness/readiness.h):
//
//   GET /api/v1/readiness   {"ready": every route ready, "checked_at", "routes": [RouteReadiness]}
//                           503 not_ready until the first round has finished   read_failovers
//
// and the "readiness" member added to every failover plan: the dry run and the proposal
// (POST /api/v1/failovers), and plan_now of GET /api/v1/failovers/{id}?plan=true.
// Thread-safety: as ReadinessBoard.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <string>

#include "orchestrator/api/api.h"
#include "state/clock.h"

namespace icewarden {

class ReadinessBoard;

// `board` may be null (a daemon that does not evaluate readiness): 503.
ApiResponse ReadinessResponse(const ReadinessBoard* board);
// The route's latest readiness as a plan shows it, beside its guards evaluated now: the round's
// templates and preflights only (its guard checks, as old as the round, are left out, and
// "ready" is over what is left), with "age_ms" since the round at `now`. Or {"route",
// "ready": null, "reasons": [why it is not known]}.
nlohmann::json ReadinessOfRoute(const ReadinessBoard* board, const std::string& route,
                                UnixMillis now);
// A propose answer with "readiness" added for the plan's route (plan.route); other answers
// unchanged.
ApiResponse WithReadiness(const ReadinessBoard* board, ApiResponse response, UnixMillis now);

}  // namespace icewarden
