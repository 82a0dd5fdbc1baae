// The lab's admin and fault-injection HTTP API (JSON in and out), served on the admin listener:
//   GET    /lab/state
//   POST   /lab/regions/{r}/stop | /lab/regions/{r}/start
//   POST   /lab/regions/{r}/faults   (merge)   DELETE /lab/regions/{r}/faults (clear)
//   POST   /lab/regions/{r}/writes {"paused":bool}   (the region's write fence)
//   POST   /lab/regions/{r}/rewind [{"table":T}]   (re-seeds its diverged replicas)
//   POST   /lab/replication/pause | /lab/replication/resume | /lab/replication {"lag_ms":N}
//   POST   /lab/workload {"enabled":bool,"interval_ms":N}
//   POST   /lab/rogue-writer {"region":R,"enabled":bool}
//   POST   /lab/ownership {"match":REGEX,"owner":R} or {"default_owner":R}
//   GET    /lab/commits[?table=T][&since=N]   (the workload's and rogue writer's commits)
// docs/lab.md documents each with curl examples. A body is optional where a route takes none
// (`curl -X POST URL`, no Content-Length). Errors are {"error":"message"} with 400, 404 or 413.
#pragma once

#include <httplib.h>

namespace icewarden::lab {

class Lab;

// Registers the routes on `server`; `lab` must outlive the server.
void RegisterAdminRoutes(httplib::Server& server, Lab& lab);

}  // namespace icewarden::lab
