// The `icewarden serve` replicas of a chaos run, as systemd would keep them: each replica
// (replica-a, replica-b, ...) runs one process at a time, an *incarnation*, and every restart is
// a new one. Each incarnation's environment names it (ICEWARDEN_CHAOS_INCARNATION, which the
// runbook's effect steps send along), and the etcd revision just before it started is kept, so
// a leader term (the leader key's create revision) is attributed exactly: to the latest
// incarnation of the replica the key names that started before the term began.
//
// A replica may run under libfaketime with its wall clock off by a constant offset, which
// sticks to the replica across restarts until changed.
// Thread-safety: one thread drives the set; Attribute() is safe once that thread is done.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tests/fakes/subprocess.h"

namespace icewarden::chaos {

struct Incarnation {
  std::string replica;
  int number = 0;
  std::int64_t started_after_revision = 0;
  std::string skew;  // "" or a FAKETIME offset
  std::string id() const { return replica + "#" + std::to_string(number); }
};

struct ReplicaSetOptions {
  std::string dir;  // configs are <dir>/<replica>.yaml, logs <dir>/<replica>.log
  std::vector<std::string> names;
  std::vector<std::string> etcd_endpoints;
  std::string leader_key;  // "<prefix>leader"
};

class ReplicaSet {
 public:
  explicit ReplicaSet(ReplicaSetOptions options);
  ~ReplicaSet();  // SIGKILLs whatever still runs

  std::size_t size() const { return slots_.size(); }
  const std::string& name(std::size_t i) const { return slots_[i].name; }
  bool running(std::size_t i) const { return slots_[i].process != nullptr; }
  const std::string& skew(std::size_t i) const { return slots_[i].skew; }
  void set_skew(std::size_t i, std::string offset) { slots_[i].skew = std::move(offset); }

  // Starts a new incarnation of replica i; its first stdout line ("serving" or "standby"), or
  // "" when none came within 30 s.
  std::string Start(std::size_t i);
  // Sends `sig` and waits up to `limit` for the exit (SIGKILL after it); the exit status as
  // Subprocess::Wait says.
  std::optional<int> Stop(std::size_t i, int sig, std::chrono::milliseconds limit);
  void Signal(std::size_t i, int sig);
  // Waits up to `limit` for replica i's process to exit by itself; its status, nullopt if it
  // still runs (the process is kept).
  std::optional<int> WaitExit(std::size_t i, std::chrono::milliseconds limit);

  // The index of `replica`, or nullopt.
  std::optional<std::size_t> Find(const std::string& replica) const;
  // The incarnation that won term `term` while the key named `holder`; "" when none can have.
  std::string Attribute(std::int64_t term, const std::string& holder) const;
  const std::vector<Incarnation>& incarnations() const { return incarnations_; }

 private:
  struct Slot {
    std::string name;
    std::string skew;
    std::unique_ptr<testing::Subprocess> process;
  };
  std::int64_t Revision() const;

  ReplicaSetOptions options_;
  std::vector<Slot> slots_;
  std::vector<Incarnation> incarnations_;
};

}  // namespace icewarden::chaos
