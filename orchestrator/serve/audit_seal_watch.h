// The daemon's check of the audit log's seal (state/audit_seal.h), for /metrics: every
// `interval` (policies.audit_verify_interval) a pass reads the whole log from the store and
// checks it, anchored at the head the previous pass saw, so that removing the newest events or
// rewriting the log from some event on is caught too while the daemon runs. A break is logged
// once and stays in the metric until a pass finds the log whole again.
// Thread-safety: Latest from any thread; Start/Stop from the daemon's.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "state/audit_seal.h"

namespace icewarden {

class Clock;
class StateStore;

class AuditSealWatch {
 public:
  AuditSealWatch(StateStore& store, const Clock& clock, std::chrono::milliseconds interval,
                 std::function<void(const std::string&)> log);
  ~AuditSealWatch();  // Stop()s
  AuditSealWatch(const AuditSealWatch&) = delete;
  AuditSealWatch& operator=(const AuditSealWatch&) = delete;

  // The first pass runs at once.
  void Start();
  void Stop();
  // The latest pass that could read the store; nullopt before the first.
  std::optional<AuditSealStatus> Latest() const;

 private:
  void Loop();
  void CheckOnce();  // one pass

  StateStore& store_;
  const Clock& clock_;
  const std::chrono::milliseconds interval_;
  std::function<void(const std::string&)> log_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;
  std::optional<AuditSealStatus> latest_;
  std::optional<AuditAnchor> anchor_;  // the head the last intact pass saw
  std::thread thread_;
};

}  // namespace icewarden
