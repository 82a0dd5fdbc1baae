#include "orchestrator/orchestrator.h"

#include <gtest/gtest.h>

#include "orchestrator/config/config.h"
#include "state/sqlite_store.h"
#include "tests/fakes/fake_clock.h"
#include "tests/fakes/scripted_action.h"

namespace icewarden {
namespace {

using P = FailoverPhase;

Config TwoRegions() {
  Config c;
  c.source_path = "test.yaml";
  for (const char* name : {"us-east-1", "eu-central-1"}) {
    RegionConfig r;
    r.name = name;
    r.catalog_uri = "http://127.0.0.1:9";
    r.probe.fall = 3;
    r.probe.rise = 2;
    c.regions.push_back(r);
  }
  c.ownership.default_owner = "us-east-1";
  c.policies.fencing_evidence = {"steps_and_quiet_window", "operator"};
  return c;
}

class OrchestratorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto s = OpenSqliteStore({":memory:"}, clock_);
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    store_ = std::move(*s);
  }

  Failover Propose(const std::string& id) {
    Failover f;
    f.id = id;
    f.scope = "namespace:eu.*";
    f.from = "eu-central-1";
    f.to = "us-east-1";
    f.proposed_by = "olivia";
    f.reason = "eu-central-1 catalog down";
    EXPECT_TRUE(
        store_->CreateFailover(f, {0, 0, "olivia", "cli", "failover.propose", id, f.reason, "{}"})
            .ok());
    return f;
  }

  std::vector<AuditEvent> Audit(const std::string& target) {
    AuditQuery q;
    q.target = target;
    q.limit = 1000;
    return *store_->ListAudit(q);
  }

  std::shared_ptr<testing::FakeClock> clock_ = std::make_shared<testing::FakeClock>();
  std::unique_ptr<StateStore> store_;
  Config config_ = TwoRegions();
};

TEST_F(OrchestratorTest, StartRecordsNewRegionsAsDegradedOnce) {
  Orchestrator o(config_, *store_, clock_);
  auto first = o.Start();
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  ASSERT_EQ(first->size(), 2u);
  auto regions = *store_->ListRegions();
  ASSERT_EQ(regions.size(), 2u);
  for (const auto& r : regions) {
    EXPECT_EQ(r.health, RegionHealth::kDegraded);
    EXPECT_NE(r.reason.find("awaiting 2 passed probe rounds"), std::string::npos) << r.reason;
  }
  auto second = Orchestrator(config_, *store_, clock_).Start();
  ASSERT_TRUE(second.ok());
  EXPECT_TRUE(second->empty()) << "a restart must not re-record known regions";
  EXPECT_EQ(Audit("us-east-1").size(), 1u);
}

TEST_F(OrchestratorTest, ARegionDroppedFromTheConfigIsKeptAndReported) {
  Orchestrator(config_, *store_, clock_).Start();
  config_.regions.pop_back();
  auto d = Orchestrator(config_, *store_, clock_).Start();
  ASSERT_TRUE(d.ok());
  ASSERT_EQ(d->size(), 1u);
  EXPECT_EQ((*d)[0].subject, "eu-central-1");
  EXPECT_EQ(store_->ListRegions()->size(), 2u);
}

TEST_F(OrchestratorTest, AFailoverTransitionIsPersistedWithItsAuditEvent) {
  Orchestrator o(config_, *store_, clock_);
  Propose("fo-1");
  auto d = o.ApplyToFailover(
      "fo-1", {FailoverEvent::kApprove, ActorKind::kApprover, "ada", "RPO ok"}, "127.0.0.1:1");
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  EXPECT_TRUE(d->accepted);
  auto stored = *store_->GetFailover("fo-1");
  ASSERT_TRUE(stored.has_value());
  EXPECT_EQ(stored->phase, P::kApproved);
  EXPECT_EQ(stored->version, 2);
  ASSERT_EQ(stored->approvals.size(), 1u);
  EXPECT_EQ(stored->approvals[0].by, "ada");
  auto audit = Audit("fo-1");
  ASSERT_EQ(audit.size(), 2u);
  EXPECT_EQ(audit[1].action, "failover.approve");
  EXPECT_EQ(audit[1].actor, "ada");
  EXPECT_EQ(audit[1].source, "127.0.0.1:1");
  EXPECT_EQ(audit[1].reason, d->reason);
}

TEST_F(OrchestratorTest, ARefusedEventChangesNothingButIsAudited) {
  Orchestrator o(config_, *store_, clock_);
  Propose("fo-2");
  auto d = o.ApplyToFailover(
      "fo-2", {FailoverEvent::kApprove, ActorKind::kWebhook, "alertmanager", "auto"}, "webhook");
  ASSERT_TRUE(d.ok());
  EXPECT_FALSE(d->accepted);
  auto stored = *store_->GetFailover("fo-2");
  EXPECT_EQ(stored->phase, P::kProposed);
  EXPECT_EQ(stored->version, 1);
  auto audit = Audit("fo-2");
  ASSERT_EQ(audit.size(), 2u);
  EXPECT_EQ(audit[1].action, "failover.approve.refused");
  EXPECT_EQ(o.ApplyToFailover("nope", {FailoverEvent::kAbort}, "cli").status().code(),
            StatusCode::kNotFound);
}

TEST_F(OrchestratorTest, TheWholeHappyPathIsDurableAndFencingIsRequired) {
  Orchestrator o(config_, *store_, clock_);
  Propose("fo-3");
  auto step = [&](FailoverInput in) {
    auto d = o.ApplyToFailover("fo-3", in, "test");
    EXPECT_TRUE(d.ok()) << d.status().ToString();
    return *d;
  };
  EXPECT_TRUE(step({FailoverEvent::kApprove, ActorKind::kApprover, "ada", "go"}).accepted);
  EXPECT_TRUE(step({FailoverEvent::kBeginFencing, ActorKind::kExecutor, "executor"}).accepted);
  // Rule 1: no promotion while fencing is unconfirmed.
  EXPECT_FALSE(step({FailoverEvent::kBeginPromotion, ActorKind::kExecutor, "executor"}).accepted);
  EXPECT_TRUE(
      step({FailoverEvent::kConfirmFencing, ActorKind::kApprover, "otto", "region powered off"})
          .accepted);
  EXPECT_TRUE(step({FailoverEvent::kBeginPromotion, ActorKind::kExecutor, "executor"}).accepted);
  EXPECT_TRUE(step({FailoverEvent::kPromoted, ActorKind::kExecutor, "executor"}).accepted);
  EXPECT_TRUE(step({FailoverEvent::kVerified, ActorKind::kExecutor, "executor"}).accepted);
  auto stored = *store_->GetFailover("fo-3");
  EXPECT_EQ(stored->phase, P::kCompleted);
  ASSERT_TRUE(stored->fencing.has_value());
  EXPECT_EQ(stored->fencing->reason, "region powered off");
  EXPECT_TRUE(store_->ListActiveFailovers()->empty());
}

TEST_F(OrchestratorTest, HealthChangesArePersistedWithTheirReasonAndNothingElseIs) {
  Orchestrator o(config_, *store_, clock_);
  ASSERT_TRUE(o.Start().ok());
  Region before = **store_->GetRegion("us-east-1");
  HealthThresholds t{3, 2};
  HealthInput fail{HealthEvent::kProbeRoundFailed, EventSource::kProbe, "catalog_config",
                   "connection refused", 1000};
  // Three failed rounds from degraded: only the third changes health.
  Region r = before;
  int persisted = 0;
  for (int i = 0; i < 3; ++i) {
    HealthDecision d = ApplyHealthEvent(r, fail, t);
    ASSERT_TRUE(o.RecordRegionHealth(d, "probe").ok());
    persisted += d.changed;
    r = d.next;
  }
  EXPECT_EQ(persisted, 1);
  auto stored = **store_->GetRegion("us-east-1");
  EXPECT_EQ(stored.health, RegionHealth::kUnreachable);
  EXPECT_EQ(stored.reason,
            "us-east-1 unreachable: 3 consecutive catalog_config failures: connection refused");
  auto audit = Audit("us-east-1");
  ASSERT_EQ(audit.size(), 2u);  // recorded at start, then unreachable
  EXPECT_EQ(audit[1].action, "region.unreachable");
  EXPECT_EQ(audit[1].reason, stored.reason);
  EXPECT_EQ(audit[1].at, 1000);
}

// A fence from an operator leaves health and its since alone: the audit says what changed and
// when, not the health's name and its old time.
TEST_F(OrchestratorTest, AnOverlayChangeIsAuditedAsItselfWhenItHappens) {
  Orchestrator o(config_, *store_, clock_);
  ASSERT_TRUE(o.Start().ok());
  Region before = **store_->GetRegion("us-east-1");
  clock_->Advance(std::chrono::seconds(90));
  HealthInput fence{HealthEvent::kSetFenced, EventSource::kOperator, "", "drill", 0};
  HealthDecision d = ApplyHealthEvent(before, fence, HealthThresholds{});
  ASSERT_TRUE(o.RecordRegionHealth(d, "olivia").ok());
  HealthInput unfence{HealthEvent::kClearFenced, EventSource::kOperator, "", "done", 0};
  ASSERT_TRUE(
      o.RecordRegionHealth(ApplyHealthEvent(d.next, unfence, HealthThresholds{}), "olivia").ok());
  auto audit = Audit("us-east-1");
  ASSERT_EQ(audit.size(), 3u);
  EXPECT_EQ(audit[1].action, "region.fenced");
  EXPECT_EQ(audit[1].at, clock_->Now());
  EXPECT_NE(audit[1].at, before.since);
  EXPECT_EQ(audit[1].actor, "olivia");
  EXPECT_EQ(audit[2].action, "region.unfenced");
}

}  // namespace
}  // namespace icewarden

namespace icewarden {
namespace {

// The executor moves a failover only through the Orchestrator (FailoverTransitions), so
// every transition it makes is persisted and audited like a person's.
TEST_F(OrchestratorTest, TheExecutorDrivesAFailoverThroughTheOrchestrator) {
  Orchestrator o(config_, *store_, clock_);
  Propose("fo-9");
  ASSERT_TRUE(
      o.ApplyToFailover("fo-9", {FailoverEvent::kApprove, ActorKind::kApprover, "ada", "go"}, "cli")
          ->accepted);
  ActionRegistry registry;
  auto log = std::make_shared<testing::ScriptedActionLog>();
  testing::RegisterFakeActions(registry, log);
  Runbook runbook;
  runbook.name = "t";
  for (auto* section : {&runbook.fence, &runbook.promote, &runbook.verify}) {
    RunbookStep step;
    step.id = section == &runbook.fence ? "f1" : section == &runbook.promote ? "p1" : "v1";
    step.action = "fake.idem";
    step.timeout = std::chrono::seconds(5);
    section->push_back(step);
  }
  ExecutorOptions options;
  options.policy = o.Policy();
  RunbookExecutor executor(*store_, registry, o, clock_, options);
  TemplateBindings bindings;
  bindings.failover_id = "fo-9";
  auto report = executor.Drive("fo-9", runbook, bindings);
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_EQ(report->phase, FailoverPhase::kCompleted) << report->summary;
  std::vector<std::string> actions;
  for (const auto& e : Audit("fo-9")) actions.push_back(e.action);
  EXPECT_EQ(actions, (std::vector<std::string>{"failover.propose", "failover.approve",
                                               "failover.begin_fencing", "failover.confirm_fencing",
                                               "failover.begin_promotion", "failover.promoted",
                                               "failover.verified"}));
  EXPECT_EQ(Audit("fo-9")[2].source, "executor");
}

}  // namespace
}  // namespace icewarden
