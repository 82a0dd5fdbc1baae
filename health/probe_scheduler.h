// ProbeScheduler: runs each region's probes in rounds and reports every round.
//
// A round runs all of a region's probes concurrently, each with `timeout` as its deadline,
// and fails if any probe fails; its kind and detail are those of the first failed probe in
// the region's configured order (or the first probe's kind on success). A round is silent
// when it failed and none of its probes heard from the catalog. Rounds of one
// region never overlap: the next starts at max(previous start + jittered interval, previous
// end), where the interval is shortened by up to `jitter` (a fraction, never lengthened) from the
// injected random source, so regions and daemons do not probe in lockstep.
//
// A region may be given an interval override (SetIntervalOverride), e.g. while an alert says
// it is suspect: its rounds then use that interval, jittered the same way, until it is
// cleared. A shorter override takes effect at once: the wait for the next round is cut to
// what the override allows from the last round's start (never before that round's end).
//
// The scheduler does not trust probes to keep their deadline: a probe that has not
// answered by timeout + grace counts as failed, "probe did not answer within 2500ms", and
// its late answer is ignored.
//
// Nothing blocks: probes are asynchronous and waits are Timers. Stop() cancels every timer;
// answers that arrive after Stop() (or after the scheduler is destroyed) are dropped.
// Thread-safety: loop thread only.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "health/probe.h"
#include "health/uuid_v7.h"

namespace icewarden {

struct ProbeScheduleOptions {
  std::chrono::milliseconds interval{10'000};
  std::chrono::milliseconds timeout{2'000};  // each probe's deadline
  std::chrono::milliseconds grace{500};      // how long past the deadline the scheduler waits
  double jitter = 0.1;                       // up to 10% earlier than interval
};

// One finished round of one region.
struct ProbeRound {
  std::string region;
  bool ok = false;
  std::string kind;    // the first failed probe's kind, or the first probe's kind on success
  std::string detail;  // the first failed probe's detail; empty on success
  std::chrono::milliseconds latency{0};  // from the round's start to its last answer
  std::vector<ProbeResult> probes;       // one per probe, in configured order

  // Some probe heard from the catalog (ProbeResult::answered).
  bool answered() const;
  // Failed, and no probe got an answer: the only kind of round that counts towards
  // "unreachable" as fencing evidence (DESIGN.md rule 7).
  bool silent() const { return !ok && !answered(); }
  // The first probe that got an answer it could not parse, or nullptr.
  const ProbeResult* unparsed() const;
};

class ProbeScheduler {
 public:
  using RoundSink = std::function<void(const ProbeRound&)>;

  // `timers` must outlive the scheduler. `random` supplies the jitter.
  ProbeScheduler(Timers& timers, RandomBits random, ProbeScheduleOptions options,
                 RoundSink on_round);
  ~ProbeScheduler();  // Stop()s
  ProbeScheduler(const ProbeScheduler&) = delete;
  ProbeScheduler& operator=(const ProbeScheduler&) = delete;

  // Before Start(). kInvalidArgument for an empty region name, a region added twice, no
  // probes, or options that cannot work (interval or timeout not positive, jitter outside
  // [0, 0.5]).
  Status AddRegion(std::string region, std::vector<std::unique_ptr<Probe>> probes);

  // Probes `region` every `interval` (jittered as the configured one) instead of the
  // configured interval, until called with nullopt; a round in flight is not disturbed.
  // kNotFound for a region not added; kInvalidArgument for an interval that is not positive.
  Status SetIntervalOverride(const std::string& region,
                             std::optional<std::chrono::milliseconds> interval);

  // Starts every region's first round at once (each region then keeps its own rhythm).
  // Start() after Stop() starts again.
  void Start();
  // Cancels every timer and forgets rounds in flight: no round is reported after Stop().
  void Stop();
  bool running() const;

 private:
  struct Core;
  std::shared_ptr<Core> core_;
};

}  // namespace icewarden
