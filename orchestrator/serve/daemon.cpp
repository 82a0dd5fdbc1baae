#include "orchestrator/serve/daemon.h"

#include <spdlog/spdlog.h>

#include <atomic>

#include "actions/action.h"
#include "actions/table_observations.h"
#include "orchestrator/cluster/cluster.h"
#include "orchestrator/config/catalog_options.h"
#include "orchestrator/drills/drill_scheduler.h"
#include "orchestrator/drills/drill_service.h"
#include "orchestrator/failovers/failover_runner.h"
#include "orchestrator/failovers/failover_service.h"
#include "orchestrator/failovers/route_table.h"
#include "orchestrator/gateway/gateway.h"
#include "orchestrator/orchestrator.h"
#include "orchestrator/readiness/readiness.h"
#include "orchestrator/serve/audit_seal_watch.h"
#include "orchestrator/watch/alert_routes.h"
#include "orchestrator/watch/catalog_watch.h"
#include "orchestrator/watch/live_view.h"
#include "orchestrator/watch/region_quorum.h"
#include "orchestrator/watch/split_brain.h"
#include "orchestrator/webhooks/webhooks.h"
#include "state/clock.h"
#include "state/drill_store.h"
#include "state/pause_store.h"
#include "state/state_store.h"

namespace icewarden {
namespace {

void Log(const std::string& line) { spdlog::info("{}", line); }

// Every action kind, with what running them needs from the daemon (`store` null: only their
// Validate, for checking runbooks).
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

// A route that stops (or starts again) being ready is audited, so that the audit log says
// since when a failover would not have worked.
void AuditReadiness(StateStore& store, const Clock& clock, const RouteReadiness& r) {
  AuditEvent why;
  why.at = clock.Now();
  why.actor = "readiness";
  why.source = "internal";
  why.action = r.ready ? "readiness.ready" : "readiness.not_ready";
  why.target = "route:" + r.route;
  why.reason = "route " + r.route + (r.ready ? " is ready" : " is not ready");
  for (const std::string& reason : r.reasons) why.reason += "; " + reason;
  if (why.reason.size() > kMaxReasonBytes) why.reason.resize(kMaxReasonBytes);
  if (Status s = store.AppendAudit(why); !s.ok())
    spdlog::warn("readiness: cannot audit route {}: {}", r.route, s.ToString());
}

}  // namespace

bool CheckRunbooks(const Config& config, std::vector<std::string>* errors) {
  ActionRegistry kinds;
  if (Status s = BuildActions(config, nullptr, SystemClock(), &kinds); !s.ok()) {
    errors->push_back(s.ToString());
    return false;
  }
  const std::size_t before = errors->size();
  const bool routes = RouteTable::Load(config, kinds, errors).has_value();
  const bool alerts = AlertRoutes::Load(config, kinds, errors).has_value();
  return routes && alerts && errors->size() == before;
}

// Declared in the order they are built: each refers only to those above it, and they are
// destroyed in reverse.
struct Daemon::Parts {
  Config config;
  std::unique_ptr<Orchestrator> orchestrator;
  ActionRegistry actions;
  std::shared_ptr<TableObservations> observations = std::make_shared<TableObservations>();
  std::optional<RouteTable> routes;
  std::optional<AlertRoutes> alerts;
  std::unique_ptr<CatalogWatch> watch;
  std::unique_ptr<FailoverService> failovers;
  std::unique_ptr<FailoverRunner> runner;
  std::unique_ptr<ReadinessEvaluator> readiness_evaluator;
  ReadinessBoard readiness_board;
  std::unique_ptr<ReadinessLoop> readiness;
  std::atomic<bool> running{false};
  std::unique_ptr<Api> api;
  std::unique_ptr<WebhookReceiver> webhooks;
  std::unique_ptr<DrillService> drills;
  std::unique_ptr<DrillScheduler> drill_scheduler;
  std::unique_ptr<SplitBrainWatch> split_brain;
  std::unique_ptr<AuditSealWatch> audit_seal;
  std::vector<std::string> decisions;  // what Orchestrator::Start decided, logged at Start
  bool started = false, stopped = false;
};

Daemon::Daemon(std::unique_ptr<Parts> parts) : parts_(std::move(parts)) {}
Daemon::~Daemon() { Stop(); }

std::unique_ptr<Daemon> Daemon::Build(Config config, const DaemonInputs& in,
                                      std::vector<std::string>* errors) {
  auto p = std::make_unique<Parts>();
  p->config = std::move(config);
  const Config& c = p->config;
  ServeState& state = *in.state;
  StateStore& store = *state.store;
  const std::shared_ptr<Clock>& clock = in.clock;

  p->orchestrator = std::make_unique<Orchestrator>(c, store, clock);
  if (Status s = BuildActions(c, &store, clock, &p->actions, p->observations); !s.ok()) {
    errors->push_back(s.ToString());
    return nullptr;
  }
  p->routes = RouteTable::Load(c, p->actions, errors);
  p->alerts = AlertRoutes::Load(c, p->actions, errors);
  if (!p->routes || !p->alerts) return nullptr;
  // The store in line with the config before the watch reads the regions' health from it.
  auto decided = p->orchestrator->Start();
  if (!decided.ok()) {
    errors->push_back("start-up: " + decided.status().ToString());
    return nullptr;
  }
  for (const Decision& d : *decided) p->decisions.push_back(d.reason);
  auto watch = CatalogWatch::Create(c, store, *p->orchestrator, clock, *in.live);
  if (!watch.ok()) {
    errors->push_back(c.source_path + ": " + watch.status().message());
    return nullptr;
  }
  p->watch = std::move(*watch);

  Parts* raw = p.get();
  FailoverServiceDeps service;
  service.config = &c;
  service.routes = &*p->routes;
  service.store = &store;
  service.orchestrator = p->orchestrator.get();
  service.live = in.live;
  service.clock = clock;
  service.actions = &p->actions;
  service.env = ProcessEnv;
  service.wake = [raw](const std::string& id) {
    if (raw->runner != nullptr) raw->runner->Wake(id);
  };
  if (ReplicaViews* views = state.views.get()) {
    service.replica_views = [views] { return views->Snapshot(); };
    // A region this leader alone cannot hear is degraded, not unreachable (issue 12, item 4).
    p->watch->SetUnreachableQuorum([views, &c](const std::string& region) {
      return UnreachableWithheld(region, c, views->Snapshot());
    });
  }
  p->failovers = std::make_unique<FailoverService>(service);

  FailoverRunnerDeps runner;
  runner.store = &store;
  runner.orchestrator = p->orchestrator.get();
  runner.service = p->failovers.get();
  runner.actions = &p->actions;
  runner.clock = clock;
  runner.log = Log;
  runner.drive_ended = [observations = p->observations](const std::string& id) {
    observations->Forget(id);
  };
  p->runner = std::make_unique<FailoverRunner>(runner);

  // Standing readiness: every route checked with no side effect, on its own thread, so a
  // preflight waiting on a dead endpoint never holds up the API.
  ReadinessDeps readiness;
  readiness.config = &c;
  readiness.routes = &*p->routes;
  readiness.failovers = p->failovers.get();
  readiness.actions = &p->actions;
  readiness.clock = clock;
  p->readiness_evaluator = std::make_unique<ReadinessEvaluator>(readiness);
  p->readiness = std::make_unique<ReadinessLoop>(
      *p->readiness_evaluator, p->readiness_board, c.policies.readiness_interval, Log,
      [live = in.live] { return live->Lag() != nullptr; },
      [&store, clock](const RouteReadiness& r) { AuditReadiness(store, *clock, r); });

  p->api = std::make_unique<Api>(c.api, store, *clock, [raw] { return raw->running.load(); });
  Api& api = *p->api;
  api.SetLiveView(in.live);
  api.SetFailoverService(p->failovers.get());
  api.SetReadiness(&p->readiness_board);
  // Alerts suspect regions through the watch's HealthTracker, so probes and webhooks keep
  // one record of each region's health.
  WebhookReceiverDeps webhooks;
  webhooks.config = &c;
  webhooks.store = &store;
  webhooks.failovers = p->failovers.get();
  webhooks.clock = clock;
  webhooks.region_event = [watch = p->watch.get()](const std::string& region,
                                                   const HealthInput& input,
                                                   const std::string& actor) {
    return watch->ApplyHealthEvent(region, input, actor);
  };
  p->webhooks = std::make_unique<WebhookReceiver>(webhooks);

  // Drills (orchestrator/drills/): on demand through the API, and at their cron slots.
  DrillServiceDeps drills;
  drills.config = &c;
  drills.routes = &*p->routes;
  drills.store = &store;
  drills.drills = DrillStoreOf(store);
  drills.failovers = p->failovers.get();
  drills.actions = &p->actions;
  drills.clock = clock;
  drills.live = in.live;
  drills.env = ProcessEnv;
  drills.log = Log;
  p->drills = std::make_unique<DrillService>(drills);
  api.SetDrillService(p->drills.get());
  DrillSchedulerDeps scheduler;
  scheduler.drills = &c.drills;
  scheduler.service = p->drills.get();
  scheduler.store = drills.drills;
  scheduler.pauses = PauseStoreOf(store);
  scheduler.routes = &c.failovers;
  scheduler.clock = clock;
  scheduler.log = Log;
  p->drill_scheduler = std::make_unique<DrillScheduler>(scheduler);
  api.SetWebhookReceiver(p->webhooks.get());
  api.SetRegionEvents(webhooks.region_event);
  api.SetDashboard(in.dashboard);
  if (state.leadership && state.views) {
    api.SetClusterStatus(
        [&state, &c] { return ClusterStatusJson(*state.leadership, *state.views, c); });
  }
  if (in.reload_status)
    api.SetConfigReloadStatus([f = in.reload_status] {
      const ConfigReloadStatus s = f();
      return std::pair{s.last_successful, s.last_success_at};
    });
  if (in.reload) api.SetConfigReload(in.reload);
  p->audit_seal =
      std::make_unique<AuditSealWatch>(store, *clock, c.policies.audit_verify_interval,
                                       [](const std::string& line) { spdlog::error("{}", line); });
  api.SetAuditSealStatus([seal = p->audit_seal.get()] { return seal->Latest(); });

  // DESIGN.md rule 8: a commit in a region that does not own the table fences that region and
  // pages, through the `alerts:` routes.
  SplitBrainWatchDeps split;
  split.store = &store;
  split.live = in.live;
  split.clock = clock;
  split.region_event = webhooks.region_event;
  split.alert = [raw](const SplitBrainAlert& a) { return raw->alerts->Send(a); };
  split.log = [](const std::string& line) { spdlog::warn("{}", line); };
  p->split_brain = std::make_unique<SplitBrainWatch>(split);
  return std::unique_ptr<Daemon>(new Daemon(std::move(p)));
}

Status Daemon::Start(std::vector<std::string>* lines) {
  Parts& p = *parts_;
  if (p.started) return Status::Ok();
  p.started = true;
  for (const std::string& d : p.decisions) lines->push_back(d);
  p.watch->Start();
  std::vector<std::string> regions;
  for (const RegionConfig& r : p.config.regions) regions.push_back(r.name);
  if (Status s = p.split_brain->Start(regions); !s.ok())
    return s.WithMessage("split-brain watch: cannot read what it acted on before: " + s.message());
  p.runner->Start();  // resumes every active failover from its journal
  // A shadow drill a crash interrupted is cleaned up before anything new starts.
  for (const std::string& line : p.drills->ResumeAtStart()) lines->push_back(line);
  p.drill_scheduler->Start();
  p.readiness->Start();
  p.audit_seal->Start();
  p.running = true;
  return Status::Ok();
}

void Daemon::Stop() {
  Parts& p = *parts_;
  if (!p.started || p.stopped) return;
  p.stopped = true;
  p.running = false;
  p.audit_seal->Stop();
  p.drill_scheduler->Stop();
  p.drills->Stop();
  p.readiness->Stop();
  // Steps in flight finish (or time out) and are journaled; nothing new starts.
  p.runner->Stop();
  p.split_brain->Stop();
  p.watch->Stop();
}

ApiResponse Daemon::Handle(const ApiRequest& request) { return parts_->api->Handle(request); }
void Daemon::CountResponse(int status) { parts_->api->CountResponse(status); }
const Config& Daemon::config() const { return parts_->config; }

}  // namespace icewarden
