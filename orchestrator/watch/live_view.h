// LiveView: what the daemon has observed and not (yet) persisted, published by the
// monitoring loop and read by the API: the latest replication-lag report and each
// region's latest probe round.
//
// Thread-safety: every method may be called from any thread. Readers get immutable
// snapshots (shared_ptr to const), so a slow API response never blocks the monitor.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>

#include "health/lag_monitor.h"

namespace icewarden {

struct ProbeRoundView {
  bool ok = false;
  std::chrono::milliseconds latency{0};
  std::string kind{};    // the failed kind, or the first kind when the round passed
  std::string detail{};  // "connection refused"
  UnixMillis at = 0;
};

// A region whose latest probe rounds got no answer at all (refused, timed out,
// unresolvable), since the first such round in an unbroken run. Any answer, whatever its
// status or body, ends the run: only silence is evidence (DESIGN.md rule 7).
// A second writer the split-brain watch acted on (orchestrator/watch/split_brain.h), by
// (dotted table, region): `icewarden lag` marks the row while it stays diverged.
struct SplitBrainMark {
  UnixMillis detected_at = 0;
  std::string reason{};  // the finding: snapshots, the writer's commit time, the owner
};

// Upper bounds (seconds) of the probe latency histogram's buckets: fixed, so that the
// series of icewarden_probe_duration_seconds never change with what was observed.
inline constexpr std::array<double, 11> kProbeLatencyBuckets{0.005, 0.01, 0.025, 0.05, 0.1, 0.25,
                                                             0.5,   1.0,  2.5,   5.0,  10.0};

// Observations per bucket (not cumulative; the exposition adds them up), their count and sum.
struct LatencyHistogram {
  std::array<std::uint64_t, kProbeLatencyBuckets.size()> buckets{};
  std::uint64_t count = 0;
  double sum_seconds = 0;

  void Observe(std::chrono::milliseconds latency) {
    const double s = static_cast<double>(latency.count()) / 1000.0;
    for (std::size_t i = 0; i < kProbeLatencyBuckets.size(); ++i) {
      if (s <= kProbeLatencyBuckets[i]) {
        ++buckets[i];
        break;
      }
    }
    ++count;
    sum_seconds += s;
  }
};

struct RegionSilence {
  UnixMillis since = 0;  // the first silent round of the run
  int rounds = 0;        // silent rounds in a row
  std::string detail{};  // the latest round's failure: "connection refused"
};

class LiveView {
 public:
  void PublishSilence(const std::string& region, std::optional<RegionSilence> silence) {
    std::lock_guard lock(mu_);
    if (silence) {
      silence_[region] = std::move(*silence);
    } else {
      silence_.erase(region);
    }
  }
  // nullopt: the region answered in its latest round, or has not been probed yet.
  std::optional<RegionSilence> Silence(const std::string& region) const {
    std::lock_guard lock(mu_);
    auto it = silence_.find(region);
    if (it == silence_.end()) return std::nullopt;
    return it->second;
  }
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
  // One probe's latency, by region and probe kind (icewarden_probe_duration_seconds).
  void ObserveProbe(const std::string& region, const std::string& kind,
                    std::chrono::milliseconds latency) {
    std::lock_guard lock(mu_);
    probe_latency_[{region, kind}].Observe(latency);
  }
  std::map<std::pair<std::string, std::string>, LatencyHistogram> ProbeLatencies() const {
    std::lock_guard lock(mu_);
    return probe_latency_;
  }
  // Answers a region's catalog gave that icewarden could not parse, by what was expected
  // ("config", "load_table", ...): icewarden_catalog_responses_unparsed_total.
  void CountUnparsed(const std::string& region, const std::string& kind) {
    std::lock_guard lock(mu_);
    ++unparsed_[{region, kind}];
  }
  std::map<std::pair<std::string, std::string>, std::uint64_t> UnparsedResponses() const {
    std::lock_guard lock(mu_);
    return unparsed_;
  }
  void PublishSplitBrain(const std::string& table, const std::string& region, SplitBrainMark mark) {
    std::lock_guard lock(mu_);
    split_brain_[{table, region}] = std::move(mark);
  }
  std::map<std::pair<std::string, std::string>, SplitBrainMark> SplitBrain() const {
    std::lock_guard lock(mu_);
    return split_brain_;
  }

 private:
  mutable std::mutex mu_;
  std::shared_ptr<const LagReport> lag_;
  std::map<std::string, ProbeRoundView> rounds_;
  std::map<std::string, RegionSilence> silence_;
  std::map<std::pair<std::string, std::string>, std::uint64_t> unparsed_;
  std::map<std::pair<std::string, std::string>, LatencyHistogram> probe_latency_;
  std::map<std::pair<std::string, std::string>, SplitBrainMark> split_brain_;
};

}  // namespace icewarden
