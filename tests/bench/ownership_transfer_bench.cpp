// Wall time of ownership.transfer over N lab tables with an injected commit latency L at
// concurrency C, next to the floor ceil(N / C) x L (goal: at most 1.2x the floor), and
// icewarden's own CPU per table moved (goal <= 100 us), which means the same on any machine.
// The lab (two regions; us-east-1 owns every table; eu-central-1 holds replicas) runs as its own
// process (build/examples/lab/icewarden-lab, tests/bench/bench_processes.h), so this process's
// CPU (getrusage) is the transfer's alone and the lab's is read from /proc beside it; with
// --in-process it runs inside this process as before (the CPU is then both together).
// Replication is paused during the measurement, and the store is SQLite in $TMPDIR with
// durable (fsync'd) batches.
//
//   ./build/tests/bench/ownership_transfer_bench [N=10000] [latency_ms=20] [concurrency=64]
//                                                [batch_size=500] [--in-process]
#include <stdlib.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "actions/catalog_checks.h"
#include "examples/lab/lab.h"
#include "health/catalog_client.h"
#include "state/sqlite_store.h"
#include "tests/bench/bench_processes.h"

namespace icewarden {
namespace {

using namespace std::chrono_literals;
using Steady = std::chrono::steady_clock;
using bench::LabProcess;

double Seconds(Steady::duration d) { return std::chrono::duration<double>(d).count(); }

// With --in-process, this process's CPU includes the lab's threads.

// The lab either way: in this process (lab::Lab) or as its own (LabProcess).
class BenchLab {
 public:
  std::string Start(bool in_process, const std::string& dir, int n, int server_threads) {
    if (!in_process) {
      LabProcess::Options o;
      o.dir = dir;
      o.seed_tables = n - 6;  // plus the six workload tables
      o.server_threads = server_threads;
      return process_.Start(o);
    }
    lab::LabOptions options;
    options.data_dir = dir + "/lab";
    options.regions = {{"us-east-1"}, {"eu-central-1"}};
    options.default_owner = "us-east-1";
    options.replication_lag_ms = 0;
    options.workload_enabled = false;
    options.seed_tables = n - 6;
    options.server_threads = server_threads;
    in_process_ = std::make_unique<lab::Lab>(options);
    if (auto s = in_process_->Start(); !s.ok()) return s.message();
    return "";
  }
  std::string region_url(const std::string& r) const {
    return in_process_ ? in_process_->region_url(r) : process_.region_url(r);
  }
  nlohmann::json State() { return in_process_ ? in_process_->State() : process_.State(); }
  bool PauseReplication() {
    if (in_process_) return in_process_->PauseReplication(), true;
    return process_.Admin("POST", "/lab/replication/pause").first == 200;
  }
  bool SetCommitLatency(const std::string& region, int ms) {
    if (in_process_) return in_process_->PatchFaults(region, {{"commit_latency_ms", ms}}).ok();
    return process_.Admin("POST", "/lab/regions/" + region + "/faults", {{"commit_latency_ms", ms}})
               .first == 200;
  }
  // The lab process's CPU seconds; -1 in process (it is in this process's).
  double CpuSeconds() const { return in_process_ ? -1 : process_.CpuSeconds(); }
  void Stop() {
    if (in_process_) in_process_->Stop();
    process_.Stop();
  }

 private:
  std::unique_ptr<lab::Lab> in_process_;
  LabProcess process_;
};

int Run(int n, int latency_ms, int concurrency, int batch_size, bool in_process) {
  const char* base = std::getenv("TMPDIR");
  std::string dir = std::string(base && *base ? base : "/tmp") + "/ownership-transfer-bench-XXXXXX";
  if (mkdtemp(dir.data()) == nullptr) return 1;
  const std::string us = "us-east-1", eu = "eu-central-1";

  BenchLab lab;
  auto seed_start = Steady::now();
  // Loads run ahead of the commits.
  if (auto e = lab.Start(in_process, dir, n, 2 * concurrency + 8); !e.empty()) {
    std::fprintf(stderr, "lab: %s\n", e.c_str());
    return 1;
  }
  std::printf("seeded %d tables in %s in %.1fs (lab %s)\n", n, us.c_str(),
              Seconds(Steady::now() - seed_start), in_process ? "in this process" : "process");

  // Wait until every table has reached eu-central-1 (markers are written there).
  auto repl_start = Steady::now();
  std::vector<std::string> tables;
  while (true) {
    nlohmann::json state = lab.State();
    int present = 0;
    tables.clear();
    if (state.is_object())
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
  if (!lab.PauseReplication()) return 1;
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
  if (!lab.SetCommitLatency(eu, latency_ms)) return 1;
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
  double cpu_start = bench::SelfCpuSeconds(), sys_start = bench::SelfCpuSeconds(true),
         lab_cpu_start = lab.CpuSeconds();
  ActionResult result = action->Run(params, ctx);
  double wall = Seconds(Steady::now() - start);
  double cpu = bench::SelfCpuSeconds() - cpu_start, sys = bench::SelfCpuSeconds(true) - sys_start;
  double lab_cpu = lab.CpuSeconds() - lab_cpu_start;
  int moved = 0;
  if (auto detail = nlohmann::json::parse(result.detail_json, nullptr, false); detail.is_object())
    moved = detail.value("moved", 0);

  int total = static_cast<int>(tables.size());
  double floor_s = std::ceil(static_cast<double>(total) / concurrency) * latency_ms / 1000.0;
  std::printf("ownership.transfer: %s: %s\n", OutcomeName(result.outcome), result.reason.c_str());
  std::printf("tables=%d latency=%dms concurrency=%d batch_size=%d\n", total, latency_ms,
              concurrency, batch_size);
  std::printf("wall=%.2fs floor=%.2fs ratio=%.2fx (goal <= 1.2x)\n", wall, floor_s, wall / floor_s);
  if (in_process) {
    std::printf(
        "cpu=%.2fs (%.2f cores busy; the lab's catalog and the transfer share them: "
        "%.1f us per table moved, lab included)\n",
        cpu, cpu / wall, 1e6 * cpu / std::max(1, moved));
  } else {
    std::printf(
        "icewarden cpu=%.2fs = %.1f us per table moved (goal <= 100 us; %.2f cores; "
        "of it in the kernel %.2fs = %.1f us per table); lab process cpu=%.2fs = %.1f us "
        "per table\n",
        cpu, 1e6 * cpu / std::max(1, moved), cpu / wall, sys, 1e6 * sys / std::max(1, moved),
        lab_cpu, 1e6 * lab_cpu / std::max(1, moved));
  }
  std::printf("moved=%d wall/floor=%.2fx icewarden_cpu_per_table=%.1fus\n", moved, wall / floor_s,
              1e6 * cpu / std::max(1, moved));

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
  std::vector<int> pos;
  bool in_process = false;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--in-process"))
      in_process = true;
    else
      pos.push_back(std::atoi(argv[i]));
  }
  int n = pos.size() > 0 ? pos[0] : 10'000;
  int latency = pos.size() > 1 ? pos[1] : 20;
  int concurrency = pos.size() > 2 ? pos[2] : 64;
  int batch = pos.size() > 3 ? pos[3] : 500;
  if (n < 6 || latency < 1 || concurrency < 1 || concurrency > 256 || batch < 1) {
    std::fprintf(stderr,
                 "usage: ownership_transfer_bench [N>=6] [latency_ms] [concurrency] [batch] "
                 "[--in-process]\n");
    return 2;
  }
  return icewarden::Run(n, latency, concurrency, batch, in_process);
}
