// Wall time of ownership.transfer over N lab tables with an injected commit latency L at
// concurrency C, next to the floor ceil(N / C) x L (goal: at most 1.2x the floor). The lab runs
// in-process (two regions; us-east-1 owns every table; eu-central-1 holds replicas) with
// replication paused during the measurement so that only the transfer uses the machine, and
// the store is SQLite in $TMPDIR with durable (fsync'd) batches.
//
//   ./build/tests/bench/ownership_transfer_bench [N=10000] [latency_ms=20] [concurrency=64]
//                                                [batch_size=500]
#include <stdlib.h>
#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "actions/catalog_checks.h"
#include "examples/lab/lab.h"
#include "health/catalog_client.h"
#include "state/sqlite_store.h"

namespace icewarden {
namespace {

using namespace std::chrono_literals;
using Steady = std::chrono::steady_clock;

double Seconds(Steady::duration d) { return std::chrono::duration<double>(d).count(); }

// User + system CPU seconds of the whole process (the lab's server threads included).
double CpuSeconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  auto s = [](const timeval& t) { return t.tv_sec + t.tv_usec / 1e6; };
  return s(u.ru_utime) + s(u.ru_stime);
}

int Run(int n, int latency_ms, int concurrency, int batch_size) {
  const char* base = std::getenv("TMPDIR");
  std::string dir = std::string(base && *base ? base : "/tmp") + "/ownership-transfer-bench-XXXXXX";
  if (mkdtemp(dir.data()) == nullptr) return 1;
  const std::string us = "us-east-1", eu = "eu-central-1";

  lab::LabOptions options;
  options.data_dir = dir + "/lab";
  options.regions = {{us}, {eu}};
  options.default_owner = us;
  options.replication_lag_ms = 0;
  options.workload_enabled = false;
  options.seed_tables = n - 6;                   // plus the six workload tables
  options.server_threads = 2 * concurrency + 8;  // loads run ahead of the commits
  auto seed_start = Steady::now();
  lab::Lab lab(options);
  if (auto s = lab.Start(); !s.ok()) {
    std::fprintf(stderr, "lab: %s\n", s.message().c_str());
    return 1;
  }
  std::printf("seeded %d tables in %s in %.1fs\n", n, us.c_str(),
              Seconds(Steady::now() - seed_start));

  // Wait until every table has reached eu-central-1 (markers are written there).
  auto repl_start = Steady::now();
  std::vector<std::string> tables;
  while (true) {
    nlohmann::json state = lab.State();
    int present = 0;
    tables.clear();
    for (const auto& t : state["tables"]) {
      tables.push_back(t["table"]);
      const auto& r = t["regions"][eu];
      if (r.value("present", false) && r.value("pending_commits", 1) == 0) ++present;
    }
    if (present == static_cast<int>(tables.size()) && present >= n) break;
    if (Steady::now() - repl_start > 30min) {
      std::fprintf(stderr, "replication did not catch up: %d of %zu\n", present, tables.size());
      return 1;
    }
    std::this_thread::sleep_for(2s);
  }
  lab.PauseReplication();
  std::printf("replicated to %s in %.1fs\n", eu.c_str(), Seconds(Steady::now() - repl_start));

  auto store = OpenSqliteStore({dir + "/state.db"}, SystemClock());
  if (!store.ok()) return 1;
  for (size_t i = 0; i < tables.size(); i += 1000) {
    std::vector<OwnershipChange> claims;
    for (size_t j = i; j < tables.size() && j < i + 1000; ++j)
      claims.push_back({*TableIdent::Parse(tables[j]), 0, us, ""});
    if (!(*store)->CompareAndSetOwnership(claims, {}).ok()) return 1;
  }

  ActionEnv env;
  env.clock = SystemClock();
  env.store = store->get();
  env.catalog = [&](const std::string& region) -> std::optional<CatalogClientOptions> {
    CatalogClientOptions o;
    o.base_uri = lab.region_url(region);
    o.warehouse = "lab";
    o.default_deadline = 10s;
    return o;
  };
  if (!lab.PatchFaults(eu, {{"commit_latency_ms", latency_ms}}).ok()) return 1;
  // The setup wrote tens of MB (seeding, replication, claims) that the kernel has not flushed
  // yet; without this, the transfer's first fsyncs (the store's batches, the lab's WAL
  // checkpoints) pay for writing them out, by seconds and unevenly from run to run.
  sync();

  ActionContext ctx;
  ctx.failover_id = "fo-bench";
  ctx.step_id = "ownership";
  ctx.from = us;
  ctx.to = eu;
  ctx.scope = "owner:" + us;
  ctx.deadline = Steady::now() + 30min;
  auto action = MakeOwnershipTransferAction(env);
  nlohmann::json params{{"concurrency", concurrency}, {"batch_size", batch_size}};
  auto start = Steady::now();
  double cpu_start = CpuSeconds();
  ActionResult result = action->Run(params, ctx);
  double wall = Seconds(Steady::now() - start);
  double cpu = CpuSeconds() - cpu_start;

  int total = static_cast<int>(tables.size());
  double floor_s = std::ceil(static_cast<double>(total) / concurrency) * latency_ms / 1000.0;
  std::printf("ownership.transfer: %s: %s\n", OutcomeName(result.outcome), result.reason.c_str());
  std::printf("tables=%d latency=%dms concurrency=%d batch_size=%d\n", total, latency_ms,
              concurrency, batch_size);
  std::printf("wall=%.2fs floor=%.2fs ratio=%.2fx (goal <= 1.2x)\n", wall, floor_s, wall / floor_s);
  std::printf("cpu=%.2fs (%.2f cores busy; the lab's catalog and the transfer share them)\n", cpu,
              cpu / wall);

  // The same again without catalog markers: what the store's batches cost alone.
  ctx.failover_id = "fo-bench-back";
  std::swap(ctx.from, ctx.to);
  ctx.scope = "owner:" + ctx.from;
  params["write_catalog_properties"] = false;
  start = Steady::now();
  ActionResult back = action->Run(params, ctx);
  std::printf("store only (back, no markers): %s in %.2fs\n", OutcomeName(back.outcome),
              Seconds(Steady::now() - start));

  lab.Stop();
  std::filesystem::remove_all(dir);
  return result.ok() ? 0 : 1;
}

}  // namespace
}  // namespace icewarden

int main(int argc, char** argv) {
  int n = argc > 1 ? std::atoi(argv[1]) : 10'000;
  int latency = argc > 2 ? std::atoi(argv[2]) : 20;
  int concurrency = argc > 3 ? std::atoi(argv[3]) : 64;
  int batch = argc > 4 ? std::atoi(argv[4]) : 500;
  if (n < 6 || latency < 1 || concurrency < 1 || concurrency > 256 || batch < 1) {
    std::fprintf(stderr,
                 "usage: ownership_transfer_bench [N>=6] [latency_ms] [concurrency] [batch]\n");
    return 2;
  }
  return icewarden::Run(n, latency, concurrency, batch);
}
