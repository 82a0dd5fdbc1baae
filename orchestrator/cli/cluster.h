// `icewarden cluster status [--output json]`: the replicas of an etcd-backed deployment
// (GET /api/v1/cluster, asked of any replica): who leads and its lease, each replica's view of
// each region, and what a quorum makes of them. A single replica (SQLite) says so.
#pragma once

#include "orchestrator/cli/client.h"

namespace icewarden {

// 0 on an answer, 1 when the call failed, 3 not authorized.
int CmdClusterStatus(const ClientOptions& o);

}  // namespace icewarden
