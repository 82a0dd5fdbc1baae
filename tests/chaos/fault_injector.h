// FaultInjector: the faults of a chaos run, one at a time, each chosen at random (seeded):
//
//   kill-leader      SIGKILL the leader, then start it again a second later (systemd's
//                    Restart=always), a new incarnation
//   pause-leader     SIGSTOP the leader past its lease (TTL + 1.5 s) while a write is sent to
//                    it, then SIGCONT: it must exit, and the write must never land
//   restart-standby  SIGTERM a standby and start it again
//   skew             restart a replica under libfaketime at +30 s or -30 s (or, when one is
//                    skewed already, restart that one with a true clock)
//
// The first four faults are one of each kind; the rest are drawn 30/25/20/25 %. A replica
// that is not running (it exited, or did not start) is started again before any new fault.
// Thread-safety: one thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "tests/chaos/chaos_replicas.h"
#include "tests/chaos/invariants.h"

namespace icewarden::chaos {

struct FaultOptions {
  std::vector<std::string> etcd_endpoints;
  std::string leader_key;
  int ttl_seconds = 2;
  std::uint64_t seed = 1;
};

class FaultInjector {
 public:
  FaultInjector(FaultOptions options, ReplicaSet& replicas, Invariants& invariants);

  // Restarts what is down, then injects one fault; what it did, for the log.
  std::string InjectOne();
  // Starts every replica that is not running.
  void Heal();

  const std::map<std::string, std::int64_t>& injected() const { return injected_; }
  // The reasons of the writes sent to paused leaders (none may land).
  const std::vector<std::string>& deposed_writes() const { return deposed_writes_; }
  std::int64_t start_failures() const { return start_failures_; }

 private:
  // The index of the running replica that holds the leader key, waiting up to 15 s for one.
  std::optional<std::size_t> Leader(std::string* api);
  std::string KillLeader();
  std::string PauseLeader();
  std::string RestartStandby();
  std::string Skew();
  void StartAgain(std::size_t i);

  FaultOptions options_;
  ReplicaSet& replicas_;
  Invariants& invariants_;
  std::mt19937_64 rng_;
  std::map<std::string, std::int64_t> injected_;
  std::vector<std::string> deposed_writes_;
  std::int64_t start_failures_ = 0;
  int injections_ = 0;
};

}  // namespace icewarden::chaos
