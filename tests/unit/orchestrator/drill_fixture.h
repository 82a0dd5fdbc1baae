// Drills over the failover fixture (failover_service_fixture.h): the same store, routes and
// FailoverService, a DrillService running shadow steps inline, and fake actions under the
// kinds a shadow run retargets (dns.rfc2136, verify.dns, alert.alertmanager) or refuses
// (http.request), recording the params each run got.
#pragma once

#include <mutex>

#include "orchestrator/drills/drill_report.h"
#include "orchestrator/drills/drill_scheduler.h"
#include "orchestrator/drills/drill_service.h"
#include "state/drill_store.h"
#include "tests/unit/orchestrator/failover_service_fixture.h"

namespace icewarden::testing {

// An action that records the params and context of every run and compensation.
class RecordingAction final : public Action {
 public:
  struct Call {
    std::string what;  // run | compensate
    nlohmann::json params;
    std::string scope, key, before;
  };
  RecordingAction(std::string kind, bool compensates, bool fails = false)
      : kind_(std::move(kind)), compensates_(compensates), fails_(fails) {}
  std::string_view kind() const override { return kind_; }
  bool idempotent() const override { return true; }
  std::vector<ParamError> Validate(const nlohmann::json&) const override { return {}; }
  std::string Plan(const nlohmann::json&) const override { return kind_ + " (recorded)"; }
  Result<std::string> Capture(const nlohmann::json&, const ActionContext& ctx) override {
    return std::string(R"({"before":")") + ctx.step_id + "\"}";
  }
  ActionResult Run(const nlohmann::json& params, const ActionContext& ctx) override {
    Record({"run", params, ctx.scope, ctx.idempotency_key, ctx.before_json});
    return fails_ ? ActionResult::Failed(kind_ + " refused") : ActionResult::Succeeded("done");
  }
  bool has_compensation() const override { return compensates_; }
  ActionResult Compensate(const nlohmann::json& params, const nlohmann::json&,
                          const ActionContext& ctx) override {
    Record({"compensate", params, ctx.scope, ctx.idempotency_key, ctx.before_json});
    return ActionResult::Succeeded("undone");
  }
  std::vector<Call> Calls() const {
    std::lock_guard lock(mu_);
    return calls_;
  }
  void Record(Call c) {
    std::lock_guard lock(mu_);
    calls_.push_back(std::move(c));
  }
  std::string kind_;
  bool compensates_, fails_;

 private:
  mutable std::mutex mu_;
  std::vector<Call> calls_;
};

class DrillTest : public FailoverServiceTest {
 protected:
  // Registers the recording kinds, builds the failover fixture with a promote section that
  // pages, moves, updates DNS and calls a gateway, and a drill over the us-to-eu route.
  void BuildDrills(bool dns_fails = false) {
    for (auto [kind, comp, fails] :
         {std::tuple{"dns.rfc2136", true, dns_fails},
          std::tuple{"alert.alertmanager", false, false}, std::tuple{"http.request", true, false},
          std::tuple{"verify.dns", false, false},
          std::tuple{"switchover.demotion_token", false, false},
          std::tuple{"ownership.transfer", true, false}}) {
      auto a = std::make_unique<RecordingAction>(kind, comp, fails);
      recorders_[kind] = a.get();
      ASSERT_TRUE(registry_.Register(std::move(a)).ok());
    }
    promote_ =
        "  - {id: page, action: alert.alertmanager, params: {url: 'http://127.0.0.1:9',"
        " labels: {alertname: IcewardenFailover}, annotations: {summary: 'moving ${scope}'}}}\n"
        "  - {id: move, action: ownership.transfer, params: {scope: '${scope}'}}\n"
        "  - {id: gateway, action: http.request, params: {url: 'http://127.0.0.1:9/stop'}}\n"
        "  - {id: dns, action: dns.rfc2136, params: {records: [{name: writer.lake.lab.,"
        " type: CNAME, value: 'catalog.${to}.lake.lab.'}]}}\n"
        "  - {id: dns-check, action: verify.dns, params: {name: writer.lake.lab.}}\n";
    DrillConfig d;
    d.name = "weekly";
    d.route = "us-to-eu";
    d.from = kUs;
    d.to = kEu;
    d.scope = "owner:us-east-1";
    d.mode = "shadow";
    d.schedule = "30 2 * * *";
    d.time_zone = "Europe/Berlin";
    d.rto_target = std::chrono::minutes(5);
    d.targets.dns_name = "drill-writer.lake.lab.";
    d.targets.namespace_ = "drill";
    config_.drills.push_back(d);
    Build();
    // The failback of a live drill is a switchover back: a route Build does not make.
    FailoverRouteConfig back;
    back.name = "back-to-us";
    back.kind = "switchover";
    back.from = kEu;
    back.to = kUs;
    // A switchover's runbook must record a demotion token before it moves anything.
    back.runbook = dir_ + "/back.yaml";
    std::ofstream(back.runbook)
        << "name: back\n"
           "guards:\n  - kind: target_healthy\n"
           "fence:\n  - {id: quiet, action: fence.catalog_quiet, params: {}}\n"
           "promote:\n"
           "  - {id: token, action: switchover.demotion_token, params: {}}\n"
           "  - {id: move, action: fake.idem, params: {}}\n"
           "verify:\n  - {id: check, action: fake.nocomp, params: {}}\n";
    config_.failovers.push_back(back);
    std::vector<std::string> errors;
    auto routes = RouteTable::Load(config_, registry_, &errors);
    ASSERT_TRUE(routes) << (errors.empty() ? "" : errors.front());
    routes_ = std::move(*routes);
    drills_ = DrillStoreOf(*store_);
    ASSERT_NE(drills_, nullptr);
    MakeDrillService();
  }

  void MakeDrillService() {
    DrillServiceDeps d;
    d.config = &config_;
    d.routes = &routes_;
    d.store = store_.get();
    d.drills = drills_;
    d.failovers = service_.get();
    d.actions = &registry_;
    d.clock = clock_;
    d.live = &live_;
    d.env = [](const std::string&) { return std::nullopt; };
    d.sleep = [](std::chrono::milliseconds) {};
    d.run_inline = true;
    drill_service_ = std::make_unique<DrillService>(d);
  }

  std::string RunDrill(const std::string& mode) {
    CommandOutcome out =
        drill_service_->Run(Person("olivia", ActorKind::kOperator), {"weekly", mode, 0});
    EXPECT_TRUE(out.status.ok()) << out.status.ToString();
    return out.body["run"].value("id", std::string());
  }

  nlohmann::json Report(const std::string& id) {
    auto r = drill_service_->Report(id);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? *r : nlohmann::json::object();
  }

  std::string OwnershipDigest() {
    std::string out;
    auto rows = store_->ListOwnership({});
    for (const Ownership& o : *rows)
      out += o.table.ToString() + "=" + o.owner + "@" + std::to_string(o.epoch) + ";";
    return out;
  }

  std::map<std::string, RecordingAction*> recorders_;
  DrillStore* drills_ = nullptr;
  std::unique_ptr<DrillService> drill_service_;
};

}  // namespace icewarden::testing
