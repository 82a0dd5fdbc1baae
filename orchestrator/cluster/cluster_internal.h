// Shared inside orchestrator/cluster only (the interface is cluster.h).
//
// StandbyHandler: what a standby replica answers while another leads (issue 12, item 2). It
// does not act, but it reads the same record as the leader, and etcd's reads are
// linearizable, so a read answered here shows every write the leader has made:
//   GET /healthz            200: the process lives
//   GET /readyz             503 {"ready": false, "role": "standby", "leader": ..., ...}
//   GET /api/v1/cluster, session, regions, failovers, failovers/{id} (not ?plan=true),
//       failovers/{id}/report, audit, ownership (not ?state=)
//                           answered here by `reads`, the API over this replica's read-only
//                           store, with the same tokens; X-Icewarden-Replica names the
//                           replica. A region's last_probe_round and silence are this
//                           replica's own probes; ownership rows have no lag (lag rounds run
//                           on the leader).
//   anything else           307 to the same path on the leader's API (the CLI follows it):
//                           every command, and what only the leader has (lag rounds,
//                           readiness, the plan a failover would run now, drills, the event
//                           stream, /metrics of its work); 503 when no replica leads right now
// Thread-safety: the handler may be called from several threads.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include <nlohmann/json_fwd.hpp>

#include "orchestrator/api/api.h"
#include "orchestrator/cluster/cluster.h"

namespace icewarden {

// `leadership` and `reads` must outlive the handler. `reads` answers /api/v1/cluster with
// ClusterStatusJson, behind a token as on the leader.
std::function<ApiResponse(const ApiRequest&)> StandbyHandler(Leadership& leadership, Api& reads);

// The probes of a standby (see above): every region of `config`, on a thread of their own,
// their rounds recorded in `live`.
class StandbyProber {
 public:
  // Fails as RegionProbes::Build does (a probe the config cannot build).
  static Result<std::unique_ptr<StandbyProber>> Start(const Config& config, LiveView& live,
                                                      std::shared_ptr<Clock> clock);
  ~StandbyProber();  // stops the probes and joins
  struct Loop;

 private:
  explicit StandbyProber(std::unique_ptr<Loop> loop);
  std::unique_ptr<Loop> loop_;
};

// One region's sight as JSON: {probed, silent, silent_for_ms, silent_rounds, detail,
// round_age_ms}, in the views and in GET /api/v1/cluster alike.
nlohmann::json SightJson(const RegionSight& sight);
// `<prefix>views/<replica>`'s value, and back (nullopt: not a view).
std::string ViewJson(const ReplicaView& view);
std::optional<ReplicaView> ParseViewJson(const std::string& text);

}  // namespace icewarden
