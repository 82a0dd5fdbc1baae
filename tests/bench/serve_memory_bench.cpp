// Resident memory of `icewarden serve` with 100,000 tables and 20 regions loaded.
//
// Seeds a state store with N tables spread over 20 regions, writes a config naming the 20
// regions, starts the real daemon, reads every page of /api/v1/ownership and /metrics (so
// the figure includes serving the full table set, not just idling), and reports VmRSS and
// VmHWM from /proc. Usage: serve_memory_bench [TABLES] (default 100000).
#include <httplib.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "state/sqlite_store.h"

namespace {

using namespace icewarden;

long StatusKiB(pid_t pid, const std::string& field) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind(field + ":", 0) == 0) return std::stol(line.substr(field.size() + 1));
  return -1;
}

}  // namespace

int main(int argc, char** argv) {
  const int tables = argc > 1 ? std::atoi(argv[1]) : 100000;
  const int regions = 20;
  char tmpl[] = "/tmp/icewarden-rss-XXXXXX";
  std::string dir = mkdtemp(tmpl);

  {
    auto store = OpenSqliteStore({dir + "/state.db"}, SystemClock());
    if (!store.ok()) {
      std::cerr << store.status().ToString() << '\n';
      return 1;
    }
    std::vector<OwnershipChange> batch;
    for (int i = 0; i < tables; ++i) {
      TableIdent t{{"ns" + std::to_string(i % 500)}, "table_" + std::to_string(i)};
      batch.push_back({t, 0, "region-" + std::to_string(i % regions), ""});
      if (batch.size() == 5000 || i + 1 == tables) {
        Status s = (*store)->CompareAndSetOwnership(
            batch, {0, 0, "bench", "bench", "ownership.seed", "", "seed", "{}"});
        if (!s.ok()) {
          std::cerr << s.ToString() << '\n';
          return 1;
        }
        batch.clear();
      }
    }
  }

  std::ofstream(dir + "/token") << "bench-token\n";
  std::ofstream cfg(dir + "/icewarden.yaml");
  cfg << "api:\n  listen: 127.0.0.1:0\n  tokens:\n    - name: bench\n      role: admin\n      "
         "token_file: token\n"
      << "state:\n  path: state.db\nregions:\n";
  for (int r = 0; r < regions; ++r)
    cfg << "  - name: region-" << r << "\n    catalog_uri: http://127.0.0.1:9/r" << r << "\n";
  cfg << "ownership:\n  default_owner: region-0\n";
  cfg.close();

  int out[2];
  if (pipe(out) != 0) return 1;
  pid_t pid = fork();
  if (pid == 0) {
    dup2(out[1], STDOUT_FILENO);
    execl(ICEWARDEN_BINARY, ICEWARDEN_BINARY, "serve", "--config",
          (dir + "/icewarden.yaml").c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  close(out[1]);
  std::string line;
  char c;
  while (read(out[0], &c, 1) == 1 && c != '\n') line += c;
  auto at = line.find("http://");
  if (at == std::string::npos) {
    std::cerr << "serve did not start: " << line << '\n';
    return 1;
  }
  std::string url = line.substr(at, line.find(' ', at) - at);
  const long idle = StatusKiB(pid, "VmRSS");

  httplib::Client client(url);
  httplib::Headers auth{{"Authorization", "Bearer bench-token"}};
  auto start = std::chrono::steady_clock::now();
  int seen = 0;
  std::string after;
  for (;;) {
    std::string path = "/api/v1/ownership?limit=10000";
    if (!after.empty()) path += "&after=" + after;
    auto res = client.Get(path, auth);
    if (!res || res->status != 200) {
      std::cerr << "ownership page failed\n";
      break;
    }
    auto body = nlohmann::json::parse(res->body);
    seen += static_cast<int>(body["tables"].size());
    if (body["next_after"].is_null()) break;
    after = body["next_after"].get<std::string>();
  }
  auto elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  client.Get("/metrics");
  client.Get("/api/v1/regions", auth);

  const long rss = StatusKiB(pid, "VmRSS");
  const long hwm = StatusKiB(pid, "VmHWM");
  kill(pid, SIGTERM);
  int status = 0;
  waitpid(pid, &status, 0);
  std::filesystem::remove_all(dir);

  std::printf("tables=%d regions=%d listed=%d list_all_seconds=%.2f\n", tables, regions, seen,
              elapsed);
  std::printf("rss_idle_mib=%.1f rss_after_mib=%.1f peak_rss_mib=%.1f goal_mib=64 %s\n",
              idle / 1024.0, rss / 1024.0, hwm / 1024.0, hwm <= 64 * 1024 ? "PASS" : "OVER");
  return 0;
}
