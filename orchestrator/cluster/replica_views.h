// Every replica's view of every region, shared through etcd (issue 12, item 4).
//
//   probes --> LiveView --> ReplicaViews --put, leased--> <prefix>views/<replica>
//                                 ^--range <prefix>views/ every second--'
//
// Each replica, leader or standby, re-puts its view (orchestrator/region_quorum.h's
// ReplicaView, as JSON) every second under a lease of leader_ttl, and reads everyone's. A view
// counts only while its lease lives and while the reader sees it change: how long ago it last
// changed is measured on the reader's own clock, from the key's mod revision, so no timestamp
// is compared across replicas. A replica that stops (or loses etcd) stops changing its view,
// and its lease takes the view away within leader_ttl.
//
// A standby has no CatalogWatch, so StandbyProber runs the same probes (RegionProbes) into
// the LiveView its ReplicaViews publishes; the leader's CatalogWatch does that for the leader.
//
// Thread-safety: Start/Stop from one thread; Snapshot and LastError from any.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "orchestrator/region_quorum.h"
#include "state/status.h"

namespace icewarden {

class Clock;
class EtcdClient;
class Leadership;
class LiveView;
struct Config;

struct ReplicaViewsOptions {
  std::string prefix;   // state.etcd.prefix; views live under <prefix>views/
  std::string replica;  // this replica's name
  std::vector<std::string> regions;
  std::chrono::seconds ttl{10};  // the views' lease: leader_ttl
  std::chrono::milliseconds period{1000};
  std::function<void(const std::string&)> log;
};

class ReplicaViews {
 public:
  // `live` must outlive this object.
  ReplicaViews(std::shared_ptr<EtcdClient> etcd, ReplicaViewsOptions options, const LiveView& live,
               std::shared_ptr<Clock> clock);
  ~ReplicaViews();  // Stop()
  ReplicaViews(const ReplicaViews&) = delete;
  ReplicaViews& operator=(const ReplicaViews&) = delete;

  void Start();
  // Stops publishing and revokes the lease, so this replica's view leaves etcd at once.
  void Stop();

  // This replica's view as of now, then every other replica's as last read (with how long
  // ago each last changed), in name order.
  std::vector<ReplicaView> Snapshot() const;
  // Why the last publish or read failed; nullopt when it worked.
  std::optional<std::string> LastError() const;
  const ReplicaViewsOptions& options() const { return options_; }

 private:
  void Loop();
  void Tick();

  std::shared_ptr<EtcdClient> etcd_;
  ReplicaViewsOptions options_;
  const LiveView& live_;
  std::shared_ptr<Clock> clock_;
  std::int64_t lease_ = 0;  // the loop's thread only

  struct Peer {
    ReplicaView view;
    std::int64_t mod_revision = 0;
    std::optional<std::chrono::steady_clock::time_point> changed_at;  // seen to change
  };
  mutable std::mutex mu_;
  std::map<std::string, Peer> peers_;
  std::optional<std::string> last_error_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

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

// GET /api/v1/cluster, on the leader and on a standby alike: this replica's role ("leader" while
// it keeps a lease, else "standby"), the leader as etcd says, this replica's lease while it
// leads, every replica's view and, per region, what a quorum makes of them (cluster_status.cpp).
nlohmann::json ClusterStatusJson(Leadership& leadership, const ReplicaViews& views,
                                 const Config& config);

// One region's sight as JSON: {probed, silent, silent_for_ms, silent_rounds, detail,
// round_age_ms}, in the views and in GET /api/v1/cluster alike.
nlohmann::json SightJson(const RegionSight& sight);
// `<prefix>views/<replica>`'s value, and back (nullopt: not a view).
std::string ViewJson(const ReplicaView& view);
std::optional<ReplicaView> ParseViewJson(const std::string& text);

}  // namespace icewarden
