#include "orchestrator/serve.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <iostream>
#include <tuple>

#include "actions/action.h"
#include "actions/table_observations.h"
#include "orchestrator/alert_routes.h"
#include "orchestrator/api/api.h"
#include "orchestrator/api/http_server.h"
#include "orchestrator/catalog_watch.h"
#include "orchestrator/cli/cli.h"
#include "orchestrator/cluster/cluster.h"
#include "orchestrator/config/catalog_options.h"
#include "orchestrator/config/config.h"
#include "orchestrator/dashboard/dashboard.h"
#include "orchestrator/drills/drill_scheduler.h"
#include "orchestrator/drills/drill_service.h"
#include "orchestrator/failovers/failover_runner.h"
#include "orchestrator/failovers/failover_service.h"
#include "orchestrator/failovers/route_table.h"
#include "orchestrator/gateway/gateway.h"
#include "orchestrator/live_view.h"
#include "orchestrator/orchestrator.h"
#include "orchestrator/readiness/readiness.h"
#include "orchestrator/region_quorum.h"
#include "orchestrator/service/service.h"
#include "orchestrator/split_brain.h"
#include "orchestrator/webhooks/webhooks.h"
#include "state/clock.h"
#include "state/drill_store.h"
#include "state/pause_store.h"
#include "state/state_store.h"

namespace icewarden {
namespace {

void PrintErrors(const std::vector<ConfigError>& errors) {
  for (const auto& e : errors) std::cerr << e.ToString() << '\n';
}

// Every action kind, with what running them needs from the daemon.
Status BuildActions(const Config& config, StateStore* store, std::shared_ptr<Clock> clock,
                    ActionRegistry* registry,
                    std::shared_ptr<TableObservations> observations = nullptr) {
  ActionEnv env;
  env.clock = std::move(clock);
  env.store = store;
  env.observations = std::move(observations);
  env.catalog = [&config](const std::string& region) -> std::optional<CatalogClientOptions> {
    const RegionConfig* rc = config.FindRegion(region);
    if (rc == nullptr) return std::nullopt;
    return CatalogOptionsFor(*rc);
  };
  if (store != nullptr) {
    env.region_health = [store](const std::string& region) -> std::optional<Region> {
      auto r = store->GetRegion(region);
      if (!r.ok()) return std::nullopt;
      return *r;
    };
  }
  if (Status s = registerBuiltinActions(*registry, env); !s.ok()) return s;
  return registry->Register(MakeGatewayFenceAction(GatewayEndpoints(config)));
}

// The routes' runbooks, read and validated; errors printed as FILE:LINE:COL.
std::optional<RouteTable> LoadRoutes(const Config& config, const ActionRegistry& actions) {
  std::vector<std::string> errors;
  auto routes = RouteTable::Load(config, actions, &errors);
  for (const auto& e : errors) std::cerr << e << '\n';
  return routes;
}

// The `alerts:` routes, checked against their action kinds; errors printed as FILE:LINE:COL.
std::optional<AlertRoutes> LoadAlertRoutes(const Config& config, const ActionRegistry& actions) {
  std::vector<std::string> errors;
  auto alerts = AlertRoutes::Load(config, actions, &errors);
  for (const auto& e : errors) std::cerr << e << '\n';
  return alerts;
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
  ActionRegistry actions;
  if (Status s = BuildActions(c, nullptr, SystemClock(), &actions); !s.ok()) {
    std::cerr << "icewarden: " << s.message() << '\n';
    return kExitFailed;
  }
  const bool routes_ok = LoadRoutes(c, actions).has_value();
  if (!LoadAlertRoutes(c, actions) || !routes_ok) return kExitUsage;
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
  ConfigLoad load = LoadConfig(options.config_path);
  if (!load.errors.empty()) {
    PrintErrors(load.errors);
    return kExitUsage;
  }
  Config config = std::move(*load.config);
  {
    std::vector<std::string> regions;
    for (const RegionConfig& r : config.regions) regions.push_back(r.name);
    ConfigureLogging("icewarden", *log_format, std::move(regions));
  }
  for (const auto& line : InsecureTlsWarnings(config)) spdlog::warn("{}", line);
  if (!options.listen.empty()) config.api.listen = options.listen;
  if (!options.state_path.empty()) config.state.path = options.state_path;
  if (!options.replica.empty()) config.state.etcd.replica = options.replica;

  auto http = HttpServerOptionsFor(config.api);
  if (!http.ok()) {
    std::cerr << "icewarden: api.listen " << config.api.listen << ": " << http.status().message()
              << '\n';
    return kExitUsage;
  }
  auto clock = SystemClock();
  // The runbooks first: a broken one refuses the start before anything is opened or probed.
  // Parsing needs only the kinds' Validate, not what running them needs.
  std::optional<RouteTable> routes;
  {
    ActionRegistry kinds;
    if (Status s = BuildActions(config, nullptr, clock, &kinds); !s.ok()) {
      spdlog::error("{}", s.ToString());
      return kExitFailed;
    }
    routes = LoadRoutes(config, kinds);
    if (!LoadAlertRoutes(config, kinds) || !routes) return kExitUsage;
  }
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
  std::unique_ptr<StateStore>* store = &(*state)->store;

  Orchestrator orchestrator(config, **store, clock);
  auto started = orchestrator.Start();
  if (!started.ok()) {
    spdlog::error("start-up failed: {}", started.status().ToString());
    return kExitFailed;
  }
  for (const auto& d : *started) spdlog::info("{}", d.reason);

  ActionRegistry actions;
  auto observations = std::make_shared<TableObservations>();
  if (Status s = BuildActions(config, store->get(), clock, &actions, observations); !s.ok()) {
    spdlog::error("{}", s.ToString());
    return kExitFailed;
  }

  std::optional<AlertRoutes> alerts = LoadAlertRoutes(config, actions);
  if (!alerts) return kExitUsage;

  auto watch = CatalogWatch::Create(config, **store, orchestrator, clock, live);
  if (!watch.ok()) {
    std::cerr << "icewarden: " << options.config_path << ": " << watch.status().message() << '\n';
    return kExitUsage;
  }

  FailoverRunner* runner_ptr = nullptr;
  FailoverServiceDeps service_deps;
  service_deps.config = &config;
  service_deps.routes = &*routes;
  service_deps.store = store->get();
  service_deps.orchestrator = &orchestrator;
  service_deps.live = &live;
  service_deps.clock = clock;
  service_deps.actions = &actions;
  service_deps.env = ProcessEnv;
  service_deps.wake = [&runner_ptr](const std::string& id) {
    if (runner_ptr != nullptr) runner_ptr->Wake(id);
  };
  if (ReplicaViews* views = (*state)->views.get()) {
    service_deps.replica_views = [views] { return views->Snapshot(); };
    // A region this leader alone cannot hear is degraded, not unreachable (issue 12, item 4).
    (*watch)->SetUnreachableQuorum([views, &config](const std::string& region) {
      return UnreachableWithheld(region, config, views->Snapshot());
    });
  }
  FailoverService failovers(service_deps);
  FailoverRunnerDeps runner_deps;
  runner_deps.store = store->get();
  runner_deps.orchestrator = &orchestrator;
  runner_deps.service = &failovers;
  runner_deps.actions = &actions;
  runner_deps.clock = clock;
  runner_deps.log = [](const std::string& line) { spdlog::info("{}", line); };
  runner_deps.drive_ended = [observations](const std::string& id) { observations->Forget(id); };
  FailoverRunner runner(runner_deps);
  runner_ptr = &runner;

  // Standing readiness: every route checked with no side effect, on its own thread, so a
  // preflight waiting on a dead endpoint never holds up the API.
  ReadinessDeps readiness_deps;
  readiness_deps.config = &config;
  readiness_deps.routes = &*routes;
  readiness_deps.failovers = &failovers;
  readiness_deps.actions = &actions;
  readiness_deps.clock = clock;
  ReadinessEvaluator readiness_evaluator(readiness_deps);
  ReadinessBoard readiness_board;
  ReadinessLoop readiness(
      readiness_evaluator, readiness_board, config.policies.readiness_interval,
      [](const std::string& line) { spdlog::info("{}", line); },
      [&live] { return live.Lag() != nullptr; },
      [store = store->get(), clock](const RouteReadiness& r) {
        // A route that stops (or starts again) being ready is audited, so that the audit log
        // says since when a failover would not have worked.
        AuditEvent why;
        why.at = clock->Now();
        why.actor = "readiness";
        why.source = "internal";
        why.action = r.ready ? "readiness.ready" : "readiness.not_ready";
        why.target = "route:" + r.route;
        why.reason = "route " + r.route;
        why.reason += r.ready ? " is ready" : " is not ready";
        for (const std::string& reason : r.reasons) why.reason += "; " + reason;
        if (why.reason.size() > kMaxReasonBytes) why.reason.resize(kMaxReasonBytes);
        if (Status s = store->AppendAudit(why); !s.ok())
          spdlog::warn("readiness: cannot audit route {}: {}", r.route, s.ToString());
      });

  std::atomic<bool> ready{false};
  Api api(config.api, **store, *clock, [&ready] { return ready.load(); });
  api.SetLiveView(&live);
  api.SetFailoverService(&failovers);
  api.SetReadiness(&readiness_board);
  // Alerts suspect regions through the watch's HealthTracker, so probes and webhooks keep
  // one record of each region's health.
  WebhookReceiverDeps webhook_deps;
  webhook_deps.config = &config;
  webhook_deps.store = store->get();
  webhook_deps.failovers = &failovers;
  webhook_deps.clock = clock;
  webhook_deps.region_event = [watch = watch->get()](const std::string& region,
                                                     const HealthInput& input,
                                                     const std::string& actor) {
    return watch->ApplyHealthEvent(region, input, actor);
  };
  WebhookReceiver webhooks(webhook_deps);

  // Drills (orchestrator/drills/): on demand through the API, and at their cron slots.
  DrillServiceDeps drill_deps;
  drill_deps.config = &config;
  drill_deps.routes = &*routes;
  drill_deps.store = store->get();
  drill_deps.drills = DrillStoreOf(**store);
  drill_deps.failovers = &failovers;
  drill_deps.actions = &actions;
  drill_deps.clock = clock;
  drill_deps.live = &live;
  drill_deps.env = ProcessEnv;
  drill_deps.log = [](const std::string& line) { spdlog::info("{}", line); };
  DrillService drills(drill_deps);
  api.SetDrillService(&drills);
  DrillSchedulerDeps scheduler_deps;
  scheduler_deps.drills = &config.drills;
  scheduler_deps.service = &drills;
  scheduler_deps.store = drill_deps.drills;
  scheduler_deps.pauses = PauseStoreOf(**store);
  scheduler_deps.routes = &config.failovers;
  scheduler_deps.clock = clock;
  scheduler_deps.log = drill_deps.log;
  DrillScheduler drill_scheduler(scheduler_deps);
  api.SetWebhookReceiver(&webhooks);
  api.SetRegionEvents(webhook_deps.region_event);
  const Dashboard dashboard = options.dashboard_dir.empty()
                                  ? Dashboard::Embedded()
                                  : Dashboard::FromDirectory(options.dashboard_dir);
  if (!options.dashboard_dir.empty()) {
    spdlog::warn("dashboard: serving its files from {}, read on every request (development)",
                 options.dashboard_dir);
  }
  api.SetDashboard(&dashboard);
  if ((*state)->leadership && (*state)->views) {
    api.SetClusterStatus([&state, &config] {
      return ClusterStatusJson(*(*state)->leadership, *(*state)->views, config);
    });
  }

  // DESIGN.md rule 8: a commit in a region that does not own the table fences that region and
  // pages, through the `alerts:` routes.
  SplitBrainWatchDeps split_deps;
  split_deps.store = store->get();
  split_deps.live = &live;
  split_deps.clock = clock;
  split_deps.region_event = webhook_deps.region_event;
  split_deps.alert = [&alerts](const SplitBrainAlert& a) { return alerts->Send(a); };
  split_deps.log = [](const std::string& line) { spdlog::warn("{}", line); };
  SplitBrainWatch split_brain(split_deps);
  std::vector<std::string> region_names;
  for (const RegionConfig& r : config.regions) region_names.push_back(r.name);
  http->on_server_response = [&api](int status) { api.CountResponse(status); };
  HttpServer server(*http, [&api](const ApiRequest& request) { return api.Handle(request); });
  if (Status s = server.Listen(); !s.ok()) {
    spdlog::error("cannot listen on {}: {}", config.api.listen, s.ToString());
    return kExitFailed;
  }
  (*watch)->Start();
  if (Status s = split_brain.Start(region_names); !s.ok()) {
    spdlog::error("split-brain watch: cannot read what it acted on before: {}", s.ToString());
    return kExitFailed;
  }
  runner.Start();  // resumes every active failover from its journal
  // A shadow drill a crash interrupted is cleaned up before anything new starts.
  for (const std::string& line : drills.ResumeAtStart()) spdlog::warn("{}", line);
  drill_scheduler.Start();
  readiness.Start();
  ready = true;
  // The one line on stdout: tests and scripts read the bound port from it.
  std::cout << "icewarden: serving http://" << http->host << ":" << server.port() << " ("
            << (*state)->description << ")" << std::endl;
  // systemd (Type=notify): started once the API answers and every failover has resumed.
  if (Status s = NotifySupervisor("READY=1\nSTATUS=serving"); !s.ok())
    spdlog::warn("cannot tell the supervisor the daemon is ready: {}", s.message());
  std::optional<SupervisorWatchdog> watchdog;
  watchdog.emplace(
      [&server](std::chrono::milliseconds budget) { return server.Responsive(budget); });
  server.Run();
  ready = false;
  watchdog.reset();
  (void)NotifySupervisor("STOPPING=1\nSTATUS=stopping: in-flight steps finish");
  drill_scheduler.Stop();
  drills.Stop();
  readiness.Stop();
  // Steps in flight finish (or time out) and are journaled; nothing new starts.
  runner.Stop();
  split_brain.Stop();
  (*watch)->Stop();
  if ((*state)->leadership) (*state)->leadership->Resign();
  spdlog::info("stopped: signal received, in-flight requests and steps finished");
  return kExitOk;
}

}  // namespace icewarden
