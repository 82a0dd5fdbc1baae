#include "health/probe_scheduler.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <utility>

namespace icewarden {

bool ProbeRound::answered() const {
  return std::any_of(probes.begin(), probes.end(), [](const ProbeResult& p) { return p.answered; });
}

const ProbeResult* ProbeRound::unparsed() const {
  for (const auto& p : probes)
    if (p.unparsed) return &p;
  return nullptr;
}
namespace {

using std::chrono::milliseconds;
using TimePoint = std::chrono::steady_clock::time_point;

milliseconds Since(TimePoint start, TimePoint now) {
  return std::chrono::duration_cast<milliseconds>(now - start);
}

// One region's probes and the round in flight. Owned by Core in a stable allocation, so
// callbacks may hold a plain pointer as long as they also hold (or lock) the Core.
struct RegionRun {
  std::string name;
  std::vector<std::unique_ptr<Probe>> probes;
  TimerHandle next;         // the next round's start
  TimerHandle guard;        // timeout + grace for the round in flight
  std::uint64_t round = 0;  // id of the latest round started
  bool in_flight = false;
  TimePoint started{};
  TimePoint planned_next{};
  std::optional<milliseconds> interval_override;  // SetIntervalOverride
  std::vector<std::optional<ProbeResult>> answers;
  size_t outstanding = 0;
};

}  // namespace

struct ProbeScheduler::Core : std::enable_shared_from_this<ProbeScheduler::Core> {
  Core(Timers& t, RandomBits r, ProbeScheduleOptions o, RoundSink s)
      : timers(t), random(std::move(r)), options(o), sink(std::move(s)) {}

  Timers& timers;
  RandomBits random;
  ProbeScheduleOptions options;
  RoundSink sink;
  std::vector<std::unique_ptr<RegionRun>> regions;
  bool running = false;
  std::uint64_t epoch = 0;  // bumped by Stop(): callbacks of an older epoch are stale

  // interval × (1 − jitter·u), u uniform in [0, 1): jitter only ever shortens the gap.
  // Regions still spread out, and detection keeps its bound of interval × fall + timeout
  // (symmetric jitter would stretch that by the jitter fraction, measured in
  // tests/bench/detection_bench).
  milliseconds JitteredInterval(const RegionRun* r) {
    const milliseconds interval = r->interval_override.value_or(options.interval);
    const double u = static_cast<double>(random() >> 11) * 0x1.0p-53;  // [0, 1)
    const double factor = 1.0 - options.jitter * u;
    return milliseconds(std::llround(static_cast<double>(interval.count()) * factor));
  }

  bool Current(const RegionRun* r, std::uint64_t e, std::uint64_t round) const {
    return running && e == epoch && r->in_flight && r->round == round;
  }

  void StartRound(RegionRun* r) {
    r->round += 1;
    r->in_flight = true;
    r->started = timers.Now();
    r->planned_next = r->started + JitteredInterval(r);
    r->answers.assign(r->probes.size(), std::nullopt);
    r->outstanding = r->probes.size();
    const std::uint64_t e = epoch;
    const std::uint64_t round = r->round;
    std::weak_ptr<Core> weak = shared_from_this();
    r->guard = timers.RunAfter(options.timeout + options.grace, [weak, r, e, round] {
      auto self = weak.lock();
      if (self && self->Current(r, e, round)) self->GiveUpOnSilentProbes(r);
    });
    for (size_t i = 0; i < r->probes.size(); ++i) {
      r->probes[i]->Check(options.timeout, [weak, r, e, round, i](ProbeResult result) {
        auto self = weak.lock();
        if (self && self->Current(r, e, round)) self->OnAnswer(r, i, std::move(result));
      });
      // An answer given synchronously may have finished the round, and the sink may have
      // stopped the scheduler: then the remaining probes must not start.
      if (!Current(r, e, round)) return;
    }
  }

  void OnAnswer(RegionRun* r, size_t i, ProbeResult result) {
    if (r->answers[i]) return;  // a probe that answers twice: the first answer counts
    if (result.kind.empty()) result.kind = r->probes[i]->kind();
    r->answers[i] = std::move(result);
    if (--r->outstanding == 0) FinishRound(r);
  }

  void GiveUpOnSilentProbes(RegionRun* r) {
    const milliseconds waited = options.timeout + options.grace;
    for (size_t i = 0; i < r->answers.size(); ++i) {
      if (r->answers[i]) continue;
      ProbeResult silent;
      silent.ok = false;
      silent.kind = r->probes[i]->kind();
      silent.latency = waited;
      silent.detail = "probe did not answer within " + std::to_string(waited.count()) + "ms";
      // Like the deadline it overran: nothing was heard from the catalog.
      silent.answered = false;
      r->answers[i] = std::move(silent);
    }
    r->outstanding = 0;
    FinishRound(r);
  }

  void FinishRound(RegionRun* r) {
    r->guard.Cancel();
    r->in_flight = false;
    const TimePoint now = timers.Now();

    ProbeRound out;
    out.region = r->name;
    out.ok = true;
    out.latency = Since(r->started, now);
    for (auto& a : r->answers) {
      if (!a->ok && out.ok) {
        out.ok = false;
        out.kind = a->kind;
        out.detail = a->detail;
      }
      out.probes.push_back(std::move(*a));
    }
    if (out.ok) out.kind = out.probes.front().kind;

    // Arm the next round before reporting, so that a sink calling Stop() cancels it.
    ArmNext(r);
    if (sink) sink(out);
  }

  void ArmNext(RegionRun* r) {
    const milliseconds delay =
        std::max(milliseconds(0), std::chrono::ceil<milliseconds>(r->planned_next - timers.Now()));
    std::weak_ptr<Core> weak = shared_from_this();
    const std::uint64_t e = epoch;
    r->next.Cancel();
    r->next = timers.RunAfter(delay, [weak, r, e] {
      auto self = weak.lock();
      if (self && self->running && self->epoch == e && !r->in_flight) self->StartRound(r);
    });
  }

  // A shorter interval shortens the wait for the next round of a region between rounds.
  void Reschedule(RegionRun* r) {
    if (!running || r->in_flight || r->round == 0) return;
    const TimePoint sooner = r->started + JitteredInterval(r);
    if (sooner >= r->planned_next) return;
    r->planned_next = sooner;
    ArmNext(r);
  }
};

ProbeScheduler::ProbeScheduler(Timers& timers, RandomBits random, ProbeScheduleOptions options,
                               RoundSink on_round)
    : core_(std::make_shared<Core>(timers, std::move(random), options, std::move(on_round))) {}

ProbeScheduler::~ProbeScheduler() { Stop(); }

Status ProbeScheduler::AddRegion(std::string region, std::vector<std::unique_ptr<Probe>> probes) {
  const auto& o = core_->options;
  if (o.interval.count() <= 0 || o.timeout.count() <= 0 || o.grace.count() < 0 ||
      !(o.jitter >= 0.0 && o.jitter <= 0.5)) {
    return Status::InvalidArgument(
        "probe schedule needs interval > 0, timeout > 0, grace >= 0 and jitter in [0, 0.5]");
  }
  if (region.empty()) return Status::InvalidArgument("a probed region needs a name");
  for (const auto& r : core_->regions) {
    if (r->name == region) {
      return Status::InvalidArgument("region " + region + " is already scheduled for probing");
    }
  }
  if (probes.empty()) return Status::InvalidArgument("region " + region + " has no probes");
  for (const auto& p : probes) {
    if (!p) return Status::InvalidArgument("region " + region + " has a null probe");
  }
  auto run = std::make_unique<RegionRun>();
  run->name = std::move(region);
  run->probes = std::move(probes);
  core_->regions.push_back(std::move(run));
  if (core_->running) core_->StartRound(core_->regions.back().get());
  return Status::Ok();
}

Status ProbeScheduler::SetIntervalOverride(const std::string& region,
                                           std::optional<std::chrono::milliseconds> interval) {
  if (interval && interval->count() <= 0)
    return Status::InvalidArgument("a probe interval must be positive");
  for (auto& r : core_->regions) {
    if (r->name != region) continue;
    r->interval_override = interval;
    core_->Reschedule(r.get());
    return Status::Ok();
  }
  return Status::NotFound("region " + region + " is not scheduled for probing");
}

void ProbeScheduler::Start() {
  if (core_->running) return;
  core_->running = true;
  core_->epoch += 1;
  // Index loop: a sink that stops the scheduler during a synchronous round ends it.
  for (size_t i = 0; i < core_->regions.size() && core_->running; ++i) {
    core_->StartRound(core_->regions[i].get());
  }
}

void ProbeScheduler::Stop() {
  if (!core_->running) return;
  core_->running = false;
  core_->epoch += 1;
  for (auto& r : core_->regions) {
    r->next.Cancel();
    r->guard.Cancel();
    r->in_flight = false;
  }
}

bool ProbeScheduler::running() const { return core_->running; }

}  // namespace icewarden
