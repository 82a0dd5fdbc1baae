// LiveView: what the daemon has observed and not (yet) persisted, published by the
// monitoring loop and read by the API: the latest replication-lag report and each
// region's latest probe round.
//
// Thread-safety: every method may be called from any thread. Readers get immutable
// snapshots (shared_ptr to const), so a slow API response never blocks the monitor.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "health/lag_monitor.h"

namespace icewarden {

struct ProbeRoundView {
  bool ok = false;
  std::chrono::milliseconds latency{0};
  std::string kind{};    // the failed kind, or the first kind when the round passed
  std::string detail{};  // "connection refused"
  UnixMillis at = 0;
};

class LiveView {
 public:
  void PublishLag(LagReport report) {
    auto snapshot = std::make_shared<const LagReport>(std::move(report));
    std::lock_guard lock(mu_);
    lag_ = std::move(snapshot);
  }
  std::shared_ptr<const LagReport> Lag() const {
    std::lock_guard lock(mu_);
    return lag_;
  }
  void PublishProbeRound(const std::string& region, ProbeRoundView round) {
    std::lock_guard lock(mu_);
    rounds_[region] = std::move(round);
  }
  std::map<std::string, ProbeRoundView> ProbeRounds() const {
    std::lock_guard lock(mu_);
    return rounds_;
  }

 private:
  mutable std::mutex mu_;
  std::shared_ptr<const LagReport> lag_;
  std::map<std::string, ProbeRoundView> rounds_;
};

}  // namespace icewarden
