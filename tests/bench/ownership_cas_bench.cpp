// Compare-and-set throughput of the SQLite StateStore: how fast a failover can move the
// ownership of 100,000 tables, by batch size. Each iteration moves every table once (all
// to the other region), so items_per_second is ownership updates per second, wall clock,
// including the fsync of every durable commit. Runs on a file in $TMPDIR (or /tmp), which
// should be on the same kind of disk as a production state store for the figure to mean
// anything.
//
//   ./build/tests/bench/ownership_cas_bench
#include <benchmark/benchmark.h>
#include <stdlib.h>

#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "state/sqlite_store.h"

namespace icewarden {
namespace {

constexpr int kTables = 100'000;

std::string MakeBenchDir() {
  const char* base = std::getenv("TMPDIR");
  std::string tmpl = std::string(base && *base ? base : "/tmp") + "/ownership-cas-bench-XXXXXX";
  if (mkdtemp(tmpl.data()) == nullptr) return "";
  return tmpl;
}

// 1,000 namespaces of 100 tables. Contiguous: a batch is a run of neighbouring tables, as
// when a failover moves a namespace scope. Scattered: consecutive tables fall in different
// namespaces, so every change of a small batch dirties its own b-tree pages, as when a scope
// ("owner:us-east-1") picks tables from all over the key space.
TableIdent BenchTable(int i, bool scattered) {
  char ns[16];
  char name[16];
  std::snprintf(ns, sizeof ns, "ns%03d", scattered ? i % 1000 : i / 100);
  std::snprintf(name, sizeof name, "t%06d", i);
  return TableIdent{{"bench", ns}, name};
}

// Applies `changes` in batches of `batch_size`; false (and the reason in `state`) on error.
bool ApplyInBatches(StateStore& store, std::vector<OwnershipChange>& changes,
                    std::size_t batch_size, benchmark::State& state) {
  AuditEvent why;
  why.actor = "bench";
  why.source = "bench";
  why.action = "ownership.set";
  why.target = "bench";
  for (std::size_t start = 0; start < changes.size(); start += batch_size) {
    std::size_t n = std::min(batch_size, changes.size() - start);
    Status s = store.CompareAndSetOwnership(
        std::span<const OwnershipChange>(changes.data() + start, n), why);
    if (!s.ok()) {
      state.SkipWithError(s.ToString().c_str());
      return false;
    }
  }
  return true;
}

void BM_OwnershipCompareAndSet(benchmark::State& state) {
  const std::size_t batch_size = static_cast<std::size_t>(state.range(0));
  const bool scattered = state.range(1) != 0;
  state.SetLabel(scattered ? "scattered" : "contiguous");
  const std::string dir = MakeBenchDir();
  if (dir.empty()) {
    state.SkipWithError("cannot create a temporary folder");
    return;
  }
  {
    Result<std::unique_ptr<StateStore>> opened =
        OpenSqliteStore({.path = dir + "/state.db"}, SystemClock());
    if (!opened.ok()) {
      state.SkipWithError(opened.status().ToString().c_str());
      return;
    }
    StateStore& store = **opened;

    // The initial claim (epoch 0 -> 1) is setup, not measured.
    std::vector<OwnershipChange> changes(kTables);
    for (int i = 0; i < kTables; ++i) {
      changes[i].table = BenchTable(i, scattered);
      changes[i].expected_epoch = 0;
      changes[i].new_owner = "region-a";
    }
    if (!ApplyInBatches(store, changes, 10'000, state)) return;

    Epoch epoch = 1;
    for (auto _ : state) {
      const char* to = epoch % 2 == 1 ? "region-b" : "region-a";
      for (OwnershipChange& c : changes) {
        c.expected_epoch = epoch;
        c.new_owner = to;
      }
      if (!ApplyInBatches(store, changes, batch_size, state)) break;
      ++epoch;
    }
    state.SetItemsProcessed(state.iterations() * kTables);
    state.counters["batches_per_second"] = benchmark::Counter(
        static_cast<double>(state.iterations()) * ((kTables + batch_size - 1) / batch_size),
        benchmark::Counter::kIsRate);
  }
  std::filesystem::remove_all(dir);
}

// Fixed iterations: each one is 100,000 durable updates, and setup (claiming 100,000
// tables) would otherwise be repeated by every calibration run. Real time, because most of
// a commit is waiting for fsync, which CPU time does not see.
BENCHMARK(BM_OwnershipCompareAndSet)
    ->ArgNames({"batch", "scattered"})
    ->ArgsProduct({{100, 1'000, 10'000}, {0, 1}})
    ->Iterations(3)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace icewarden

BENCHMARK_MAIN();
