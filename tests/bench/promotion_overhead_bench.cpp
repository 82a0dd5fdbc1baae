// Promotion overhead: icewarden's own time inside a promotion, from an approval to `completed`,
// minus the actions' own time (and no time waiting for people: the fence is evidence, not an
// operator). The real FailoverService and FailoverRunner (tests/bench/bench_failover_rig.h) on a
// SQLite store in $TMPDIR (durable writes), N tables owned by us-east-1, a caught-up lag report
// covering them, and a runbook of three fast fakes that time themselves:
//   fence    quiet     kind fence.catalog_quiet (so its success is steps_and_quiet_window evidence)
//   promote  transfer  kind bench.promote (sleeps --promote-ms, default 0)
//   verify   check     kind bench.verify
// Measured: wall time from the Approve call to the Drive that ends in `completed`; the actions'
// time is the sum of the fakes' own measured durations; own = total - actions. Also where the own
// time goes (approve call, wake -> fence, fence -> promote (confirm_fencing, begin_promotion and
// its guard check), promote -> verify, verify -> completed) and the process's CPU over the same
// span. Goals: own <= 50 ms and own <= 5% of the total.
//
// With --memory the store is ":memory:": the same code without the fsyncs, to tell the disk's
// share from the CPU's.
//
//   ./build/tests/bench/promotion_overhead_bench [--reps 3] [--promote-ms 0] [--memory]
//                                                [tables... = 1 10000]
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "tests/bench/bench_failover_rig.h"

namespace icewarden::bench {
namespace {

using Steady = std::chrono::steady_clock;

double Ms(Steady::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }

double CpuSeconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  auto s = [](const timeval& t) { return t.tv_sec + t.tv_usec / 1e6; };
  return s(u.ru_utime) + s(u.ru_stime);
}

// When each fake started and ended (the last run of each kind).
struct StepTimes {
  std::atomic<std::int64_t> action_ns{0};
  Steady::time_point start[3], end[3];
};

class TimedAction final : public Action {
 public:
  TimedAction(std::string kind, int index, StepTimes* times)
      : kind_(std::move(kind)), index_(index), times_(times) {}
  std::string_view kind() const override { return kind_; }
  bool idempotent() const override { return true; }
  std::vector<ParamError> Validate(const nlohmann::json&) const override { return {}; }
  std::string Plan(const nlohmann::json&) const override { return "time itself"; }
  ActionResult Run(const nlohmann::json& params, const ActionContext&) override {
    auto start = Steady::now();
    int sleep_ms = params.is_object() ? params.value("sleep_ms", 0) : 0;
    if (sleep_ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(sleep_ms));
    auto end = Steady::now();
    times_->action_ns += std::chrono::duration_cast<std::chrono::nanoseconds>(end - start).count();
    times_->start[index_] = start;
    times_->end[index_] = end;
    return ActionResult::Succeeded("done");
  }

 private:
  std::string kind_;
  int index_;
  StepTimes* times_;
};

struct Sample {
  double propose_ms = 0, total_ms = 0, action_ms = 0, own_ms = 0, cpu_ms = 0;
  std::size_t failover_bytes = 0;  // the stored failover's rpo_json and guard_checks_json
  double approve_ms = 0, to_fence_ms = 0, fence_to_promote_ms = 0, promote_to_verify_ms = 0,
         verify_to_done_ms = 0;
};

std::optional<Sample> RunOnce(int n, int promote_ms, bool in_memory) {
  const std::string dir = MakeBenchDir("promotion-overhead-bench");
  StepTimes times;
  ActionRegistry registry;
  (void)registry.Register(std::make_unique<TimedAction>("fence.catalog_quiet", 0, &times));
  (void)registry.Register(std::make_unique<TimedAction>("bench.promote", 1, &times));
  (void)registry.Register(std::make_unique<TimedAction>("bench.verify", 2, &times));
  RigOptions options;
  options.dir = dir;
  options.store_in_memory = in_memory;
  options.runbook_yaml =
      "name: promotion-overhead\n"
      "fence:\n  - {id: quiet, action: fence.catalog_quiet, params: {}}\n"
      "promote:\n  - {id: transfer, action: bench.promote, params: {sleep_ms: " +
      std::to_string(promote_ms) +
      "}}\n"
      "verify:\n  - {id: check, action: bench.verify, params: {}}\n";
  std::optional<Sample> result;
  {
    FailoverRig rig(options, registry);
    if (auto e = rig.Build(); !e.empty()) {
      std::fprintf(stderr, "rig: %s\n", e.c_str());
      return std::nullopt;
    }
    std::vector<TableIdent> tables;
    char name[32];
    for (int i = 0; i < n; ++i) {
      std::snprintf(name, sizeof name, "bench.t%06d", i);
      tables.push_back(*TableIdent::Parse(name));
    }
    if (auto e = rig.ClaimAndPublishLag(tables); !e.empty()) {
      std::fprintf(stderr, "claims: %s\n", e.c_str());
      return std::nullopt;
    }
    Sample s;
    auto p0 = Steady::now();
    const std::string id = rig.Propose();
    s.propose_ms = Ms(Steady::now() - p0);
    if (id.empty()) return std::nullopt;
    const std::string hash = rig.PlanHashOf(id);
    sync();  // the setup's writes are not the promotion's to flush

    const double cpu0 = CpuSeconds();
    const auto t0 = Steady::now();
    if (auto e = rig.Approve(id, hash); !e.empty()) {
      std::fprintf(stderr, "approve: %s\n", e.c_str());
      return std::nullopt;
    }
    const auto approved = Steady::now();
    auto done = rig.WaitForDrive(id, FailoverPhase::kCompleted, std::chrono::minutes(10));
    const double cpu = CpuSeconds() - cpu0;
    if (!done) return std::nullopt;
    s.total_ms = Ms(*done - t0);
    s.action_ms = times.action_ns.load() / 1e6;
    s.own_ms = s.total_ms - s.action_ms;
    s.cpu_ms = cpu * 1000;
    s.approve_ms = Ms(approved - t0);
    s.to_fence_ms = Ms(times.start[0] - approved);
    s.fence_to_promote_ms = Ms(times.start[1] - times.end[0]);
    s.promote_to_verify_ms = Ms(times.start[2] - times.end[1]);
    s.verify_to_done_ms = Ms(*done - times.end[2]);
    if (auto f = rig.store().GetFailover(id); f.ok() && f->has_value())
      s.failover_bytes = (*f)->rpo_json.size() + (*f)->guard_checks_json.size();
    result = s;
  }
  std::filesystem::remove_all(dir);
  return result;
}

int Main(int argc, char** argv) {
  int reps = 3, promote_ms = 0;
  bool in_memory = false;
  std::vector<int> sizes;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--reps") && i + 1 < argc) {
      reps = std::atoi(argv[++i]);
    } else if (!std::strcmp(argv[i], "--promote-ms") && i + 1 < argc) {
      promote_ms = std::atoi(argv[++i]);
    } else if (!std::strcmp(argv[i], "--memory")) {
      in_memory = true;
    } else if (std::atoi(argv[i]) > 0) {
      sizes.push_back(std::atoi(argv[i]));
    } else {
      std::fprintf(
          stderr,
          "usage: promotion_overhead_bench [--reps R] [--promote-ms MS] [--memory] [tables...]\n");
      return 2;
    }
  }
  if (sizes.empty()) sizes = {1, 10'000};
  if (reps < 1) reps = 1;
  std::printf("store %s; promote step sleeps %d ms; %d runs per size; times in ms\n",
              in_memory ? ":memory: (no fsync)" : "SQLite file in $TMPDIR (durable)", promote_ms,
              reps);
  std::printf("%7s %9s | %9s %9s %9s %7s %8s | %8s %8s %8s %8s %8s | %9s\n", "tables", "propose",
              "total", "actions", "own", "own%", "cpu", "approve", "->fence", "f->prom", "p->ver",
              "v->done", "fo_bytes");
  int failures = 0;
  for (int n : sizes) {
    std::vector<Sample> samples;
    for (int r = 0; r < reps; ++r) {
      auto s = RunOnce(n, promote_ms, in_memory);
      if (!s) {
        ++failures;
        continue;
      }
      samples.push_back(*s);
      std::printf(
          "%7d %9.1f | %9.1f %9.1f %9.1f %6.1f%% %8.1f | %8.1f %8.1f %8.1f %8.1f %8.1f | %9zu\n", n,
          s->propose_ms, s->total_ms, s->action_ms, s->own_ms, 100 * s->own_ms / s->total_ms,
          s->cpu_ms, s->approve_ms, s->to_fence_ms, s->fence_to_promote_ms, s->promote_to_verify_ms,
          s->verify_to_done_ms, s->failover_bytes);
    }
    if (samples.empty()) continue;
    std::sort(samples.begin(), samples.end(),
              [](const Sample& a, const Sample& b) { return a.own_ms < b.own_ms; });
    const Sample& m = samples[samples.size() / 2];
    std::printf(
        "median N=%d: total=%.1fms actions=%.1fms own=%.1fms (%.1f%% of the total; goal "
        "<= 50 ms and <= 5%%) cpu=%.1fms\n",
        n, m.total_ms, m.action_ms, m.own_ms, 100 * m.own_ms / m.total_ms, m.cpu_ms);
  }
  return failures == 0 ? 0 : 1;
}

}  // namespace
}  // namespace icewarden::bench

int main(int argc, char** argv) { return icewarden::bench::Main(argc, argv); }
