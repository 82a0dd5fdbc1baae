// WriteAdmission: the gateway's latest picture of the store and the writes it has let through.
//
// A write is decided (CommitRules) and, when it may go, registered as in flight in one step
// that a new snapshot cannot come between. So once a snapshot that closes a failover's scope
// is published, every write to that scope's old owner is either refused or already counted,
// and Closure() can say "closed, nothing in flight" only when nothing more can reach the old
// owner through this gateway: the confirmation the gateway.fence action waits for.
//
// StoreWatch keeps the snapshot current. On SQLite it polls the database's data version (a
// read of no rows) every store_poll and reads again after a change; on etcd it waits on the
// store's watch (StateStore::WaitForChange, state/etcd_watch.h), so a change is read as soon as
// etcd applies it, and the store is published unreadable (every write refused) as soon as the
// watch cannot vouch for it; store_poll then only spaces the reads made before the watch is up.
//
// Ownership rows are read per write (and per table load, to find the owner), and kept while the
// snapshot they were read under is current, when the snapshot says the store can tell a change
// (StoreSnapshot::revision): a row kept is then never older than the snapshot it is decided
// with, which is what a row read afresh guarantees too, and a change to the store (seen within
// store_poll on SQLite, at once through etcd's watch) publishes a new snapshot and drops every
// kept row. A gateway on etcd would otherwise make a network round trip per request for a row
// that changes once per failover.
// Thread-safety: every method may be called from any thread.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "orchestrator/gateway/commit_rules.h"
#include "state/status.h"

namespace icewarden {

class StateStore;

class WriteAdmission {
 public:
  explicit WriteAdmission(std::vector<std::string> forward_to);

  // Replaces the snapshot decisions are made against.
  void Publish(StoreSnapshot snapshot);
  std::shared_ptr<const StoreSnapshot> Snapshot() const;

  // `table`'s ownership row: the one kept for the current snapshot, else read from `store` (and
  // kept, when the snapshot allows). At most kKeptRows rows are kept; past that all are dropped.
  Result<std::optional<Ownership>> OwnershipOf(StateStore& store, const TableIdent& table);
  static constexpr std::size_t kKeptRows = 20000;
  struct KeptRows {
    std::int64_t hits = 0;
    std::int64_t reads = 0;
    std::size_t size = 0;
  };
  KeptRows Kept() const;

  // Decides; a kForward verdict is registered in flight under *ticket until Release.
  WriteVerdict Admit(const std::vector<TableRecord>& tables, std::uint64_t* ticket);
  // Decides again for a write already in flight (its turn in the queue came), replacing the
  // records it is registered with; a verdict that is not kForward releases it.
  WriteVerdict Recheck(std::uint64_t ticket, const std::vector<TableRecord>& tables);
  void Release(std::uint64_t ticket);

  struct Closure {
    bool store_readable = false;
    bool seen = false;       // the snapshot holds the failover (active)
    std::string phase;       // its phase as last read
    bool closes = false;     // the phase closes its scope here
    int in_flight = 0;       // writes let through to its old owner for its scope
    bool confirmed = false;  // closes (or the store is unreadable, refusing all) and none in flight
    std::int64_t refreshes = 0;  // the snapshot's
  };
  Closure ClosureOf(const std::string& failover_id) const;
  std::size_t InFlight() const;

 private:
  const std::vector<std::string> forward_to_;
  mutable std::mutex mu_;
  std::shared_ptr<const StoreSnapshot> snapshot_;
  std::uint64_t next_ticket_ = 1;
  std::map<std::uint64_t, std::vector<TableRecord>> in_flight_;
  // Rows kept for the current snapshot (guarded by mu_); generation_ counts Publish calls.
  std::uint64_t generation_ = 0;
  std::unordered_map<std::string, std::optional<Ownership>> kept_;
  KeptRows kept_counts_;
};

// Watches `store` on a thread of its own (or polls it every `poll`) and publishes to `admission`.
class StoreWatch {
 public:
  StoreWatch(StateStore& store, WriteAdmission& admission, std::chrono::milliseconds poll);
  ~StoreWatch();  // stops
  StoreWatch(const StoreWatch&) = delete;
  StoreWatch& operator=(const StoreWatch&) = delete;

  // One read now, on the caller's thread (the first before serving), then the thread.
  void Start();
  void Stop();
  // One poll: re-reads and publishes when the store changed or could not be read.
  void PollOnce();

 private:
  void Loop();
  void PollLoop();
  void WatchLoop();
  // False when Stop came first.
  bool SleepUntil(std::chrono::steady_clock::time_point until);
  bool StopRequested();
  void PublishUnreadable(const std::string& why);
  StateStore& store_;
  WriteAdmission& admission_;
  const std::chrono::milliseconds poll_;
  std::optional<std::int64_t> last_revision_;
  std::int64_t refreshes_ = 0;
  bool last_ok_ = false;
  std::mutex stop_mu_;
  std::condition_variable stop_cv_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace icewarden
