// The dashboard with 100,000 tables in the store: time to first render of the overview and of
// ownership pages, the event stream's delivery latency from a phase change to the page, and
// what 20 connected browsers add to the daemon's CPU and memory.
//
// Seeds a SQLite store with N tables (80% owned by us-east-1, 20% by eu-central-1, in 1,000
// namespaces), writes a config with one failover route and two regions whose catalogs refuse
// connections (probes fail fast; nothing here needs a catalog), starts the real `icewarden
// serve`, and runs tests/bench/dashboard_bench.mjs: Playwright driving Debian's chromium
// (playwright-core from tests/ui/node_modules, installed by scripts/setup.sh). Phase changes
// are proposals and aborts through the API, each audited, each an event on the stream.
//
// Usage: dashboard_bench [--tables N=100000] [--browsers B=20] [--changes C=40]
//                        [--renders R=10]
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "state/sqlite_store.h"
#include "tests/bench/bench_processes.h"

namespace {

using namespace icewarden;

int Flag(int argc, char** argv, const char* name, int fallback) {
  for (int i = 1; i + 1 < argc; ++i)
    if (std::strcmp(argv[i], name) == 0) return std::atoi(argv[i + 1]);
  return fallback;
}

bool Seed(const std::string& path, int tables) {
  auto store = OpenSqliteStore({path}, SystemClock());
  if (!store.ok()) {
    std::cerr << store.status().ToString() << '\n';
    return false;
  }
  std::vector<OwnershipChange> batch;
  for (int i = 0; i < tables; ++i) {
    char ns[16], name[16];
    std::snprintf(ns, sizeof ns, "ns%03d", i % 1000);
    std::snprintf(name, sizeof name, "t%06d", i);
    batch.push_back({TableIdent{{ns}, name}, 0, i % 5 == 4 ? "eu-central-1" : "us-east-1", ""});
    if (batch.size() == 5000 || i + 1 == tables) {
      Status s = (*store)->CompareAndSetOwnership(
          batch, {0, 0, "bench", "bench", "ownership.seed", "", "seed", "{}"});
      if (!s.ok()) {
        std::cerr << s.ToString() << '\n';
        return false;
      }
      batch.clear();
    }
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  const int tables = Flag(argc, argv, "--tables", 100000);
  char tmpl[] = "/tmp/icewarden-dashboard-bench-XXXXXX";
  const std::string dir = mkdtemp(tmpl);
  if (!Seed(dir + "/state.db", tables)) return 1;
  std::ofstream(dir + "/operator.token") << "bench-operator-token\n";
  std::ofstream(dir + "/viewer.token") << "bench-viewer-token\n";
  std::ofstream cfg(dir + "/icewarden.yaml");
  cfg << "api:\n  listen: 127.0.0.1:0\n  tokens:\n"
      << "    - {name: operator, role: operator, token_file: operator.token}\n"
      << "    - {name: viewer, role: viewer, token_file: viewer.token}\n"
      << "state:\n  path: state.db\nregions:\n"
      << "  - {name: us-east-1, catalog_uri: \"http://127.0.0.1:9/us\"}\n"
      << "  - {name: eu-central-1, catalog_uri: \"http://127.0.0.1:9/eu\"}\n"
      << "ownership:\n  default_owner: us-east-1\n"
      << "failovers:\n  - name: us-east-1-to-eu-central-1\n    kind: failover\n"
      << "    from: us-east-1\n    to: eu-central-1\n    scope: \"*\"\n"
      << "    runbook: " << ICEWARDEN_SOURCE_DIR << "/examples/runbooks/lab-failover.yaml\n"
      << "    params: {dns_server: \"127.0.0.1:9\", zone: \"lake.lab.\", "
         "alertmanager_url: \"http://127.0.0.1:9\"}\n";
  cfg.close();

  setenv("DNS_TSIG_SECRET", "c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0", 1);
  bench::ChildProcess serve;
  if (!serve.Start({ICEWARDEN_BINARY, "serve", "--config", dir + "/icewarden.yaml"},
                   dir + "/serve.log")) {
    std::cerr << "cannot start serve\n";
    return 1;
  }
  const std::string line = serve.ReadLine(std::chrono::seconds(60)).value_or("");
  const auto at = line.find("http://");
  if (at == std::string::npos) {
    std::cerr << "serve did not start: " << line << '\n';
    return 1;
  }
  const std::string url = line.substr(at, line.find(' ', at) - at);

  const std::string script = std::string(ICEWARDEN_SOURCE_DIR) + "/tests/bench/dashboard_bench.mjs";
  const pid_t node = fork();
  if (node == 0) {
    setenv("ICEWARDEN_URL", url.c_str(), 1);
    setenv("SERVE_PID", std::to_string(serve.pid()).c_str(), 1);
    setenv("OPERATOR_TOKEN", "bench-operator-token", 1);
    setenv("VIEWER_TOKEN", "bench-viewer-token", 1);
    setenv("TABLES", std::to_string(tables).c_str(), 1);
    setenv("BROWSERS", std::to_string(Flag(argc, argv, "--browsers", 20)).c_str(), 1);
    setenv("CHANGES", std::to_string(Flag(argc, argv, "--changes", 40)).c_str(), 1);
    setenv("RENDERS", std::to_string(Flag(argc, argv, "--renders", 10)).c_str(), 1);
    setenv("UI_MODULES", (std::string(ICEWARDEN_SOURCE_DIR) + "/tests/ui").c_str(), 1);
    execlp("node", "node", script.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  int status = 0;
  waitpid(node, &status, 0);
  serve.Stop();
  std::filesystem::remove_all(dir);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
