// FailoverDriver: the operator of a chaos run. On its own thread it keeps one failover or
// switchover in flight at a time through the leader's API (whoever holds the leader key now):
// propose moving every table of the region that owns some to the other, approve it as the
// approver (again when the last check before promotion refused it), confirm fencing as an operator
// when no evidence came within a while, abort one that is stuck, and count how each ended. It reads
// progress from the record in etcd, not from a replica, so a replica that is down or deposed never
// hides a failover. Thread-safety: Start/Stop from one thread; Figures() from any.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace icewarden {
class StateStore;
}

namespace icewarden::chaos {

struct DriverOptions {
  std::vector<std::string> etcd_endpoints;
  std::string leader_key;
  std::vector<std::string> regions;  // two
  std::string operator_token, approver_token;
  std::uint64_t seed = 1;
  std::chrono::seconds confirm_after{8};  // fencing with no evidence this long: an operator says
  std::chrono::seconds abort_after{120};  // not finished this long after the proposal: abort
};

struct DriverFigures {
  std::map<std::string, std::int64_t> started;  // by kind
  std::map<std::string, std::int64_t> ended;    // by final phase
  std::int64_t refused_proposals = 0, approvals = 0, reapprovals = 0, operator_confirmations = 0,
               aborts = 0;
  // Failovers that ended under another leader term than the one they were proposed in.
  std::int64_t across_terms = 0;
  std::string active;                            // the failover in flight, if any
  std::map<std::string, std::int64_t> refusals;  // the first words of each refusal, counted
};

class FailoverDriver {
 public:
  FailoverDriver(DriverOptions options, std::shared_ptr<StateStore> record);
  ~FailoverDriver();  // Stop()
  void Start();
  void Stop();
  // Stops proposing new failovers; the one in flight goes on.
  void Drain() { draining_ = true; }
  bool Idle() const;
  DriverFigures Figures() const;

 private:
  void Loop();
  void Tick();
  void Propose(const std::string& api, std::int64_t term);
  void Advance(const std::string& api, std::int64_t term);
  void Refused(const std::string& why);

  DriverOptions options_;
  std::shared_ptr<StateStore> record_;
  std::mt19937_64 rng_;
  std::atomic<bool> stop_{false}, draining_{false};
  std::thread thread_;
  mutable std::mutex mu_;
  DriverFigures figures_;
  // The failover in flight (the loop's thread only, but for `figures_.active`).
  std::string id_;
  std::chrono::steady_clock::time_point proposed_at_, fencing_since_, next_try_;
  bool confirmed_ = false;
  std::int64_t proposed_term_ = 0;
  int proposals_ = 0;
};

}  // namespace icewarden::chaos
