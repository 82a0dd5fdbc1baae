// Machine RTO: approval -> `completed` of a failover of N lab tables, with commit latency L in the
// new owner, next to its floor. Three processes:
//   lab        build/examples/lab/icewarden-lab (two regions; us-east-1 owns every table,
//              eu-central-1 holds replicas, no workload; replication paused once caught up;
//              `faults` commit_latency_ms = L on eu-central-1)
//   named      BIND 9 (/usr/sbin/named) serving zone lake.bench, RFC 2136 updates with TSIG
//   this one   the real FailoverService + FailoverRunner + registerBuiltinActions over a durable
//              SQLite store in $TMPDIR (tests/bench/bench_failover_rig.h), a caught-up lag report
// Runbook:
//   fence    fence.catalog_quiet on us-east-1, window 1ms (the smallest it accepts; it still
//            loads every table twice), or with --fence operator no fence step and an operator's
//            confirmation, sent as soon as the failover waits for it (that wait is subtracted)
//   promote  ownership.transfer (concurrency C, batch B, markers written) then dns.rfc2136
//   verify   verify.dns then verify.catalog_healthy
// Floor = one pass of the fence over the scope (every table loaded once from the old owner,
// snapshots=refs, C in flight; median of 3; none with --fence operator) + ceil(N / C) x L + the
// DNS step's own round trips (its Capture and its update) + the verify steps' own round trips,
// each measured alone (median of 5) in the same run before the failover. Goal: RTO <= 1.2 x floor.
// Also icewarden's CPU per table moved: getrusage of this process over the failover (the lab and
// named are other processes; goal <= 100 us), and the lab's CPU beside it.
//
//   ./build/tests/bench/failover_rto_bench [N=10000] [latency_ms=20] [concurrency=64]
//                                          [--batch 500] [--fence quiet|operator]
#include <utility>  // before Asio (Boost 1.74 + C++20)

#include <sys/resource.h>
#include <unistd.h>

#include <boost/asio/ssl/context.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "actions/action.h"
#include "actions/catalog_load.h"
#include "actions/catalog_session.h"
#include "health/catalog_client.h"
#include "state/json_text.h"
#include "tests/bench/bench_failover_rig.h"
#include "tests/bench/bench_processes.h"

namespace icewarden::bench {
namespace {

using Steady = std::chrono::steady_clock;
using namespace std::chrono_literals;
using nlohmann::json;

double Seconds(Steady::duration d) { return std::chrono::duration<double>(d).count(); }

constexpr const char* kZone = "lake.bench.";

// Median seconds of `reps` calls of `f` (each must return true).
std::optional<double> MedianSeconds(int reps, const std::function<bool()>& f) {
  std::vector<double> t;
  for (int i = 0; i < reps; ++i) {
    auto start = Steady::now();
    if (!f()) return std::nullopt;
    t.push_back(Seconds(Steady::now() - start));
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

int RunIn(const std::string& dir, int n, int latency_ms, int concurrency, int batch,
          bool operator_fence) {
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
  lo.seed_tables = n - 6;
  lo.server_threads = 2 * concurrency + 8;
  auto seed_start = Steady::now();
  if (auto e = lab.Start(lo); !e.empty()) {
    std::fprintf(stderr, "lab: %s\n", e.c_str());
    return 1;
  }
  std::printf("lab (pid %d) seeded %d tables in %.1fs; named on %s\n", lab.pid(), n,
              Seconds(Steady::now() - seed_start), named.server().c_str());

  auto repl_start = Steady::now();
  std::vector<TableIdent> tables;
  for (;;) {
    json state = lab.State();
    int present = 0;
    tables.clear();
    if (state.is_object())
      for (const auto& t : state["tables"]) {
        tables.push_back(*TableIdent::Parse(t["table"].get<std::string>()));
        const auto& r = t["regions"][kEu];
        if (r.value("present", false) && r.value("pending_commits", 1) == 0) ++present;
      }
    if (present == static_cast<int>(tables.size()) && present >= n) break;
    if (Steady::now() - repl_start > 30min) {
      std::fprintf(stderr, "replication did not catch up: %d of %zu\n", present, tables.size());
      return 1;
    }
    std::this_thread::sleep_for(2s);
  }
  if (lab.Admin("POST", "/lab/replication/pause").first != 200) return 1;
  std::printf("replicated to %s in %.1fs\n", kEu, Seconds(Steady::now() - repl_start));

  const std::string c = std::to_string(concurrency);
  const std::string fence_yaml =
      operator_fence ? ""
                     : "fence:\n"
                       "  - id: old-catalog-quiet\n"
                       "    action: fence.catalog_quiet\n"
                       "    params: {region: '${from}', window: 1ms, concurrency: " +
                           c + "}\n    timeout: 30m\n";
  const std::string dns_params =
      "      server: " + named.server() + "\n      zone: " + kZone +
      "\n      tsig_key_name: " + BindProcess::kKeyName +
      "\n      tsig_algorithm: hmac-sha256\n      tsig_secret: '${env.DNS_TSIG_SECRET}'\n";
  RigOptions options;
  options.dir = dir;
  options.env["DNS_TSIG_SECRET"] = BindProcess::kKeySecret;
  options.us_catalog_uri = lab.region_url(kUs);
  options.eu_catalog_uri = lab.region_url(kEu);
  if (operator_fence) options.fencing_evidence = {"operator"};
  options.runbook_yaml = "name: failover-rto-bench\n" + fence_yaml +
                         "promote:\n"
                         "  - id: transfer-ownership\n"
                         "    action: ownership.transfer\n"
                         "    params: {concurrency: " +
                         c + ", batch_size: " + std::to_string(batch) +
                         ", write_catalog_properties: true}\n"
                         "    timeout: 60m\n"
                         "  - id: point-writers\n"
                         "    action: dns.rfc2136\n"
                         "    params:\n" +
                         dns_params +
                         "      records:\n"
                         "        - {name: writer.lake.bench., type: CNAME, value: "
                         "'writer.${to}.lake.bench.', ttl: 30, op: replace}\n"
                         "verify:\n"
                         "  - id: writer-resolves\n"
                         "    action: verify.dns\n"
                         "    params: {server: '" +
                         named.server() +
                         "', name: writer.lake.bench., type: CNAME, expect: "
                         "'writer.${to}.lake.bench.'}\n"
                         "  - id: catalog-healthy\n"
                         "    action: verify.catalog_healthy\n"
                         "    params: {region: '${to}'}\n";

  ActionRegistry registry;
  FailoverRig rig(options, registry);
  if (auto e = rig.Prepare([&](const std::string& r) { return lab.region_url(r); }, tables);
      !e.empty()) {
    std::fprintf(stderr, "%s\n", e.c_str());
    return 1;
  }
  if (lab.Admin("POST", std::string("/lab/regions/") + kEu + "/faults",
                json{{"commit_latency_ms", latency_ms}})
          .first != 200)
    return 1;

  // The floor's other terms, each step's action alone, as the executor runs it.
  ActionContext ctx;
  ctx.failover_id = "fo-floor";
  ctx.from = kUs;
  ctx.to = kEu;
  ctx.scope = std::string("owner:") + kUs;
  auto run_action = [&](const char* kind, const json& params, bool capture) {
    Action* a = registry.FindMutable(kind);
    ActionContext x = ctx;
    x.step_id = kind;
    x.idempotency_key = "fo-floor/" + std::string(kind);
    x.deadline = Steady::now() + 30s;
    if (capture) {
      auto before = a->Capture(params, x);
      if (!before.ok()) return false;
      x.before_json = *before;
    }
    ActionResult r = a->Run(params, x);
    if (!r.ok()) std::fprintf(stderr, "%s: %s\n", kind, r.reason.c_str());
    return r.ok();
  };
  json dns = {{"server", named.server()},
              {"zone", kZone},
              {"tsig_key_name", BindProcess::kKeyName},
              {"tsig_algorithm", "hmac-sha256"},
              {"tsig_secret", BindProcess::kKeySecret},
              {"records",
               {{{"name", "probe.lake.bench."},
                 {"type", "CNAME"},
                 {"value", "writer.eu-central-1.lake.bench."},
                 {"ttl", 30},
                 {"op", "replace"}}}}};
  json vdns = {{"server", named.server()},
               {"name", "probe.lake.bench."},
               {"type", "CNAME"},
               {"expect", "writer.eu-central-1.lake.bench."}};
  json vcat = {{"region", kEu}};
  auto dns_s = MedianSeconds(5, [&] { return run_action("dns.rfc2136", dns, true); });
  auto vdns_s = MedianSeconds(5, [&] { return run_action("verify.dns", vdns, false); });
  auto vcat_s = MedianSeconds(5, [&] { return run_action("verify.catalog_healthy", vcat, false); });
  if (!dns_s || !vdns_s || !vcat_s) return 1;
  // What a catalog action pays before its first request (a session: io_context, Beast
  // transport with its TLS context, no connection yet).
  auto session_s = MedianSeconds(5, [&] {
    CatalogSession session(rig.action_env());
    return true;
  });
  // The part of it that a TLS client context with the system's CA store costs.
  auto tls_s = MedianSeconds(5, [&] {
    boost::asio::ssl::context ssl(boost::asio::ssl::context::tls_client);
    boost::system::error_code ec;
    ssl.set_default_verify_paths(ec);
    return !ec;
  });

  // One pass of the fence: what any evidence of quiet must pay once, since it has to see every
  // table of the scope in the old owner at least once.
  double fence_pass_s = 0;
  if (!operator_fence) {
    auto pass = MedianSeconds(3, [&] {
      CatalogSession session(rig.action_env());
      auto client = session.Client(kUs);
      if (!client.ok()) return false;
      ActionContext x = ctx;
      x.failover_id = "";
      x.deadline = Steady::now() + 10min;
      auto answers = LoadTablesSeen(session, nullptr, kUs, **client, tables, concurrency, x);
      return std::all_of(answers.begin(), answers.end(),
                         [](const auto& a) { return a && a->ok(); });
    });
    if (!pass) return 1;
    fence_pass_s = *pass;
  }

  const std::string id = rig.Propose();
  if (id.empty()) return 1;
  const std::string hash = rig.PlanHashOf(id);
  sync();  // the setup's writes (seeding, claims) are not the failover's to flush

  const double cpu0 = bench::SelfCpuSeconds(), sys0 = bench::SelfCpuSeconds(true),
               lab_cpu0 = lab.CpuSeconds(), named_cpu0 = named.CpuSeconds();
  const auto t0 = Steady::now();
  if (auto e = rig.Approve(id, hash); !e.empty()) {
    std::fprintf(stderr, "approve: %s\n", e.c_str());
    return 1;
  }
  double people_s = 0;
  if (operator_fence) {
    auto waiting = rig.WaitForDrive(id, FailoverPhase::kFencing, 10min);
    if (!waiting) return 1;
    // The person's part ends when the confirmation is sent; recording it is icewarden's.
    people_s = Seconds(Steady::now() - *waiting);
    if (auto e = rig.ConfirmFencing(id); !e.empty()) {
      std::fprintf(stderr, "confirm: %s\n", e.c_str());
      return 1;
    }
  }
  auto done = rig.WaitForDrive(id, FailoverPhase::kCompleted, 60min);
  const double cpu = bench::SelfCpuSeconds() - cpu0, sys = bench::SelfCpuSeconds(true) - sys0;
  const double lab_cpu = lab.CpuSeconds() - lab_cpu0;
  const double named_cpu = named.CpuSeconds() - named_cpu0;
  if (!done) return 1;
  const double rto = Seconds(*done - t0) - people_s;

  // The steps as the journal saw them (ms resolution).
  auto steps = rig.store().ListSteps(id);
  double steps_s = 0;
  int moved = 0;
  std::printf("steps (journal):\n");
  if (steps.ok())
    for (const StepRecord& s : *steps) {
      const double d = (s.finished_at - s.started_at) / 1000.0;
      steps_s += d;
      std::printf("  %-8s %-20s %-22s %-9s %7.3fs  %s\n", s.section.c_str(), s.step_id.c_str(),
                  s.action.c_str(), StepStateName(s.state), d, s.reason.substr(0, 100).c_str());
      if (s.action == "ownership.transfer") {
        json r = json::parse(s.result_json, nullptr, false);
        if (r.is_object() && r["detail"].is_object()) moved = r["detail"].value("moved", 0);
      }
    }
  const int total = static_cast<int>(tables.size());
  const double transfer_floor =
      std::ceil(static_cast<double>(total) / concurrency) * latency_ms / 1e3;
  const double floor_s = fence_pass_s + transfer_floor + *dns_s + *vdns_s + *vcat_s;
  std::printf("tables=%d moved=%d latency=%dms concurrency=%d batch=%d fence=%s\n", total, moved,
              latency_ms, concurrency, batch, operator_fence ? "operator" : "catalog_quiet 1ms");
  std::printf(
      "floor terms: one fence pass=%.3fs transfer ceil(N/C)xL=%.3fs dns.rfc2136 "
      "(capture+update)=%.3fms verify.dns=%.3fms verify.catalog_healthy=%.3fms\n",
      fence_pass_s, transfer_floor, 1e3 * *dns_s, 1e3 * *vdns_s, 1e3 * *vcat_s);
  std::printf(
      "of which a CatalogSession's construction alone (every catalog step pays it): %.3fms; "
      "an asio::ssl::context with set_default_verify_paths alone: %.3fms\n",
      1e3 * *session_s, tls_s ? 1e3 * *tls_s : -1.0);
  if (operator_fence)
    std::printf("waiting for the operator (subtracted): %.3fms\n", 1e3 * people_s);
  std::printf("RTO approval->completed=%.2fs floor=%.2fs ratio=%.2fx (goal <= 1.2x)\n", rto,
              floor_s, rto / floor_s);
  std::printf("between steps (RTO - journaled step time)=%.3fs\n", rto - steps_s);
  std::printf(
      "icewarden cpu=%.2fs = %.1f us per table moved (goal <= 100 us; of it in the kernel "
      "%.2fs = %.1f us per table); lab cpu=%.2fs (%.1f us/table); named cpu=%.3fs\n",
      cpu, 1e6 * cpu / std::max(1, moved), sys, 1e6 * sys / std::max(1, moved), lab_cpu,
      1e6 * lab_cpu / std::max(1, moved), named_cpu);
  return moved == total ? 0 : 1;  // the rig (its runner) stops first, then the lab and named
}

// The folder stays for a look when the run failed.
int Run(int n, int latency_ms, int concurrency, int batch, bool operator_fence) {
  const std::string dir = MakeBenchDir("failover-rto-bench");
  int rc = RunIn(dir, n, latency_ms, concurrency, batch, operator_fence);
  if (rc == 0)
    std::filesystem::remove_all(dir);
  else
    std::fprintf(stderr, "left %s\n", dir.c_str());
  return rc;
}

}  // namespace
}  // namespace icewarden::bench

int main(int argc, char** argv) {
  std::vector<int> pos;
  int batch = 500;
  bool operator_fence = false;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--batch") && i + 1 < argc) {
      batch = std::atoi(argv[++i]);
    } else if (!std::strcmp(argv[i], "--fence") && i + 1 < argc) {
      operator_fence = std::strcmp(argv[++i], "operator") == 0;
    } else {
      pos.push_back(std::atoi(argv[i]));
    }
  }
  int n = pos.size() > 0 ? pos[0] : 10'000;
  int latency = pos.size() > 1 ? pos[1] : 20;
  int concurrency = pos.size() > 2 ? pos[2] : 64;
  if (n < 6 || latency < 1 || concurrency < 1 || concurrency > 256 || batch < 1) {
    std::fprintf(stderr,
                 "usage: failover_rto_bench [N>=6] [latency_ms] [concurrency] [--batch B] "
                 "[--fence quiet|operator]\n");
    return 2;
  }
  return icewarden::bench::Run(n, latency, concurrency, batch, operator_fence);
}
