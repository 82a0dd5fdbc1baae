// Detection latency: from the moment a region goes away to the HealthTracker's `unreachable`
// transition, through the daemon's real probe path (bench_probe_pipeline.h) against the
// in-process lab on loopback.
//
// Two kinds of outage, each on its own lab region, measured concurrently (the regions are
// independent: one scheduler rhythm each, two probes per second in all):
//   refused      us-east-1's listener is closed (Lab::StopRegion): probes fail at once with
//                "connection refused".
//   black-holed  eu-central-1 answers nothing for hang_ms > timeout (the lab's hang fault):
//                probes fail by their deadline.
// Each trial waits until the region is healthy, waits a random part of one interval (so the
// outage starts at a random phase of the probe rhythm, not just after a round), starts the
// outage (the time is taken just before the call), waits for `unreachable`, ends the outage
// and waits for healthy again.
//
// The bound is interval × fall + timeout: the outage starts just after a passed round, fall
// rounds fail, the last one by its deadline. Jitter only shortens intervals, so the plain
// bound holds; the looser interval × (1 + jitter) × fall + timeout is printed for reference.
//
//   detection_bench [--rounds 50] [--interval-ms 1000] [--timeout-ms 300] [--jitter 0.1]
//                   [--fall 3] [--rise 2] [--hang-ms 2000] [--outage both|refused|black-holed]
#include <utility>  // before Asio (Boost 1.74 + C++20)

#include <algorithm>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <CLI/CLI.hpp>

#include "examples/lab/lab.h"
#include "tests/bench/bench_probe_pipeline.h"

namespace {

using namespace icewarden;
using Steady = std::chrono::steady_clock;
using std::chrono::milliseconds;

double MillisBetween(Steady::time_point from, Steady::time_point to) {
  return std::chrono::duration<double, std::milli>(to - from).count();
}

// What the tracker last said about one region. Written on the loop thread (transition and
// round callbacks), read by the region's trial thread.
class RegionWatch {
 public:
  void OnTransition(const HealthDecision& d) {
    std::lock_guard lock(mu_);
    health_ = d.next.health;
    changed_at_ = Steady::now();
    reason_ = d.reason;
    transitions_ += 1;
    cv_.notify_all();
  }
  void OnRound(const ProbeRound& round) {
    std::lock_guard lock(mu_);
    passed_in_a_row_ = round.ok ? passed_in_a_row_ + 1 : 0;
    cv_.notify_all();
  }

  // Healthy and at least one round passed since the last failure: the region is really up,
  // not just healthy because the tracker starts that way. False after `limit`.
  bool WaitHealthy(milliseconds limit) {
    std::unique_lock lock(mu_);
    return cv_.wait_for(lock, limit,
                        [&] { return health_ == RegionHealth::kHealthy && passed_in_a_row_ >= 1; });
  }
  std::uint64_t transitions() {
    std::lock_guard lock(mu_);
    return transitions_;
  }
  // The time of the first `unreachable` transition after transition number `after`.
  std::optional<Steady::time_point> WaitUnreachable(std::uint64_t after, milliseconds limit,
                                                    std::string* reason) {
    std::unique_lock lock(mu_);
    if (!cv_.wait_for(lock, limit, [&] {
          return transitions_ > after && health_ == RegionHealth::kUnreachable;
        }))
      return std::nullopt;
    *reason = reason_;
    return changed_at_;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  RegionHealth health_ = RegionHealth::kHealthy;
  Steady::time_point changed_at_{};
  std::string reason_;
  std::uint64_t transitions_ = 0;
  int passed_in_a_row_ = 0;
};

enum class Outage { kRefused, kBlackHoled };

struct TrialPlan {
  std::string region;
  Outage outage = Outage::kRefused;
  int rounds = 50;
  milliseconds interval{1000};
  milliseconds hang{2000};
  milliseconds wait_limit{30'000};  // for any one wait; a trial that exceeds it is "missed"
};

struct TrialResults {
  std::vector<double> detect_ms;   // outage start -> unreachable
  std::vector<double> recover_ms;  // outage end -> healthy
  double slowest_outage_call_ms = 0;
  int missed = 0;
  std::string example_reason;  // the tracker's sentence for the last detection
};

TrialResults RunTrials(lab::Lab& lab, RegionWatch& watch, const TrialPlan& plan) {
  TrialResults out;
  std::mt19937_64 random(std::random_device{}());
  std::uniform_int_distribution<int> phase(0, static_cast<int>(plan.interval.count()) - 1);
  for (int i = 0; i < plan.rounds; ++i) {
    if (!watch.WaitHealthy(plan.wait_limit)) {
      out.missed += 1;
      continue;
    }
    std::this_thread::sleep_for(milliseconds(phase(random)));
    const std::uint64_t before = watch.transitions();
    const Steady::time_point outage_start = Steady::now();
    lab::LabStatus started = plan.outage == Outage::kRefused
                                 ? lab.StopRegion(plan.region)
                                 : lab.PatchFaults(plan.region, {{"hang_ms", plan.hang.count()}});
    out.slowest_outage_call_ms =
        std::max(out.slowest_outage_call_ms, MillisBetween(outage_start, Steady::now()));
    if (!started.ok()) {
      std::fprintf(stderr, "detection_bench: %s: %s\n", plan.region.c_str(),
                   started.message().c_str());
      std::exit(1);
    }
    std::string reason;
    auto detected = watch.WaitUnreachable(before, plan.wait_limit, &reason);
    lab::LabStatus ended = plan.outage == Outage::kRefused ? lab.StartRegion(plan.region)
                                                           : lab.ClearFaults(plan.region);
    const Steady::time_point outage_end = Steady::now();
    if (!ended.ok()) {
      std::fprintf(stderr, "detection_bench: %s: %s\n", plan.region.c_str(),
                   ended.message().c_str());
      std::exit(1);
    }
    if (!detected) {
      out.missed += 1;
      continue;
    }
    out.detect_ms.push_back(MillisBetween(outage_start, *detected));
    out.example_reason = reason;
    if (watch.WaitHealthy(plan.wait_limit))
      out.recover_ms.push_back(MillisBetween(outage_end, Steady::now()));
  }
  return out;
}

// Nearest rank: with 50 samples p99 is the largest.
double Percentile(std::vector<double> v, double p) {
  if (v.empty()) return NAN;
  std::sort(v.begin(), v.end());
  auto rank = static_cast<size_t>(std::ceil(p * static_cast<double>(v.size())));
  return v[std::clamp<size_t>(rank, 1, v.size()) - 1];
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"detection_bench: outage start -> `unreachable`, through the real probe path"};
  int rounds = 50;
  int interval_ms = 1000;
  int timeout_ms = 300;
  double jitter = 0.1;
  int fall = 3;
  int rise = 2;
  int hang_ms = 2000;
  std::string outage = "both";
  app.add_option("--rounds", rounds, "trials per outage kind")->check(CLI::PositiveNumber);
  app.add_option("--interval-ms", interval_ms, "probe interval")->check(CLI::PositiveNumber);
  app.add_option("--timeout-ms", timeout_ms, "probe deadline")->check(CLI::PositiveNumber);
  app.add_option("--jitter", jitter, "interval jitter, a fraction")->check(CLI::Range(0.0, 0.5));
  app.add_option("--fall", fall, "failed rounds that make a region unreachable");
  app.add_option("--rise", rise, "passed rounds that make it healthy again");
  app.add_option("--hang-ms", hang_ms, "black-holed: how long the lab holds each request");
  app.add_option("--outage", outage, "both, refused or black-holed")
      ->check(CLI::IsMember({"both", "refused", "black-holed"}));
  CLI11_PARSE(app, argc, argv);
  if (hang_ms <= timeout_ms) {
    std::fprintf(stderr, "detection_bench: --hang-ms must exceed --timeout-ms\n");
    return 2;
  }
  const std::string load_before = bench::LoadAverage();

  char dir_template[] = "/tmp/icewarden-detect-XXXXXX";
  const std::string dir = mkdtemp(dir_template);
  lab::LabOptions lab_options;
  lab_options.data_dir = dir;
  lab_options.regions = {{"us-east-1"}, {"eu-central-1"}};
  lab_options.serve_admin = false;
  lab_options.workload_enabled = false;
  lab::Lab lab(lab_options);
  if (auto status = lab.Start(); !status.ok()) {
    std::fprintf(stderr, "detection_bench: lab: %s\n", status.message().c_str());
    return 1;
  }

  std::map<std::string, RegionWatch> watches;
  watches.try_emplace("us-east-1");
  watches.try_emplace("eu-central-1");
  bench::PipelineOptions options;
  options.schedule.interval = milliseconds(interval_ms);
  options.schedule.timeout = milliseconds(timeout_ms);
  options.schedule.jitter = jitter;
  options.thresholds.fall = fall;
  options.thresholds.rise = rise;
  auto pipeline = bench::BenchProbePipeline::Make(
      {{"us-east-1", lab.region_url("us-east-1")},
       {"eu-central-1", lab.region_url("eu-central-1")}},
      options, [&](const ProbeRound& round) { watches.at(round.region).OnRound(round); },
      [&](const HealthDecision& d) { watches.at(d.next.name).OnTransition(d); });
  if (!pipeline.ok()) {
    std::fprintf(stderr, "detection_bench: %s\n", pipeline.status().ToString().c_str());
    return 1;
  }
  (*pipeline)->Start();

  const milliseconds wait_limit(10 * (interval_ms * fall + timeout_ms) + 5000);
  struct Row {
    std::string label;
    TrialPlan plan;
    TrialResults results;
  };
  std::vector<Row> rows;
  if (outage != "black-holed")
    rows.push_back({"refused (listener closed)",
                    {"us-east-1", Outage::kRefused, rounds, milliseconds(interval_ms),
                     milliseconds(hang_ms), wait_limit},
                    {}});
  if (outage != "refused")
    rows.push_back({"black-holed (hang " + std::to_string(hang_ms) + "ms)",
                    {"eu-central-1", Outage::kBlackHoled, rounds, milliseconds(interval_ms),
                     milliseconds(hang_ms), wait_limit},
                    {}});
  const Steady::time_point run_start = Steady::now();
  std::vector<std::thread> threads;
  for (auto& row : rows)
    threads.emplace_back([&lab, &watches, &row] {
      row.results = RunTrials(lab, watches.at(row.plan.region), row.plan);
    });
  for (auto& t : threads) t.join();
  const double run_seconds = MillisBetween(run_start, Steady::now()) / 1000.0;
  (*pipeline)->Stop();
  lab.Stop();
  std::filesystem::remove_all(dir);

  const double bound = interval_ms * fall + timeout_ms;
  const double bound_jittered = interval_ms * (1.0 + jitter) * fall + timeout_ms;
  std::printf(
      "detection_bench: interval=%dms timeout=%dms jitter=%.2f fall=%d rise=%d "
      "rounds=%d (outage kinds run concurrently, one lab region each; %.0f s)\n",
      interval_ms, timeout_ms, jitter, fall, rise, rounds, run_seconds);
  std::printf("load average before: %s  after: %s\n", load_before.c_str(),
              bench::LoadAverage().c_str());
  std::printf(
      "bound = interval*fall+timeout = %.0f ms; with jitter "
      "interval*(1+jitter)*fall+timeout = %.0f ms\n\n",
      bound, bound_jittered);
  std::printf("%-30s %4s %6s %7s %7s %7s %7s %8s %9s %13s %14s %9s\n", "outage", "n", "missed",
              "p50_ms", "p90_ms", "p99_ms", "max_ms", "bound_ms", "jitter_ms", "p99<=bound+50",
              "p99<=jitter+50", "recover50");
  bool all_pass = true;
  for (const auto& row : rows) {
    const auto& r = row.results;
    const double p99 = Percentile(r.detect_ms, 0.99);
    const bool pass = !r.detect_ms.empty() && r.missed == 0 && p99 <= bound + 50;
    all_pass = all_pass && pass;
    const bool pass_jittered = !r.detect_ms.empty() && r.missed == 0 && p99 <= bound_jittered + 50;
    std::printf("%-30s %4zu %6d %7.0f %7.0f %7.0f %7.0f %8.0f %9.0f %13s %14s %9.0f\n",
                row.label.c_str(), r.detect_ms.size(), r.missed, Percentile(r.detect_ms, 0.5),
                Percentile(r.detect_ms, 0.9), p99, Percentile(r.detect_ms, 1.0), bound,
                bound_jittered, pass ? "PASS" : "FAIL", pass_jittered ? "PASS" : "FAIL",
                Percentile(r.recover_ms, 0.5));
  }
  std::printf(
      "\np99 is nearest-rank (with 50 trials it is the largest); recover50 is the median "
      "outage end -> healthy.\n");
  for (const auto& row : rows)
    std::printf("%s: last reason \"%s\"; slowest outage call %.1f ms (counted in the latency)\n",
                row.label.c_str(), row.results.example_reason.c_str(),
                row.results.slowest_outage_call_ms);
  return all_pass ? 0 : 3;
}
