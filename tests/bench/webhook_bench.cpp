// Webhook ingestion: wrk posting the real Alertmanager 0.25 firing payload
// (tests/compat/alertmanager/am-0.25-firing.json) over loopback to `icewarden serve`'s
// POST /api/v1/webhooks/alertmanager, side by side in one run with a minimal server (the same
// Beast HttpServer, one thread like serve, answering the same route 200 without looking at
// the body). Requests/s and p99 of each; goal serve ≥ 0.5× the minimal server's rate and
// p99 ≤ 5 ms. Afterwards dedup must be exact: one proposal by webhook:alertmanager and one
// webhook.delivery audit event, however many times the payload was delivered.
//
// The two servers take turns, `--rounds` times, and each round's ratio is reported; the
// verdict is on the median. On a machine with two or more CPUs wrk runs on CPU 0 and the
// servers (and everything this process starts) on the last one, so that neither server
// shares its core with the load generator: unpinned, the minimal server's rate swung by a
// third from run to run on a 2-core machine.
//
//   build/tests/bench/webhook_bench [--duration-s 10] [--connections 8] [--rounds 3]
//
// Needs wrk (Debian package `wrk`: apt-get install -y wrk) and the icewarden-lab executable.
#include <utility>  // before Asio: Boost 1.74 + GCC 12

#include <httplib.h>

#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <thread>

#include "orchestrator/api/http_server.h"
#include "tests/bench/bench_processes.h"

namespace {

using icewarden::bench::LabProcess;
using nlohmann::json;

constexpr const char* kToken = "bench-webhook-token";
constexpr const char* kAdmin = "bench-admin-token";

struct WrkFigures {
  double rps = 0;
  double p99_ms = -1;
  std::string raw;
};

double ToMs(const std::string& value, const std::string& unit) {
  const double v = std::stod(value);
  if (unit == "us") return v / 1000;
  if (unit == "s") return v * 1000;
  return v;
}

// Set by main: "taskset -c 0 " when wrk and the servers get a CPU each.
std::string wrk_prefix;

WrkFigures RunWrk(const std::string& url, const std::string& script, int seconds, int conns) {
  const std::string cmd = wrk_prefix + "wrk -t1 -c" + std::to_string(conns) + " -d" +
                          std::to_string(seconds) + "s --latency -s " + script + " " + url +
                          " 2>&1";
  WrkFigures f;
  FILE* p = popen(cmd.c_str(), "r");
  if (p == nullptr) return f;
  char buf[4096];
  while (fgets(buf, sizeof buf, p) != nullptr) f.raw += buf;
  pclose(p);
  std::smatch m;
  if (std::regex_search(f.raw, m, std::regex(R"(Requests/sec:\s+([0-9.]+))")))
    f.rps = std::stod(m[1]);
  if (std::regex_search(f.raw, m, std::regex(R"(99%\s+([0-9.]+)(us|ms|s))")))
    f.p99_ms = ToMs(m[1], m[2]);
  return f;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

int main(int argc, char** argv) {
  int seconds = 10, conns = 8, rounds = 3;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i];
    if (a == "--duration-s") seconds = std::stoi(argv[i + 1]);
    if (a == "--connections") conns = std::stoi(argv[i + 1]);
    if (a == "--rounds") rounds = std::max(1, std::stoi(argv[i + 1]));
  }
  if (std::system("command -v wrk >/dev/null") != 0) {
    std::cerr << "webhook_bench needs wrk: apt-get install -y wrk\n";
    return 2;
  }
  // Before any thread or child exists, so that all of them inherit the servers' CPU.
  const long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  std::string pinning = "not pinned (one CPU)";
  if (cpus >= 2 && std::system("command -v taskset >/dev/null") == 0) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(static_cast<int>(cpus - 1), &set);
    if (sched_setaffinity(0, sizeof set, &set) == 0) {
      wrk_prefix = "taskset -c 0 ";
      pinning = "wrk on CPU 0, servers on CPU " + std::to_string(cpus - 1);
    }
  }
  char dir_template[] = "/tmp/webhook-bench-XXXXXX";
  if (mkdtemp(dir_template) == nullptr) return 1;
  const std::string dir = dir_template;
  const std::string payload_path =
      std::string(ICEWARDEN_SOURCE_DIR) + "/tests/compat/alertmanager/am-0.25-firing.json";
  if (ReadFile(payload_path).empty()) {
    std::cerr << "cannot read " << payload_path << "\n";
    return 1;
  }
  LabProcess lab;
  LabProcess::Options lo;
  lo.dir = dir;
  if (auto e = lab.Start(lo); !e.empty()) {
    std::cerr << e << "\n";
    return 1;
  }
  // Never run (nobody approves); it only has to validate, so one harmless promote step.
  std::ofstream(dir + "/runbook.yaml") << "name: bench\nfence: []\npromote:\n  - {id: settle, "
                                          "action: wait, params: {duration: 1s}}\n"
                                       << "verify: []\n";
  std::ofstream(dir + "/icewarden.yaml")
      << "api:\n  listen: 127.0.0.1:0\n  tokens:\n"
      << "    - {name: admin, role: admin, token_env: BENCH_ADMIN_TOKEN}\n"
      << "state: {path: state.db}\n"
      << "regions:\n"
      << "  - {name: us-east-1, catalog_uri: " << lab.region_url("us-east-1") << "}\n"
      << "  - {name: eu-central-1, catalog_uri: " << lab.region_url("eu-central-1") << "}\n"
      << "ownership: {default_owner: us-east-1}\n"
      << "policies: {probe: {interval: 250ms, timeout: 200ms}}\n"
      << "failovers:\n"
      << "  - {name: us-to-eu, from: us-east-1, to: eu-central-1, runbook: runbook.yaml}\n"
      << "webhooks:\n"
      << "  alertmanager:\n    - {name: bench, token_env: BENCH_WEBHOOK_TOKEN}\n"
      << "  rules:\n"
      << "    - {name: down, match: {alertname: IcebergCatalogDown}, effect: propose_failover,"
      << " route: us-to-eu}\n";
  setenv("BENCH_ADMIN_TOKEN", kAdmin, 1);
  setenv("BENCH_WEBHOOK_TOKEN", kToken, 1);
  icewarden::bench::ChildProcess serve;
  if (!serve.Start({ICEWARDEN_BINARY, "serve", "--config", dir + "/icewarden.yaml"},
                   dir + "/serve.log")) {
    std::cerr << "cannot start icewarden serve\n";
    return 1;
  }
  auto line = serve.ReadLine(std::chrono::seconds(30));
  if (!line || line->find("http://") == std::string::npos) {
    std::cerr << "serve did not start; see " << dir << "/serve.log\n";
    return 1;
  }
  std::string serve_url = line->substr(line->find("http://"));
  serve_url = serve_url.substr(0, serve_url.find(' '));
  // The guards want a healthy target: give the probes their rise rounds.
  httplib::Client api(serve_url);
  httplib::Headers admin{{"Authorization", std::string("Bearer ") + kAdmin}};
  for (int i = 0; i < 100; ++i) {
    auto r = api.Get("/api/v1/regions", admin);
    bool healthy = r && r->status == 200;
    if (healthy) {
      const json regions = json::parse(r->body);  // a local: range-for over a temporary dangles
      for (const auto& region : regions["regions"])
        healthy = healthy && region["health"] == "healthy";
    }
    if (healthy) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }

  // The minimal server: same route, 200, nothing else.
  icewarden::HttpServerOptions mo;
  mo.handle_signals = false;
  icewarden::HttpServer minimal(mo, [](const icewarden::ApiRequest&) {
    icewarden::ApiResponse res;
    res.body = "{}";
    return res;
  });
  if (!minimal.Listen().ok()) return 1;
  std::thread minimal_thread([&] { minimal.Run(); });
  const std::string minimal_url = "http://127.0.0.1:" + std::to_string(minimal.port());

  const std::string script = dir + "/post.lua";
  std::ofstream(script) << "wrk.method = \"POST\"\n"
                        << "wrk.headers[\"Content-Type\"] = \"application/json\"\n"
                        << "wrk.headers[\"Authorization\"] = \"Bearer " << kToken << "\"\n"
                        << "local f = io.open(\"" << payload_path << "\", \"rb\")\n"
                        << "wrk.body = f:read(\"*a\")\nf:close()\n";
  const std::string route = "/api/v1/webhooks/alertmanager";
  std::vector<std::pair<WrkFigures, WrkFigures>> runs;  // (minimal, serve) per round
  for (int r = 0; r < rounds; ++r)
    runs.emplace_back(RunWrk(minimal_url + route, script, seconds, conns),
                      RunWrk(serve_url + route, script, seconds, conns));
  minimal.Stop();
  minimal_thread.join();

  auto failovers = api.Get("/api/v1/failovers?limit=1000", admin);
  auto audit = api.Get("/api/v1/audit?limit=1000", admin);
  int proposals = 0, deliveries = 0;
  if (failovers && failovers->status == 200) {
    const json list = json::parse(failovers->body);
    for (const auto& f : list["failovers"])
      if (f["proposed_by"] == "webhook:alertmanager") ++proposals;
  } else {
    std::cerr << "GET /api/v1/failovers failed\n";
  }
  if (audit && audit->status == 200) {
    const json events = json::parse(audit->body);
    for (const auto& e : events["events"])
      if (e["action"] == "webhook.delivery") ++deliveries;
  } else {
    std::cerr << "GET /api/v1/audit failed\n";
  }
  serve.Stop();
  lab.Stop();

  std::printf("wrk -t1 -c%d -d%ds, %d rounds, %s, payload %s\n", conns, seconds, rounds,
              pinning.c_str(), payload_path.c_str());
  std::printf("%-6s %-28s %12s %10s %7s\n", "round", "server", "requests/s", "p99 ms", "ratio");
  std::vector<double> ratios;
  double worst_p99 = 0;
  bool measured = true;
  for (size_t r = 0; r < runs.size(); ++r) {
    const auto& [base, ice] = runs[r];
    const double ratio = base.rps > 0 ? ice.rps / base.rps : 0;
    ratios.push_back(ratio);
    worst_p99 = std::max(worst_p99, ice.p99_ms);
    measured = measured && base.rps > 0 && ice.rps > 0 && ice.p99_ms >= 0;
    std::printf("%-6zu %-28s %12.0f %10.2f\n", r + 1, "minimal Beast server (200)", base.rps,
                base.p99_ms);
    std::printf("%-6zu %-28s %12.0f %10.2f %7.2f\n", r + 1, "icewarden serve webhook", ice.rps,
                ice.p99_ms, ratio);
    if (base.rps == 0 || ice.rps == 0) std::cerr << base.raw << ice.raw;
  }
  std::vector<double> sorted = ratios;
  std::sort(sorted.begin(), sorted.end());
  const double ratio = sorted[sorted.size() / 2];
  std::printf(
      "median ratio %.2f (min %.2f, max %.2f; goal >= 0.5), worst p99 %.2f ms (goal <= 5)\n", ratio,
      sorted.front(), sorted.back(), worst_p99);
  std::printf(
      "dedup: %d proposal(s) by webhook:alertmanager, %d webhook.delivery audit event(s) "
      "(both must be 1)\n",
      proposals, deliveries);
  const bool ok = measured && ratio >= 0.5 && worst_p99 <= 5 && proposals == 1 && deliveries == 1;
  return ok ? 0 : 1;
}
