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
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include <nlohmann/json_fwd.hpp>

#include "state/etcd_client.h"
#include "state/etcd_leader.h"

namespace icewarden {

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
  // term is over or may be, even while a renewal still waits for etcd. It must stop every effect at
  // once and not return to acting.
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

}  // namespace icewarden
