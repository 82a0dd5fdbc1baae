#include "orchestrator/serve.h"

#include <spdlog/spdlog.h>

#include <atomic>
#include <charconv>
#include <filesystem>
#include <iostream>

#include "orchestrator/api.h"
#include "orchestrator/cli.h"
#include "orchestrator/config.h"
#include "orchestrator/http_server.h"
#include "orchestrator/orchestrator.h"
#include "state/clock.h"
#include "state/sqlite_store.h"

namespace icewarden {
namespace {

void PrintErrors(const std::vector<ConfigError>& errors) {
  for (const auto& e : errors) std::cerr << e.ToString() << '\n';
}

// "127.0.0.1:8480" -> host and port. The config validator has checked the form already;
// this also guards the --listen override.
bool SplitListen(const std::string& listen, std::string& host, std::uint16_t& port) {
  auto colon = listen.rfind(':');
  if (colon == std::string::npos || colon == 0) return false;
  host = listen.substr(0, colon);
  const char* first = listen.data() + colon + 1;
  const char* last = listen.data() + listen.size();
  unsigned value = 0;
  auto [ptr, ec] = std::from_chars(first, last, value);
  if (ec != std::errc() || ptr != last || first == last || value > 65535) return false;
  port = static_cast<std::uint16_t>(value);
  return true;
}

}  // namespace

int CmdConfigValidate(const std::string& path) {
  ConfigLoad load = LoadConfig(path);
  if (!load.errors.empty()) {
    PrintErrors(load.errors);
    std::cerr << path << ": " << load.errors.size() << " error"
              << (load.errors.size() == 1 ? "" : "s") << '\n';
    return kExitUsage;
  }
  const Config& c = *load.config;
  std::cout << path << ": ok (" << c.regions.size() << " regions, " << c.ownership.rules.size()
            << " ownership rules, " << c.api.tokens.size() << " API tokens)\n";
  return kExitOk;
}

int CmdServe(const ServeOptions& options) {
  ConfigLoad load = LoadConfig(options.config_path);
  if (!load.errors.empty()) {
    PrintErrors(load.errors);
    return kExitUsage;
  }
  Config config = std::move(*load.config);
  if (!options.listen.empty()) config.api.listen = options.listen;
  if (!options.state_path.empty()) config.state.path = options.state_path;

  HttpServerOptions http;
  if (!SplitListen(config.api.listen, http.host, http.port)) {
    std::cerr << "icewarden: --listen " << config.api.listen << ": expected HOST:PORT\n";
    return kExitUsage;
  }
  http.read_timeout = config.api.read_timeout;
  http.write_timeout = config.api.write_timeout;

  auto clock = SystemClock();
  std::filesystem::path state_path = config.state.path;
  if (state_path.has_parent_path()) std::filesystem::create_directories(state_path.parent_path());
  auto store = OpenSqliteStore(SqliteStoreOptions{config.state.path}, clock);
  if (!store.ok()) {
    spdlog::error("cannot open state store {}: {}", config.state.path, store.status().ToString());
    return kExitFailed;
  }

  Orchestrator orchestrator(config, **store, clock);
  auto started = orchestrator.Start();
  if (!started.ok()) {
    spdlog::error("start-up failed: {}", started.status().ToString());
    return kExitFailed;
  }
  for (const auto& d : *started) spdlog::info("{}", d.reason);

  std::atomic<bool> ready{false};
  Api api(config.api, **store, *clock, [&ready] { return ready.load(); });
  HttpServer server(http, [&api](const ApiRequest& request) { return api.Handle(request); });
  if (Status s = server.Listen(); !s.ok()) {
    spdlog::error("cannot listen on {}: {}", config.api.listen, s.ToString());
    return kExitFailed;
  }
  ready = true;
  // The one line on stdout: tests and scripts read the bound port from it.
  std::cout << "icewarden: serving http://" << http.host << ":" << server.port() << " (state "
            << config.state.path << ")" << std::endl;
  server.Run();
  spdlog::info("stopped: signal received, in-flight requests finished");
  return kExitOk;
}

}  // namespace icewarden
