#include "orchestrator/serve/serve.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <thread>
#include <tuple>
#include <utility>

#include "orchestrator/api/http_server.h"
#include "orchestrator/cluster/cluster.h"
#include "orchestrator/config/catalog_options.h"
#include "orchestrator/config/config.h"
#include "orchestrator/dashboard/dashboard.h"
#include "orchestrator/serve/config_reload.h"
#include "orchestrator/serve/daemon.h"
#include "orchestrator/service/service.h"
#include "orchestrator/watch/live_view.h"
#include "state/clock.h"
#include "state/state_store.h"

namespace icewarden {
namespace {

void PrintErrors(const std::vector<ConfigError>& errors) {
  for (const auto& e : errors) std::cerr << e.ToString() << '\n';
}

// The config file as `serve` reads it: the file, then the command line's overrides.
ConfigLoad LoadServeConfig(const ServeOptions& options) {
  ConfigLoad load = LoadConfig(options.config_path);
  if (!load.config) return load;
  Config& config = *load.config;
  if (!options.listen.empty()) config.api.listen = options.listen;
  if (!options.state_path.empty()) config.state.path = options.state_path;
  if (!options.replica.empty()) config.state.etcd.replica = options.replica;
  return load;
}

std::vector<std::string> RegionNames(const Config& config) {
  std::vector<std::string> names;
  for (const RegionConfig& r : config.regions) names.push_back(r.name);
  return names;
}

// Reloads run on a thread of their own, woken by SIGHUP (which the server's strand must not
// wait on) or by the API once the file checks out. Wakes while one runs make one more.
class ReloadThread {
 public:
  explicit ReloadThread(ConfigReloader& reloader)
      : reloader_(reloader), thread_([this] { Loop(); }) {}
  ~ReloadThread() {
    {
      std::lock_guard lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }
  // `actor` is who asked, for the audit log: "signal:SIGHUP" or the API token's name.
  void Wake(std::string actor) {
    {
      std::lock_guard lock(mu_);
      actor_ = std::move(actor);
    }
    cv_.notify_all();
  }

 private:
  void Loop() {
    std::unique_lock lock(mu_);
    while (true) {
      cv_.wait(lock, [this] { return stop_ || !actor_.empty(); });
      if (stop_) return;
      const std::string actor = std::exchange(actor_, std::string());
      lock.unlock();
      (void)NotifySupervisor(ReloadingState());
      ReloadOutcome out = reloader_.Reload(actor);
      for (const std::string& e : out.errors) spdlog::error("{}", e);
      if (out.ok) {
        spdlog::info("{}", out.summary);
      } else {
        spdlog::error("{}", out.summary);
      }
      (void)NotifySupervisor("READY=1\nSTATUS=serving");
      lock.lock();
    }
  }

  ConfigReloader& reloader_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::string actor_;  // empty: nothing asked
  bool stop_ = false;
  std::thread thread_;
};

// A refused reload: 409 with every error, FILE:LINE:COL first.
ApiResponse ReloadAnswer(const ReloadOutcome& out) {
  nlohmann::json body = {{"reloaded", false}, {"summary", out.summary}, {"errors", out.errors}};
  body["error"] = {{"code", "config_refused"}, {"message", out.summary}};
  return JsonResponse(409, body);
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
  std::vector<std::string> errors;
  const bool runbooks_ok = CheckRunbooks(c, &errors);
  for (const std::string& e : errors) std::cerr << e << '\n';
  if (!runbooks_ok) return kExitUsage;
  std::cout << path << ": ok (" << c.regions.size() << " regions, " << c.ownership.rules.size()
            << " ownership rules, " << c.api.tokens.size() << " API tokens, " << c.failovers.size()
            << " failover routes, " << c.drills.size() << " drills)";
  if (!load.warnings.empty()) {
    std::cout << "; " << count(load.warnings.size(), "warning")
              << ": secrets or files not available here (--strict makes them errors)";
  }
  std::cout << '\n';
  return kExitOk;
}

int CmdServe(const ServeOptions& options) {
  // Logs go to stderr: stdout carries the one "serving" line that scripts read.
  auto log_format = ParseLogFormat(options.log_format);
  if (!log_format.ok()) {
    std::cerr << "icewarden: " << log_format.status().message() << '\n';
    return kExitUsage;
  }
  ConfigureLogging("icewarden", *log_format);
  ConfigLoad load = LoadServeConfig(options);
  if (!load.errors.empty()) {
    PrintErrors(load.errors);
    return kExitUsage;
  }
  Config config = std::move(*load.config);
  ConfigureLogging("icewarden", *log_format, RegionNames(config));
  for (const auto& line : InsecureTlsWarnings(config)) spdlog::warn("{}", line);

  auto http = HttpServerOptionsFor(config.api);
  if (!http.ok()) {
    std::cerr << "icewarden: api.listen " << config.api.listen << ": " << http.status().message()
              << '\n';
    return kExitUsage;
  }
  // The runbooks first: a broken one refuses the start before anything is opened or probed.
  {
    std::vector<std::string> errors;
    const bool ok = CheckRunbooks(config, &errors);
    for (const std::string& e : errors) std::cerr << e << '\n';
    if (!ok) return kExitUsage;
  }
  auto clock = SystemClock();
  // SIGHUP reloads once this replica serves; before that (a standby) it is logged, not fatal.
  std::atomic<ReloadThread*> reloads{nullptr};
  http->on_hangup = [&reloads] {
    if (ReloadThread* r = reloads.load()) {
      r->Wake("signal:SIGHUP");
    } else {
      spdlog::warn("SIGHUP while standing by: ignored; send it again once this replica leads");
    }
  };
  // With the etcd backend this stands by until this replica leads. A term that ends stops
  // the process at once (Patroni's rule): nothing may act past the lease, and the journal lets
  // the next leader resume what was in flight.
  // Before the state: a standby's probes fill it, and the leader's watch goes on from there.
  LiveView live;
  auto state = OpenServeState(config, *http, clock, live, [](const std::string& why) {
    spdlog::critical("leader: {}; stopping every action now, the next leader resumes them", why);
    spdlog::default_logger()->flush();
    std::_Exit(kExitFailed);
  });
  if (!state.ok()) {
    spdlog::error("cannot open the state store: {}", state.status().ToString());
    return kExitFailed;
  }
  if (!state->has_value()) {
    spdlog::info("stopped: signal received while standing by");
    return kExitOk;
  }
  ServeState& serve_state = **state;

  const Dashboard dashboard = options.dashboard_dir.empty()
                                  ? Dashboard::Embedded()
                                  : Dashboard::FromDirectory(options.dashboard_dir);
  if (!options.dashboard_dir.empty()) {
    spdlog::warn("dashboard: serving its files from {}, read on every request (development)",
                 options.dashboard_dir);
  }
  ConfigReloader* reloader_ptr = nullptr;
  DaemonInputs inputs;
  inputs.state = &serve_state;
  inputs.live = &live;
  inputs.clock = clock;
  inputs.dashboard = &dashboard;
  inputs.reload_status = [&reloader_ptr] { return reloader_ptr->LastReload(); };
  // The API answers at once: a config that does not check out is refused with its errors; one
  // that does is reloaded on the reload thread (a handler must not hold the event loop while
  // steps in flight finish), and /metrics and the audit log say how it ended.
  inputs.reload = [&reloader_ptr, &reloads](const std::string& actor) {
    ReloadOutcome checked = reloader_ptr->Check(actor);
    ReloadThread* r = reloads.load();
    if (!checked.ok) return ReloadAnswer(checked);
    if (r == nullptr) return JsonErrorResponse(503, "unavailable", "the daemon is starting");
    r->Wake(actor);
    return JsonResponse(
        202,
        nlohmann::json{{"reloaded", false},
                       {"reloading", true},
                       {"summary", checked.summary +
                                       "; reloading now: icewarden_config_last_reload_successful "
                                       "and the audit log (config.reload) say how it ended"}});
  };
  std::vector<std::string> errors;
  std::unique_ptr<Daemon> first = Daemon::Build(config, inputs, &errors);
  for (const std::string& e : errors) std::cerr << e << '\n';
  if (first == nullptr) return kExitUsage;
  ConfigReloader reloader([&options] { return LoadServeConfig(options); }, inputs, std::move(first),
                          clock);
  reloader_ptr = &reloader;

  http->on_server_response = [&reloader](int status) { reloader.Current()->CountResponse(status); };
  HttpServer server(*http, [&reloader](const ApiRequest& request) {
    // The daemon stays alive for the length of the request, also across a reload.
    return reloader.Current()->Handle(request);
  });
  if (Status s = server.Listen(); !s.ok()) {
    spdlog::error("cannot listen on {}: {}", config.api.listen, s.ToString());
    return kExitFailed;
  }
  {
    std::vector<std::string> lines;
    Status started = reloader.Current()->Start(&lines);
    for (const std::string& line : lines) spdlog::info("{}", line);
    if (!started.ok()) {
      spdlog::error("{}", started.ToString());
      return kExitFailed;
    }
  }
  std::optional<ReloadThread> reload_thread;
  reload_thread.emplace(reloader);
  reloads = &*reload_thread;
  // The one line on stdout: tests and scripts read the bound port from it.
  std::cout << "icewarden: serving " << config.api.tls.scheme() << "://" << http->host << ":"
            << server.port() << " (" << serve_state.description << ")" << std::endl;
  // systemd (Type=notify): started once the API answers and every failover has resumed.
  if (Status s = NotifySupervisor("READY=1\nSTATUS=serving"); !s.ok())
    spdlog::warn("cannot tell the supervisor the daemon is ready: {}", s.message());
  {
    SupervisorWatchdog watchdog(
        [&server](std::chrono::milliseconds budget) { return server.Responsive(budget); });
    server.Run();
  }
  (void)NotifySupervisor("STOPPING=1\nSTATUS=stopping: in-flight steps finish");
  reloads = nullptr;
  reload_thread.reset();  // a reload in flight ends first: nothing starts after this
  reloader.StopCurrent();
  if (serve_state.leadership) serve_state.leadership->Resign();
  spdlog::info("stopped: signal received, in-flight requests and steps finished");
  return kExitOk;
}

}  // namespace icewarden
