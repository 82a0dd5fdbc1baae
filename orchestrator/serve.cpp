#include "orchestrator/serve.h"

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <iostream>
#include <tuple>

#include "orchestrator/api.h"
#include "orchestrator/catalog_watch.h"
#include "orchestrator/cli.h"
#include "orchestrator/config.h"
#include "orchestrator/http_server.h"
#include "orchestrator/live_view.h"
#include "orchestrator/orchestrator.h"
#include "state/clock.h"
#include "state/sqlite_store.h"

namespace icewarden {
namespace {

void PrintErrors(const std::vector<ConfigError>& errors) {
  for (const auto& e : errors) std::cerr << e.ToString() << '\n';
}

}  // namespace

int CmdConfigValidate(const std::string& path, bool strict) {
  // Without --strict a secret that is absent here is a warning: configs are validated in CI
  // and on laptops, where production secrets are not (and should not be).
  ConfigLoad load =
      LoadConfig(path, ProcessEnv, strict ? SecretCheck::kRequire : SecretCheck::kWarnIfMissing);
  std::vector<ConfigError> problems = load.errors;
  problems.insert(problems.end(), load.warnings.begin(), load.warnings.end());
  std::stable_sort(problems.begin(), problems.end(), [](const auto& a, const auto& b) {
    return std::tie(a.line, a.column) < std::tie(b.line, b.column);
  });
  PrintErrors(problems);
  auto count = [](size_t n, const char* what) {
    return std::to_string(n) + " " + what + (n == 1 ? "" : "s");
  };
  if (!load.errors.empty()) {
    std::cerr << path << ": " << count(load.errors.size(), "error") << '\n';
    return kExitUsage;
  }
  const Config& c = *load.config;
  std::cout << path << ": ok (" << c.regions.size() << " regions, " << c.ownership.rules.size()
            << " ownership rules, " << c.api.tokens.size() << " API tokens)";
  if (!load.warnings.empty()) {
    std::cout << "; " << count(load.warnings.size(), "warning")
              << ": secrets not available here (--strict makes them errors)";
  }
  std::cout << '\n';
  return kExitOk;
}

int CmdServe(const ServeOptions& options) {
  // Logs go to stderr: stdout carries the one "serving" line that scripts read.
  spdlog::set_default_logger(spdlog::stderr_color_mt("icewarden"));
  ConfigLoad load = LoadConfig(options.config_path);
  if (!load.errors.empty()) {
    PrintErrors(load.errors);
    return kExitUsage;
  }
  Config config = std::move(*load.config);
  if (!options.listen.empty()) config.api.listen = options.listen;
  if (!options.state_path.empty()) config.state.path = options.state_path;

  auto http = HttpServerOptionsFor(config.api);
  if (!http.ok()) {
    std::cerr << "icewarden: api.listen " << config.api.listen << ": " << http.status().message()
              << '\n';
    return kExitUsage;
  }
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

  LiveView live;
  auto watch = CatalogWatch::Create(config, **store, orchestrator, clock, live);
  if (!watch.ok()) {
    std::cerr << "icewarden: " << options.config_path << ": " << watch.status().message() << '\n';
    return kExitUsage;
  }

  std::atomic<bool> ready{false};
  Api api(config.api, **store, *clock, [&ready] { return ready.load(); });
  api.SetLiveView(&live);
  http->on_server_response = [&api](int status) { api.CountResponse(status); };
  HttpServer server(*http, [&api](const ApiRequest& request) { return api.Handle(request); });
  if (Status s = server.Listen(); !s.ok()) {
    spdlog::error("cannot listen on {}: {}", config.api.listen, s.ToString());
    return kExitFailed;
  }
  (*watch)->Start();
  ready = true;
  // The one line on stdout: tests and scripts read the bound port from it.
  std::cout << "icewarden: serving http://" << http->host << ":" << server.port() << " (state "
            << config.state.path << ")" << std::endl;
  server.Run();
  ready = false;
  (*watch)->Stop();
  spdlog::info("stopped: signal received, in-flight requests finished");
  return kExitOk;
}

}  // namespace icewarden
