// Switchover of N lab tables under the lab's continuous workload, next to its floor, with the
// commits the workload made during it and how many of them the new owner lacks afterwards.
//   lab        build/examples/lab/icewarden-lab: us-east-1 owns every table, replication lag R,
//              the workload appending to its six tables every W ms, commit latency L on
//              eu-central-1 (the new owner's marker commits pay it)
//   named      BIND 9, zone lake.bench, RFC 2136 with TSIG
//   this one   the real FailoverService + FailoverRunner + registerBuiltinActions over a durable
//              SQLite store (tests/bench/bench_failover_rig.h), route kind switchover
// Runbook (as examples/runbooks/switchover.yaml): fence = the lab's write fence on us-east-1 +
// a 1ms quiet window; promote = switchover.demotion_token, ownership.transfer (concurrency C),
// dns.rfc2136, resume writes; no verify steps.
// Floor = R (the last commit before the fence reaches the target R later) + ceil(N/C) x L + the
// DNS step alone (median of 5). Goal: 0 lost, approval -> completed <= 1.2 x floor.
// Lost = workload commits the lab logged in us-east-1 whose snapshot is not in eu-central-1's
// table afterwards.
//
//   ./build/tests/bench/switchover_bench [N=10000] [latency_ms=20] [concurrency=64]
//                                        [--lag-ms 2000] [--workload-ms 200]
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "actions/action.h"
#include "tests/bench/bench_failover_rig.h"
#include "tests/bench/bench_processes.h"

namespace icewarden::bench {
namespace {

using Steady = std::chrono::steady_clock;
using namespace std::chrono_literals;
using nlohmann::json;

double Seconds(Steady::duration d) { return std::chrono::duration<double>(d).count(); }

struct Args {
  int n = 10'000, latency_ms = 20, concurrency = 64, lag_ms = 2000, workload_ms = 200;
};

// The snapshot ids of a table in a region's catalog (snapshots=all).
std::set<long long> SnapshotIds(const std::string& base, const std::string& dotted) {
  auto t = *TableIdent::Parse(dotted);
  std::string ns;
  for (const auto& l : t.namespace_levels) ns += (ns.empty() ? "" : "%1F") + l;
  httplib::Client c(base);
  auto res = c.Get("/v1/lab/namespaces/" + ns + "/tables/" + t.name);
  std::set<long long> out;
  if (!res || res->status != 200) return out;
  json m = json::parse(res->body, nullptr, false);
  if (!m.is_object()) return out;
  for (const json& s : m["metadata"].value("snapshots", json::array()))
    out.insert(s["snapshot-id"].get<long long>());
  return out;
}

int RunIn(const std::string& dir, const Args& a) {
  std::filesystem::create_directories(dir + "/named");
  BindProcess named;
  if (auto e = named.Start(dir + "/named", "lake.bench",
                           "writer IN CNAME writer.us-east-1.lake.bench.\n"
                           "probe IN CNAME writer.us-east-1.lake.bench.\n");
      !e.empty()) {
    std::fprintf(stderr, "named: %s\n", e.c_str());
    return 1;
  }
  LabProcess lab;
  LabProcess::Options lo;
  lo.dir = dir;
  lo.seed_tables = a.n - 6;
  lo.server_threads = 2 * a.concurrency + 8;
  lo.replication_lag_ms = a.lag_ms;
  lo.workload_interval_ms = a.workload_ms;
  const auto seed_start = Steady::now();
  if (auto e = lab.Start(lo); !e.empty()) {
    std::fprintf(stderr, "lab: %s\n", e.c_str());
    return 1;
  }
  std::printf("lab seeded %d tables in %.1fs\n", a.n, Seconds(Steady::now() - seed_start));
  std::vector<TableIdent> tables;
  for (const auto wait_start = Steady::now();;) {
    json state = lab.State();
    int present = 0;
    tables.clear();
    if (state.is_object())
      for (const auto& t : state["tables"]) {
        tables.push_back(*TableIdent::Parse(t["table"].get<std::string>()));
        present += t["regions"][kEu].value("present", false);
      }
    if (present >= a.n && present == static_cast<int>(tables.size())) break;
    if (Steady::now() - wait_start > 30min) return 1;
    std::this_thread::sleep_for(2s);
  }

  const std::string c = std::to_string(a.concurrency);
  const std::string writes = lab.admin_url() + "/lab/regions/${from}/writes";
  RigOptions options;
  options.dir = dir;
  options.kind = FailoverKind::kSwitchover;
  options.env["DNS_TSIG_SECRET"] = BindProcess::kKeySecret;
  options.us_catalog_uri = lab.region_url(kUs);
  options.eu_catalog_uri = lab.region_url(kEu);
  options.runbook_yaml =
      "name: switchover-bench\n"
      "fence:\n"
      "  - id: pause-old-writers\n"
      "    action: fence.http\n"
      "    params: {url: '" +
      writes +
      "', method: POST, body: {paused: true}, expect_status: 200}\n"
      "    compensate: {action: http.request, params: {url: '" +
      writes +
      "', method: POST, body: {paused: false}, expect_status: 200}}\n"
      "  - id: old-catalog-quiet\n"
      "    action: fence.catalog_quiet\n"
      "    params: {region: '${from}', window: 1ms, concurrency: " +
      c +
      "}\n"
      "    timeout: 30m\n"
      "promote:\n"
      "  - id: demotion-token\n"
      "    action: switchover.demotion_token\n"
      "    params: {within: 10m, poll_interval: 100ms, concurrency: " +
      c +
      "}\n"
      "    timeout: 30m\n"
      "  - id: transfer-ownership\n"
      "    action: ownership.transfer\n"
      "    params: {concurrency: " +
      c +
      ", write_catalog_properties: true}\n"
      "    timeout: 60m\n"
      "  - id: point-writers\n"
      "    action: dns.rfc2136\n"
      "    params:\n"
      "      server: " +
      named.server() +
      "\n      zone: lake.bench.\n"
      "      tsig_key_name: " +
      BindProcess::kKeyName +
      "\n"
      "      tsig_algorithm: hmac-sha256\n      tsig_secret: '${env.DNS_TSIG_SECRET}'\n"
      "      records:\n"
      "        - {name: writer.lake.bench., type: CNAME, value: 'writer.${to}.lake.bench.', "
      "ttl: 30, op: replace}\n"
      "  - id: resume-writers\n"
      "    action: http.request\n"
      "    params: {url: '" +
      writes +
      "', method: POST, body: {paused: false}, expect_status: 200}\n"
      "";

  ActionRegistry registry;
  FailoverRig rig(options, registry);
  if (auto e = rig.Prepare([&](const std::string& r) { return lab.region_url(r); }, tables);
      !e.empty()) {
    std::fprintf(stderr, "%s\n", e.c_str());
    return 1;
  }
  if (lab.Admin("POST", std::string("/lab/regions/") + kEu + "/faults",
                json{{"commit_latency_ms", a.latency_ms}})
          .first != 200)
    return 1;

  // The DNS term of the floor: the step's action alone, as the executor runs it.
  json dns = {{"server", named.server()},
              {"zone", "lake.bench."},
              {"tsig_key_name", BindProcess::kKeyName},
              {"tsig_algorithm", "hmac-sha256"},
              {"tsig_secret", BindProcess::kKeySecret},
              {"records",
               {{{"name", "probe.lake.bench."},
                 {"type", "CNAME"},
                 {"value", "writer.eu-central-1.lake.bench."},
                 {"ttl", 30},
                 {"op", "replace"}}}}};
  std::vector<double> dns_runs;
  for (int i = 0; i < 5; ++i) {
    Action* act = registry.FindMutable("dns.rfc2136");
    ActionContext x;
    x.failover_id = "fo-floor";
    x.step_id = "dns-" + std::to_string(i);
    x.idempotency_key = "fo-floor/" + x.step_id;
    x.deadline = Steady::now() + 30s;
    const auto s0 = Steady::now();
    auto before = act->Capture(dns, x);
    if (!before.ok()) return 1;
    x.before_json = *before;
    if (!act->Run(dns, x).ok()) return 1;
    dns_runs.push_back(Seconds(Steady::now() - s0));
  }
  std::sort(dns_runs.begin(), dns_runs.end());

  const std::string id = rig.Propose();
  if (id.empty()) return 1;
  const std::string hash = rig.PlanHashOf(id);
  const long long log_start = lab.Admin("GET", "/lab/commits?since=0").second.value("total", 0);
  const auto t0 = Steady::now();
  const auto t0_unix = std::chrono::duration_cast<std::chrono::milliseconds>(
                           std::chrono::system_clock::now().time_since_epoch())
                           .count();
  if (auto e = rig.Approve(id, hash); !e.empty()) {
    std::fprintf(stderr, "approve: %s\n", e.c_str());
    return 1;
  }
  auto done = rig.WaitForDrive(id, FailoverPhase::kCompleted, 60min);
  if (!done) {
    std::fprintf(stderr, "the switchover did not complete; see %s\n", dir.c_str());
    return 1;
  }
  const double wall = Seconds(*done - t0);
  std::this_thread::sleep_for(std::chrono::milliseconds(3 * a.workload_ms + a.lag_ms));
  lab.Admin("POST", "/lab/workload", json{{"enabled", false}});

  // Every workload commit in the old owner must be in the new owner.
  json log = lab.Admin("GET", "/lab/commits").second;
  std::map<std::string, std::set<long long>> in_eu;
  int made = 0, during = 0, lost = 0, old_owner = 0;
  for (const json& e : log.value("commits", json::array())) {
    ++made;
    during += e.value("index", 0LL) >= log_start;
    const std::string table = e["table"];
    if (e["region"] != kUs) continue;
    ++old_owner;
    if (!in_eu.count(table)) in_eu[table] = SnapshotIds(lab.region_url(kEu), table);
    if (!in_eu[table].count(e["snapshot_id"].get<long long>())) ++lost;
  }

  auto steps = rig.store().ListSteps(id);
  std::printf("steps (journal):\n");
  if (steps.ok())
    for (const StepRecord& s : *steps)
      std::printf("  %-8s %-20s %-26s %-9s +%6.3fs %7.3fs  %s\n", s.section.c_str(),
                  s.step_id.c_str(), s.action.c_str(), StepStateName(s.state),
                  (s.started_at - t0_unix) / 1000.0, (s.finished_at - s.started_at) / 1000.0,
                  s.reason.c_str());
  if (steps.ok())
    for (const StepRecord& s : *steps)
      if (s.action == "switchover.demotion_token") {
        json d = json::parse(s.result_json, nullptr, false);
        if (d.is_object()) d = d.value("detail", json::object());
        if (d.is_object())
          std::printf("  demotion token: waited %lldms in %d rounds after the capture\n",
                      d.value("waited_ms", 0LL), d.value("rounds", 0));
      }
  const double transfer_floor =
      std::ceil(static_cast<double>(tables.size()) / a.concurrency) * a.latency_ms / 1e3;
  const double floor_s = a.lag_ms / 1e3 + transfer_floor + dns_runs[2];
  std::printf("tables=%zu latency=%dms concurrency=%d replication_lag=%dms workload every %dms\n",
              tables.size(), a.latency_ms, a.concurrency, a.lag_ms, a.workload_ms);
  std::printf("floor terms: lag=%.3fs ceil(N/C)xL=%.3fs dns.rfc2136=%.3fms\n", a.lag_ms / 1e3,
              transfer_floor, 1e3 * dns_runs[2]);
  std::printf("switchover approval->completed=%.2fs floor=%.2fs ratio=%.2fx (goal <= 1.2x)\n", wall,
              floor_s, wall / floor_s);
  std::printf(
      "workload commits: %d in all, %d during the switchover, %d in the old owner; lost: %d "
      "(goal 0)\n",
      made, during, old_owner, lost);
  return lost == 0 ? 0 : 1;
}

}  // namespace
}  // namespace icewarden::bench

int main(int argc, char** argv) {
  icewarden::bench::Args a;
  std::vector<int> pos;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--lag-ms") && i + 1 < argc)
      a.lag_ms = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--workload-ms") && i + 1 < argc)
      a.workload_ms = std::atoi(argv[++i]);
    else
      pos.push_back(std::atoi(argv[i]));
  }
  if (pos.size() > 0) a.n = pos[0];
  if (pos.size() > 1) a.latency_ms = pos[1];
  if (pos.size() > 2) a.concurrency = pos[2];
  if (a.n < 6 || a.latency_ms < 1 || a.concurrency < 1 || a.concurrency > 256 || a.lag_ms < 0 ||
      a.workload_ms < 1) {
    std::fprintf(stderr,
                 "usage: switchover_bench [N>=6] [latency_ms] [concurrency] [--lag-ms R] "
                 "[--workload-ms W]\n");
    return 2;
  }
  const std::string dir = icewarden::bench::MakeBenchDir("switchover-bench");
  const int rc = icewarden::bench::RunIn(dir, a);
  if (rc == 0)
    std::filesystem::remove_all(dir);
  else
    std::fprintf(stderr, "left %s\n", dir.c_str());
  return rc;
}
