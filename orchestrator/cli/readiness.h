// `icewarden readiness [--output json]`: every failover route's standing readiness
// (GET /api/v1/readiness), and the readiness block every failover plan shows.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <ostream>

#include "orchestrator/cli/client.h"

namespace icewarden {

// 0 when every route is ready, 1 when one is not (or the call failed), 3 not authorized.
int CmdReadiness(const ClientOptions& o);

// "Readiness of route R (checked AT, N s ago), templates and preflights: ready" (beside a
// plan, whose guards are printed as of now) or "NOT ready:" with one line per reason;
// `readiness` is a RouteReadiness as the API renders it (orchestrator/api/readiness.h).
void PrintRouteReadiness(std::ostream& out, const nlohmann::json& readiness);

}  // namespace icewarden
