// The RunbookExecutor's own cost per step: a runbook of 100 no-op steps (10 fence, 80
// promote, 10 verify), driven from approved to completed. Each step is two durable journal
// writes (before and after) plus templating and the deadline watchdog; the five failover
// transitions are included. "per_step" is wall-clock time per step. Runs once against a
// SQLite file in $TMPDIR (or /tmp), which pays an fsync per write, and once against
// ":memory:", which shows the executor's overhead without the disk.
//
//   ./build/tests/bench/executor_bench
#include <benchmark/benchmark.h>
#include <stdlib.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "runbooks/executor.h"
#include "state/sqlite_store.h"

namespace icewarden {
namespace {

constexpr int kSteps = 100;

class NoopAction final : public Action {
 public:
  std::string_view kind() const override { return "noop"; }
  bool idempotent() const override { return true; }
  std::vector<ParamError> Validate(const nlohmann::json&) const override { return {}; }
  std::string Plan(const nlohmann::json&) const override { return "nothing"; }
  ActionResult Run(const nlohmann::json&, const ActionContext&) override {
    return ActionResult::Succeeded("did nothing");
  }
};

// Applies the real failover machine and persists, as the orchestrator does.
class StoreTransitions final : public FailoverTransitions {
 public:
  explicit StoreTransitions(StateStore& store) : store_(store) {}
  Result<FailoverDecision> Apply(const std::string& id, const FailoverInput& input) override {
    auto found = store_.GetFailover(id);
    if (!found.ok()) return found.status();
    if (!found->has_value()) return Status::NotFound(id);
    FailoverDecision d = ApplyFailoverEvent(**found, input, FailoverPolicy{});
    if (!d.accepted) return d;
    AuditEvent why;
    why.actor = "executor";
    why.source = "bench";
    why.action = std::string("failover.") + FailoverEventName(input.event);
    why.target = id;
    why.reason = d.reason;
    if (Status s = store_.UpdateFailover(d.next, (**found).version, why); !s.ok()) return s;
    d.next.version = (**found).version + 1;
    return d;
  }

 private:
  StateStore& store_;
};

Runbook NoopRunbook() {
  Runbook rb;
  rb.name = "noop";
  for (int i = 0; i < kSteps; ++i) {
    RunbookStep s;
    // Not `"s" + std::to_string(i)` (or assigning "s" first): GCC 12 at -O3 reports a false
    // -Wrestrict there (GCC bug 105651).
    s.id = std::string("s").append(std::to_string(i));
    s.action = "noop";
    s.params = nlohmann::json{{"target", "${to}"}, {"index", i}};
    (i < 10 ? rb.fence : i < 90 ? rb.promote : rb.verify).push_back(std::move(s));
  }
  return rb;
}

void BM_ExecutorPerStep(benchmark::State& state) {
  const bool on_disk = state.range(0) == 1;
  std::string dir;
  std::string path = ":memory:";
  if (on_disk) {
    const char* base = std::getenv("TMPDIR");
    dir = std::string(base && *base ? base : "/tmp") + "/executor-bench-XXXXXX";
    if (mkdtemp(dir.data()) == nullptr) {
      state.SkipWithError("mkdtemp failed");
      return;
    }
    path = dir + "/state.db";
  }
  auto clock = SystemClock();
  auto opened = OpenSqliteStore({.path = path}, clock);
  if (!opened.ok()) {
    state.SkipWithError(opened.status().ToString().c_str());
    return;
  }
  StateStore& store = **opened;
  ActionRegistry registry;
  (void)registry.Register(std::make_unique<NoopAction>());
  StoreTransitions transitions(store);
  RunbookExecutor executor(store, registry, transitions, clock);
  const Runbook runbook = NoopRunbook();

  int n = 0;
  for (auto _ : state) {
    state.PauseTiming();
    Failover f;
    f.id = "fo-bench-" + std::to_string(n++);
    f.scope = "namespace:bench.*";
    f.from = "us-east-1";
    f.to = "us-west-2";
    f.phase = FailoverPhase::kApproved;
    f.approvals.push_back(Approval{"bob", "bench", 1});
    AuditEvent why;
    why.actor = "bench";
    why.source = "bench";
    why.action = "failover.propose";
    why.target = f.id;
    why.reason = "bench";
    if (Status s = store.CreateFailover(f, why); !s.ok()) {
      state.SkipWithError(s.ToString().c_str());
      break;
    }
    TemplateBindings bindings;
    bindings.failover_id = f.id;
    bindings.from = f.from;
    bindings.to = f.to;
    state.ResumeTiming();

    auto report = executor.Drive(f.id, runbook, bindings);
    if (!report.ok() || report->phase != FailoverPhase::kCompleted) {
      state.SkipWithError(report.ok() ? report->summary.c_str()
                                      : report.status().ToString().c_str());
      break;
    }
  }
  state.counters["per_step"] =
      benchmark::Counter(static_cast<double>(state.iterations()) * kSteps,
                         benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
  if (!dir.empty()) std::filesystem::remove_all(dir);
}

BENCHMARK(BM_ExecutorPerStep)
    ->ArgName("file")
    ->Arg(1)
    ->Arg(0)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

}  // namespace
}  // namespace icewarden

BENCHMARK_MAIN();
