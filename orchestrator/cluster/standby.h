// What a standby replica answers while another leads (issue 12, item 2). It does not act, so
// it has nothing of its own to serve: clients are sent to the leader.
//   GET /healthz            200: the process lives
//   GET /readyz             503 {"ready": false, "role": "standby", "leader": ..., ...}
//   GET /api/v1/cluster     200: ClusterStatusJson (the role, the leader as etcd says, every
//                           replica's view of the regions)
//   anything else           307 to the same path on the leader's API (the CLI follows it),
//                           or 503 when no replica leads right now
// Thread-safety: the handler may be called from several threads.
#pragma once

#include <string>

#include "orchestrator/api/api.h"

namespace icewarden {

class Leadership;
class ReplicaViews;
struct Config;

// `leadership`, `views` and `config` must outlive the handler.
std::function<ApiResponse(const ApiRequest&)> StandbyHandler(Leadership& leadership,
                                                             const ReplicaViews& views,
                                                             const Config& config);

}  // namespace icewarden
