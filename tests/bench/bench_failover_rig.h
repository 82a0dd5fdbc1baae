// FailoverRig: a daemon's failover machinery without sockets, for benchmarks: the Orchestrator,
// one route (us-east-1 -> eu-central-1, any owner scope) to a runbook file, the FailoverService
// and the FailoverRunner over a durable SQLite store in its own folder, a LiveView holding a
// caught-up lag report for every table, both regions healthy in the store. The caller registers
// the action kinds the runbook names (fakes, or registerBuiltinActions) before Build.
//
// Completion is observed through the runner's log callback, which fires as each executor Drive
// returns (after its last durable write), so a measurement does not poll the store.
// Thread-safety: Build, Propose, Approve and the Wait* calls from one thread.
#pragma once

#include <stdlib.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "actions/action.h"
#include "actions/table_observations.h"
#include "health/catalog_client.h"
#include "health/lag_monitor.h"
#include "orchestrator/config/config.h"
#include "orchestrator/failovers/failover_runner.h"
#include "orchestrator/failovers/failover_service.h"
#include "orchestrator/failovers/route_table.h"
#include "orchestrator/orchestrator.h"
#include "orchestrator/watch/live_view.h"
#include "state/clock.h"
#include "state/sqlite_store.h"

namespace icewarden::bench {

inline constexpr const char* kUs = "us-east-1";
inline constexpr const char* kEu = "eu-central-1";

// A new empty folder under $TMPDIR (or /tmp).
inline std::string MakeBenchDir(const std::string& prefix) {
  const char* base = std::getenv("TMPDIR");
  std::string dir = std::string(base && *base ? base : "/tmp") + "/" + prefix + "-XXXXXX";
  if (mkdtemp(dir.data()) == nullptr) {
    std::perror("mkdtemp");
    std::exit(1);
  }
  return dir;
}

struct RigOptions {
  std::string dir;               // the store and the runbook go here
  bool store_in_memory = false;  // ":memory:" instead of DIR/state.db (no fsync)
  std::string runbook_yaml;      // the route's runbook
  std::vector<std::string> fencing_evidence{"steps_and_quiet_window", "operator"};
  std::map<std::string, std::string> env;  // ${env.NAME}
  std::string us_catalog_uri = "http://127.0.0.1:9", eu_catalog_uri = "http://127.0.0.1:9";
  FailoverKind kind = FailoverKind::kFailover;  // the route's kind, and what Propose proposes
};

class FailoverRig {
 public:
  // `registry` must outlive the rig and hold every kind the runbook names.
  FailoverRig(RigOptions options, ActionRegistry& registry)
      : options_(std::move(options)), registry_(registry) {}
  ~FailoverRig() {
    if (runner_) runner_->Stop();
  }

  // Opens the store (Build does when this was not called): for actions that need it before
  // they are registered. Empty on success.
  std::string OpenStore() {
    if (store_) return "";
    auto store = OpenSqliteStore(
        {options_.store_in_memory ? std::string(":memory:") : options_.dir + "/state.db"}, clock_);
    if (!store.ok()) return store.status().ToString();
    store_ = std::move(*store);
    return "";
  }

  // Registers every built-in action kind in the rig's registry, reaching each region's catalog
  // at region_url(region) (warehouse "lab", 10 s deadline) and the store's region health.
  // Opens the store first. Empty on success.
  std::string RegisterBuiltinActions(std::function<std::string(const std::string&)> region_url) {
    if (auto e = OpenStore(); !e.empty()) return e;
    ActionEnv env;
    env.clock = clock_;
    env.store = store_.get();
    env.observations = observations_;  // as serve has them
    env.catalog = [region_url](const std::string& region) -> std::optional<CatalogClientOptions> {
      CatalogClientOptions o;
      o.base_uri = region_url(region);
      if (o.base_uri.empty()) return std::nullopt;
      o.warehouse = "lab";
      o.default_deadline = std::chrono::seconds(10);
      return o;
    };
    env.region_health = [this](const std::string& region) -> std::optional<Region> {
      auto r = store_->GetRegion(region);
      if (!r.ok()) return std::nullopt;
      return *r;
    };
    if (auto s = registerBuiltinActions(registry_, env); !s.ok()) return s.ToString();
    action_env_ = std::move(env);
    return "";
  }
  // RegisterBuiltinActions, Build and ClaimAndPublishLag(tables): a rig over the lab's regions,
  // ready to propose. Empty on success, else which part failed and why.
  std::string Prepare(std::function<std::string(const std::string&)> region_url,
                      const std::vector<TableIdent>& tables) {
    if (auto e = RegisterBuiltinActions(std::move(region_url)); !e.empty()) return "actions: " + e;
    if (auto e = Build(); !e.empty()) return "rig: " + e;
    if (auto e = ClaimAndPublishLag(tables); !e.empty()) return "claims: " + e;
    return "";
  }

  // What RegisterBuiltinActions gave the actions.
  const ActionEnv& action_env() const { return action_env_; }

  // Empty on success, else what went wrong.
  std::string Build() {
    if (auto e = OpenStore(); !e.empty()) return e;
    const std::string runbook = options_.dir + "/runbook.yaml";
    std::ofstream(runbook) << options_.runbook_yaml;
    config_.source_path = options_.dir + "/config.yaml";
    for (auto [name, uri] :
         {std::pair{kUs, options_.us_catalog_uri}, {kEu, options_.eu_catalog_uri}}) {
      RegionConfig r;
      r.name = name;
      r.catalog_uri = uri;
      r.warehouse = "lab";
      config_.regions.push_back(r);
    }
    config_.ownership.default_owner = kUs;
    config_.policies.fencing_evidence = options_.fencing_evidence;
    config_.policies.max_staleness = std::chrono::minutes(5);
    config_.policies.cooldown = std::chrono::milliseconds(0);
    FailoverRouteConfig route;
    route.name = "bench";
    route.kind = FailoverKindName(options_.kind);
    route.from = kUs;
    route.to = kEu;
    route.scope = "owner:*";
    route.runbook = runbook;
    config_.failovers.push_back(route);
    std::vector<std::string> errors;
    auto routes = RouteTable::Load(config_, registry_, &errors);
    if (!routes) return errors.empty() ? "route table" : errors.front();
    routes_ = std::move(*routes);

    orchestrator_ = std::make_unique<Orchestrator>(config_, *store_, clock_);
    if (auto s = orchestrator_->Start(); !s.ok()) return "orchestrator: " + s.status().ToString();
    for (const char* name : {kUs, kEu}) {
      Region r;
      r.name = name;
      r.health = RegionHealth::kHealthy;
      r.reason = "set healthy by the benchmark";
      r.since = clock_->Now();
      if (auto s = store_->PutRegion(r, Audit("region.bench")); !s.ok()) return s.ToString();
    }

    FailoverServiceDeps d;
    d.config = &config_;
    d.routes = &routes_;
    d.store = store_.get();
    d.orchestrator = orchestrator_.get();
    d.live = &live_;
    d.clock = clock_;
    d.actions = &registry_;
    d.env = [this](const std::string& name) -> std::optional<std::string> {
      auto it = options_.env.find(name);
      if (it == options_.env.end()) return std::nullopt;
      return it->second;
    };
    d.wake = [this](const std::string& id) {
      if (runner_) runner_->Wake(id);
    };
    service_ = std::make_unique<FailoverService>(d);
    FailoverRunnerDeps r;
    r.store = store_.get();
    r.orchestrator = orchestrator_.get();
    r.service = service_.get();
    r.actions = &registry_;
    r.clock = clock_;
    r.poll = std::chrono::milliseconds(1000);
    r.log = [this](const std::string& summary) {
      std::lock_guard lock(mu_);
      drives_.push_back({std::chrono::steady_clock::now(), summary});
      cv_.notify_all();
    };
    r.drive_ended = [obs = observations_](const std::string& id) { obs->Forget(id); };
    runner_ = std::make_unique<FailoverRunner>(r);
    runner_->Start();
    return "";
  }

  // Every table owned by us-east-1 at epoch 1, and a lag round that saw each caught up in
  // eu-central-1, measured now.
  std::string ClaimAndPublishLag(const std::vector<TableIdent>& tables) {
    for (std::size_t i = 0; i < tables.size(); i += 1000) {
      std::vector<OwnershipChange> claims;
      for (std::size_t j = i; j < tables.size() && j < i + 1000; ++j)
        claims.push_back({tables[j], 0, kUs, ""});
      if (auto s = store_->CompareAndSetOwnership(claims, Audit("ownership.claim")); !s.ok())
        return s.ToString();
    }
    LagReport report;
    report.at = clock_->Now();
    for (const TableIdent& t : tables) {
      TableLag row;
      row.table = t;
      row.owner = kUs;
      row.replica = kEu;
      row.state = LagState::kCaughtUp;
      row.owner_snapshot_id = 1;
      row.replica_snapshot_id = 1;
      row.within_max_staleness = true;
      row.reason = t.ToString() + ": caught up (benchmark)";
      report.tables.push_back(std::move(row));
    }
    std::sort(report.tables.begin(), report.tables.end(),
              [](const TableLag& a, const TableLag& b) { return a.table < b.table; });
    live_.PublishLag(std::move(report));
    return "";
  }

  // Proposes owner:us-east-1 -> eu-central-1; the id, or empty (the refusal on stderr).
  std::string Propose() {
    ProposeRequest req;
    req.kind = options_.kind;
    req.to = kEu;
    req.scope = std::string("owner:") + kUs;
    req.reason = "benchmark";
    CommandOutcome out = service_->Propose(Caller{"olivia", ActorKind::kOperator, "bench"}, req);
    if (!out.status.ok()) {
      std::fprintf(stderr, "propose: %s\n", out.status.ToString().c_str());
      return "";
    }
    return out.body["failover"]["id"].get<std::string>();
  }

  std::string PlanHashOf(const std::string& id) {
    return (*store_->GetFailover(id))->plan.plan_hash;
  }

  // Approves the plan as proposed; empty on success.
  std::string Approve(const std::string& id, const std::string& plan_hash) {
    ApproveRequest req;
    req.plan_hash = plan_hash;
    req.reason = "go";
    CommandOutcome out = service_->Approve(Caller{"alice", ActorKind::kApprover, "bench"}, id, req);
    return out.status.ok() ? "" : out.status.ToString();
  }

  std::string ConfirmFencing(const std::string& id) {
    CommandOutcome out = service_->ConfirmFencing(Caller{"alice", ActorKind::kApprover, "bench"},
                                                  id, "writers stopped (benchmark)");
    return out.status.ok() ? "" : out.status.ToString();
  }

  // Waits (bounded) until a Drive of `id` returns with the failover in `phase`; the time the
  // Drive returned, or nullopt (the phase it is in is printed).
  std::optional<std::chrono::steady_clock::time_point> WaitForDrive(
      const std::string& id, FailoverPhase phase, std::chrono::milliseconds limit) {
    const auto stop = std::chrono::steady_clock::now() + limit;
    std::unique_lock lock(mu_);
    for (;;) {
      while (seen_ < drives_.size()) {
        auto [at, summary] = drives_[seen_++];
        lock.unlock();
        auto f = store_->GetFailover(id);
        lock.lock();
        if (f.ok() && f->has_value() && (*f)->phase == phase) return at;
        if (f.ok() && f->has_value() && IsTerminal((*f)->phase)) {
          std::fprintf(stderr, "%s ended %s: %s\n", id.c_str(), FailoverPhaseName((*f)->phase),
                       summary.c_str());
          return std::nullopt;
        }
      }
      if (cv_.wait_until(lock, stop) == std::cv_status::timeout && seen_ == drives_.size()) {
        auto f = store_->GetFailover(id);
        std::fprintf(stderr, "%s: not %s after %llds (it is %s)\n", id.c_str(),
                     FailoverPhaseName(phase), static_cast<long long>(limit.count() / 1000),
                     f.ok() && f->has_value() ? FailoverPhaseName((*f)->phase) : "unknown");
        return std::nullopt;
      }
    }
  }

  StateStore& store() { return *store_; }
  std::shared_ptr<Clock> clock() const { return clock_; }

  static AuditEvent Audit(const std::string& action) {
    AuditEvent e;
    e.actor = "bench";
    e.source = "bench";
    e.action = action;
    e.target = "bench";
    e.reason = "benchmark setup";
    return e;
  }

 private:
  ActionEnv action_env_;
  std::shared_ptr<TableObservations> observations_ = std::make_shared<TableObservations>();
  RigOptions options_;
  ActionRegistry& registry_;
  std::shared_ptr<Clock> clock_ = SystemClock();
  Config config_;
  RouteTable routes_;
  std::unique_ptr<StateStore> store_;
  std::unique_ptr<Orchestrator> orchestrator_;
  LiveView live_;
  std::unique_ptr<FailoverService> service_;
  std::unique_ptr<FailoverRunner> runner_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::pair<std::chrono::steady_clock::time_point, std::string>> drives_;
  std::size_t seen_ = 0;
};

}  // namespace icewarden::bench
