// orchestrator/cluster: several icewarden replicas over one etcd record (issue 12). This is the
// folder's interface; cluster_internal.h holds what only its own files share.
//
//   config --> OpenServeState --sqlite--> the SQLite store (one replica, nothing below)
//                     |
//                     '--etcd--> ReplicaViews (publish this replica's view, read everyone's)
//                                Leadership  (stand by: StandbyProber + StandbyHandler, until
//                                             Campaign wins; then Keep the term)
//                                the etcd store, every write fenced by the term
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

#include "orchestrator/watch/region_quorum.h"
#include "state/etcd_client.h"
#include "state/etcd_leader.h"
#include "state/state_store.h"

namespace icewarden {

class Clock;
class LiveView;
struct Config;
struct HttpServerOptions;

// ---- Leadership ----
// Leadership of an etcd-backed icewarden (issue 12, item 2): of the replicas sharing one etcd
// record, only the holder of the leader key probes, decides and runs executors.
//
//   standby  --Campaign() wins the key-->  leader  --the term ends, or act_until passes
//                                                    without a renewal-->  on_lost (exit)
//
// A standby answers clients from StandbyHandler() (307 to the leader's API). The leader's
// keeper renews the lease every TTL/3. Patroni's rule: a leader that cannot renew must stop
// every action before its lease can have expired, so when act_until (TTL minus a margin,
// measured from before the renewal was sent) passes without a renewal, or etcd says the term
// is over, on_lost is called at once (by a watchdog thread of its own, so a renewal stuck
// waiting for a silent etcd cannot delay it); serve ends the process there, mid-step if it
// must, as a crash would: the journal says what was in flight, and the next leader resumes
// it. Writes the deposed leader still has in flight fail in etcd on the term's fence.
//
// The leader key's value says who leads: {"replica": NAME, "api": URL}.
// Thread-safety: Campaign, Resign and Fence from the thread that runs serve; the keeper
// and watchdog threads are internal; Leader() and Describe() from any thread.

struct LeaderInfo {
  std::string replica;
  std::string api;        // the URL clients reach the leader's API at
  std::int64_t term = 0;  // the key's create revision: the term's fencing token
};

// {"replica", "api", "term"}, or null for nobody: how the API shows who leads.
nlohmann::json LeaderJson(const std::optional<LeaderInfo>& leader);

struct LeadershipOptions {
  std::string key;      // "<prefix>leader"
  std::string replica;  // this replica's name
  std::string api;      // this replica's advertised API URL
  std::chrono::seconds ttl{10};
  std::function<void(const std::string&)> log;
};

class Leadership {
 public:
  Leadership(std::shared_ptr<EtcdClient> etcd, LeadershipOptions options);
  ~Leadership();  // stops the keeper; does not resign
  Leadership(const Leadership&) = delete;
  Leadership& operator=(const Leadership&) = delete;

  // One try for the key: true when this replica now holds it. A key another replica holds
  // costs one read. Errors are logged.
  bool TryLead();
  // TryLead every 250 ms (TTL/3 if shorter) until this replica holds the key (true) or `stop`
  // is set (false).
  bool Campaign(const std::atomic<bool>& stop);
  // The compare every store write of this term carries (EtcdStoreOptions::fence).
  EtcdCompare Fence() const;
  // Starts renewing; `on_lost` is called once, from the keeper or the watchdog thread, when the
  // term is over or may be, even while a renewal still waits for etcd. It must stop every
  // effect at once and not return to acting.
  void Keep(std::function<void(const std::string& why)> on_lost);
  // Stops renewing and gives the key up, so a standby takes over without waiting for the TTL.
  void Resign();

  // Who holds the key now, as etcd says (nullopt: nobody).
  Result<std::optional<LeaderInfo>> Leader();
  // While this replica leads: how long ago its lease was last renewed, and how long it may
  // still act without another renewal (nullopt: it does not lead).
  struct LeaseAge {
    std::chrono::milliseconds since_renewal{0};
    std::chrono::milliseconds may_act_for{0};
  };
  std::optional<LeaseAge> Lease() const;
  const LeadershipOptions& options() const { return options_; }

 private:
  void KeepLoop();
  void WatchLoop();
  void Lose(const std::string& why);

  std::shared_ptr<EtcdClient> etcd_;
  LeadershipOptions options_;
  std::unique_ptr<EtcdLeaderKey> key_;  // used by one thread at a time: serve's, then the keeper
  std::optional<LeaderTerm> term_;      // as Campaign won it
  std::function<void(const std::string&)> on_lost_;
  std::string last_said_;  // the campaign's last log line, said again only when it changes
  std::mutex mu_;
  // Steady-clock nanoseconds of the last renewal and of act_until; 0 before the term.
  std::atomic<std::int64_t> renewed_at_{0}, act_until_{0};
  std::atomic<bool> stop_{false}, lost_{false};
  std::thread keeper_, watchdog_;
};

// ---- ReplicaViews ----
// Every replica's view of every region, shared through etcd (issue 12, item 4).
//
//   probes --> LiveView --> ReplicaViews --put, leased--> <prefix>views/<replica>
//                                 ^--range <prefix>views/ every second--'
//
// Each replica, leader or standby, re-puts its view (orchestrator/watch/region_quorum.h's
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

// GET /api/v1/cluster, on the leader and on a standby alike: this replica's role ("leader" while
// it keeps a lease, else "standby"), the leader as etcd says, this replica's lease while it
// leads, every replica's view and, per region, what a quorum makes of them (cluster_status.cpp).
nlohmann::json ClusterStatusJson(Leadership& leadership, const ReplicaViews& views,
                                 const Config& config);

// ---- OpenServeState ----
// The state record `serve` runs on, by state.backend: the SQLite file, or a share of an etcd
// record among replicas (issue 12), where this replica first stands by until it leads.
// Thread-safety: called once, from serve's thread.

struct ServeState {
  std::unique_ptr<Leadership> leadership;  // etcd: the term this replica holds; else null
  std::unique_ptr<ReplicaViews> views;     // etcd: every replica's view, this one's published
  std::unique_ptr<StateStore> store;       // after `leadership`: destroyed first
  std::string description;                 // for the "serving" line and the logs
};

// sqlite: opens (creating) the file. etcd: starts publishing this replica's view of the
// regions from `live`, and, until this replica holds the leader key, probes every region into
// `live` and serves the standby answers on `http`'s address; then opens the store with every
// write fenced by the term, and starts keeping the term (on_lost when it ends). From there the
// leader's CatalogWatch feeds `live`. nullopt: a signal stopped the replica while it stood by.
// `live` must outlive the returned state.
Result<std::optional<ServeState>> OpenServeState(
    const Config& config, const HttpServerOptions& http, std::shared_ptr<Clock> clock,
    LiveView& live, std::function<void(const std::string& why)> on_lost);

// The state record `config` names, as `icewarden serve` made it, for a process beside the
// daemon: `icewarden audit verify` (read_only) and a gateway (which appends audit events).
// The SQLite file must exist (nothing is created, so a gateway started first cannot make an
// empty record that says no table has an owner); etcd is opened without a term.
Result<std::unique_ptr<StateStore>> OpenExistingState(const Config& config,
                                                      std::shared_ptr<Clock> clock, bool read_only);

}  // namespace icewarden
