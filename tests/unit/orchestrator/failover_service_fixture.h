// A daemon's failover machinery without sockets: a SQLite store in memory, the Orchestrator,
// a route to a runbook of fake actions (tests/fakes/scripted_action.h; the fence step has
// kind fence.catalog_quiet so that quiet-window evidence can be tested; a fake gateway.fence
// is registered too, for gateway_closed), a LiveView the
// test publishes lag and silence into, the FailoverService and the FailoverRunner.
#pragma once

#include <gtest/gtest.h>

#include <fstream>
#include <functional>
#include <thread>

#include "actions/action.h"
#include "health/lag_monitor.h"
#include "orchestrator/config/config.h"
#include "orchestrator/failovers/failover_runner.h"
#include "orchestrator/failovers/failover_service.h"
#include "orchestrator/failovers/route_table.h"
#include "orchestrator/orchestrator.h"
#include "orchestrator/watch/live_view.h"
#include "state/sqlite_store.h"
#include "tests/fakes/fake_clock.h"
#include "tests/fakes/scripted_action.h"
#include "tests/fakes/test_paths.h"

namespace icewarden::testing {

inline constexpr const char* kUs = "us-east-1";
inline constexpr const char* kEu = "eu-central-1";

class FailoverServiceTest : public ::testing::Test {
 protected:
  // `fence` is the YAML of the fence section's steps.
  void Build(
      const std::string& fence = "  - {id: quiet, action: fence.catalog_quiet, params: {}}\n",
      bool two_person = false) {
    dir_ = MakeTempDir("icewarden-failover");
    runbook_path_ = dir_ + "/rb.yaml";
    std::ofstream(runbook_path_) << "name: test-failover\n"
                                    "parameters:\n  - {name: note, type: string, default: hi}\n"
                                    "guards:\n  - kind: target_healthy\n"
                                    "fence:\n"
                                 << fence << "promote:\n"
                                 << promote_
                                 << "verify:\n  - {id: check, action: fake.nocomp, params: {}}\n";
    config_.source_path = dir_ + "/config.yaml";
    for (const char* name : {kUs, kEu}) {
      RegionConfig r;
      r.name = name;
      r.catalog_uri = "http://127.0.0.1:9";
      config_.regions.push_back(r);
    }
    config_.ownership.default_owner = kUs;
    config_.policies.fencing_evidence = fencing_evidence_;
    config_.policies.two_person_approval = two_person;
    config_.policies.max_staleness = std::chrono::minutes(1);
    config_.policies.cooldown = std::chrono::minutes(2);
    config_.policies.unreachable_for = std::chrono::seconds(10);
    for (auto [name, from, to] :
         {std::tuple{"us-to-eu", kUs, kEu}, std::tuple{"eu-to-us", kEu, kUs}}) {
      FailoverRouteConfig route;
      route.name = name;
      route.from = from;
      route.to = to;
      route.runbook = runbook_path_;
      config_.failovers.push_back(route);
    }
    log_ = std::make_shared<ScriptedActionLog>();
    RegisterFakeActions(registry_, log_);
    for (const char* kind : {"fence.catalog_quiet", "gateway.fence"}) {
      ASSERT_TRUE(
          registry_.Register(std::make_unique<ScriptedAction>(kind, true, false, log_)).ok());
    }
    std::vector<std::string> errors;
    auto routes = RouteTable::Load(config_, registry_, &errors);
    ASSERT_TRUE(routes) << (errors.empty() ? "" : errors.front());
    routes_ = std::move(*routes);

    auto store = OpenSqliteStore({":memory:"}, clock_);
    ASSERT_TRUE(store.ok());
    store_ = std::move(*store);
    orchestrator_ = std::make_unique<Orchestrator>(config_, *store_, clock_);
    ASSERT_TRUE(orchestrator_->Start().ok());
    SetHealth(kUs, RegionHealth::kHealthy);
    SetHealth(kEu, RegionHealth::kHealthy);
    std::vector<OwnershipChange> claims;
    for (const char* t : {"sales.orders", "sales.items"})
      claims.push_back({*TableIdent::Parse(t), 0, kUs, ""});
    ASSERT_TRUE(store_->CompareAndSetOwnership(claims, Audit("ownership.claim")).ok());
    PublishLag(std::chrono::seconds(2), LagState::kBehind);

    FailoverServiceDeps d;
    d.config = &config_;
    d.routes = &routes_;
    d.store = store_.get();
    d.orchestrator = orchestrator_.get();
    d.live = &live_;
    d.clock = clock_;
    d.actions = &registry_;
    d.env = [](const std::string&) { return std::nullopt; };
    d.wake = [this](const std::string& id) {
      if (runner_) runner_->Wake(id);
    };
    if (!replicas_.empty()) {
      config_.state.backend = "etcd";
      config_.state.etcd.replicas = replicas_;
      d.replica_views = [this] {
        std::lock_guard lock(views_mu_);
        return views_;
      };
    }
    service_ = std::make_unique<FailoverService>(d);
    FailoverRunnerDeps r;
    r.store = store_.get();
    r.orchestrator = orchestrator_.get();
    r.service = service_.get();
    r.actions = &registry_;
    r.clock = clock_;
    r.poll = std::chrono::milliseconds(20);
    runner_deps_ = r;
    runner_ = std::make_unique<FailoverRunner>(r);
  }

  void TearDown() override {
    if (runner_) runner_->Stop();
  }

  AuditEvent Audit(const std::string& action) {
    AuditEvent e;
    e.actor = "test";
    e.source = "test";
    e.action = action;
    e.target = "test";
    e.reason = "test";
    return e;
  }

  void SetHealth(const std::string& region, RegionHealth health) {
    Region r;
    r.name = region;
    r.health = health;
    r.reason = region + " set by the test";
    r.since = clock_->Now();
    ASSERT_TRUE(store_->PutRegion(r, Audit("region.test")).ok());
  }

  // Every scope table trails in eu-central-1 by `lag` (or is in `state`), measured now.
  // Both tables as `replica` of `owner` sees them, measured now; `edit` adjusts each row.
  LagReport LagOf(std::chrono::milliseconds lag, LagState state, const std::string& owner = kUs,
                  const std::string& replica = kEu,
                  const std::function<void(TableLag&)>& edit = {}) {
    LagReport report;
    report.at = clock_->Now();
    for (const char* t : {"sales.items", "sales.orders"}) {
      TableLag row;
      row.table = *TableIdent::Parse(t);
      row.owner = owner;
      row.replica = replica;
      row.state = state;
      row.lag = lag;
      row.missing_commits = lag.count() > 0 ? 2 : 0;
      row.owner_snapshot_id = 7;
      row.reason = std::string(t) + ": test lag";
      if (edit) edit(row);
      report.tables.push_back(row);
    }
    return report;
  }

  // Every scope table trails in eu-central-1 by `lag` (or is in `state`), measured now.
  void PublishLag(std::chrono::milliseconds lag, LagState state) {
    live_.PublishLag(LagOf(lag, state));
  }

  Caller Person(const std::string& name, ActorKind kind) {
    return Caller{name, kind, "127.0.0.1:1"};
  }

  // Proposes us-east-1 -> eu-central-1 of owner:us-east-1 as operator "olivia"; the id.
  std::string Propose() {
    ProposeRequest req;
    req.to = kEu;
    req.scope = "owner:us-east-1";
    req.reason = "us-east-1 catalog down";
    CommandOutcome out = service_->Propose(Person("olivia", ActorKind::kOperator), req);
    EXPECT_TRUE(out.status.ok()) << out.status.ToString();
    if (!out.status.ok()) return "";
    return out.body["failover"]["id"].get<std::string>();
  }

  std::string PlanHash(const std::string& id) {
    auto f = store_->GetFailover(id);
    return (*f)->plan.plan_hash;
  }

  CommandOutcome Approve(const std::string& id, const std::string& who = "alice",
                         const std::string& accept = "") {
    ApproveRequest req;
    req.plan_hash = PlanHash(id);
    req.reason = "go";
    req.accept_data_loss = accept;
    return service_->Approve(Person(who, ActorKind::kApprover), id, req);
  }

  Failover Get(const std::string& id) { return **store_->GetFailover(id); }

  // Waits (bounded) until the failover is in `phase`.
  bool WaitFor(const std::string& id, FailoverPhase phase, int ms = 5000) {
    for (int i = 0; i < ms / 10; ++i) {
      if (Get(id).phase == phase) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return false;
  }

  // Set before Build: several replicas vote (state.etcd.replicas), and what each one's view
  // says (SetViews, under views_mu_: the runner reads them on its thread).
  std::vector<std::string> replicas_;
  void SetViews(std::vector<ReplicaView> views) {
    std::lock_guard lock(views_mu_);
    views_ = std::move(views);
  }
  std::mutex views_mu_;
  std::vector<ReplicaView> views_;

  // policies.fencing_evidence; set before Build (as config_.gateways, for gateway_closed).
  std::vector<std::string> fencing_evidence_{"steps_and_quiet_window", "old_region_unreachable",
                                             "operator"};
  // The promote section's steps, as YAML; set before Build.
  std::string promote_ = "  - {id: move, action: fake.idem, params: {}}\n";
  FailoverRunnerDeps runner_deps_;
  std::string dir_, runbook_path_;
  Config config_;
  std::shared_ptr<FakeClock> clock_ = std::make_shared<FakeClock>();
  std::shared_ptr<ScriptedActionLog> log_;
  ActionRegistry registry_;
  RouteTable routes_;
  std::unique_ptr<StateStore> store_;
  std::unique_ptr<Orchestrator> orchestrator_;
  LiveView live_;
  std::unique_ptr<FailoverService> service_;
  std::unique_ptr<FailoverRunner> runner_;
};

}  // namespace icewarden::testing
