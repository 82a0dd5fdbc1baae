// How often does fall/rise hysteresis declare a healthy region unreachable when its probe
// rounds fail independently at random? Drives HealthTracker with seeded Bernoulli rounds
// (each fails with probability p) and counts transitions into unreachable per round,
// next to p^fall (the chance that a given window of `fall` rounds all fail) and
// p^fall·(1-p) (the chance that a run of failures reaches `fall` exactly at this round:
// the round before the run passed).
//
//   build/tests/bench/false_positive_bench [rounds_per_region=200000] [regions=8] [p=0.1] [seed=1]
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "health/health_tracker.h"

namespace {

class CountingClock final : public icewarden::Clock {
 public:
  icewarden::UnixMillis Now() const override { return now; }
  std::chrono::steady_clock::time_point Monotonic() const override {
    return std::chrono::steady_clock::time_point(std::chrono::milliseconds(now));
  }
  icewarden::UnixMillis now = 1'780'000'000'000;
};

struct Figures {
  long long rounds = 0;
  long long to_unreachable = 0;
  long long rounds_unreachable = 0;
  double seconds = 0;
};

Figures Run(int fall, int rise, long long rounds_per_region, int regions, double p,
            unsigned long long seed) {
  using namespace icewarden;
  CountingClock clock;
  std::vector<Region> records;
  for (int i = 0; i < regions; ++i) records.push_back(Region{"region-" + std::to_string(i)});
  Figures f;
  HealthTracker tracker(
      records, clock,
      [&f](const HealthDecision& d) {
        if (d.next.health == RegionHealth::kUnreachable) ++f.to_unreachable;
      },
      HealthThresholds{fall, rise});
  std::mt19937_64 rng(seed);
  std::bernoulli_distribution fails(p);
  ProbeRound round;
  round.kind = "catalog_config";
  const auto start = std::chrono::steady_clock::now();
  for (long long n = 0; n < rounds_per_region; ++n) {
    clock.now += 10'000;
    for (const auto& r : records) {
      round.region = r.name;
      round.ok = !fails(rng);
      round.detail = round.ok ? "" : "connection refused";
      auto d = tracker.ApplyRound(round);
      if (!d.ok()) {
        std::fprintf(stderr, "%s\n", d.status().ToString().c_str());
        std::exit(1);
      }
      if (d->next.health == RegionHealth::kUnreachable) ++f.rounds_unreachable;
      ++f.rounds;
    }
  }
  f.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return f;
}

}  // namespace

int main(int argc, char** argv) {
  const long long rounds = argc > 1 ? std::atoll(argv[1]) : 200'000;
  const int regions = argc > 2 ? std::atoi(argv[2]) : 8;
  const double p = argc > 3 ? std::atof(argv[3]) : 0.1;
  const unsigned long long seed = argc > 4 ? std::strtoull(argv[4], nullptr, 10) : 1;
  const int rise = 2;
  std::printf(
      "false 'unreachable' transitions: %lld rounds/region x %d regions, p=%.3f, rise=%d, "
      "seed=%llu\n",
      rounds, regions, p, rise, seed);
  std::printf("%4s %12s %10s %12s %12s %12s %10s %12s\n", "fall", "rounds", "to_unrch",
              "rate/round", "p^fall", "p^fall(1-p)", "obs/p^f", "time_unrch");
  for (int fall = 1; fall <= 5; ++fall) {
    Figures f = Run(fall, rise, rounds, regions, p, seed);
    const double rate = static_cast<double>(f.to_unreachable) / static_cast<double>(f.rounds);
    const double pf = std::pow(p, fall);
    std::printf("%4d %12lld %10lld %12.3e %12.3e %12.3e %10.3f %11.4f%%   (%.0f rounds/s)\n", fall,
                f.rounds, f.to_unreachable, rate, pf, pf * (1 - p), rate / pf,
                100.0 * static_cast<double>(f.rounds_unreachable) / static_cast<double>(f.rounds),
                static_cast<double>(f.rounds) / f.seconds);
  }
  return 0;
}
