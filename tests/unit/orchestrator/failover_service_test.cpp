// The failover commands and the daemon's runner, end to end over fake actions: what an
// operator and an approver rely on (guards refuse with their name and reason, approvals are
// bound to the plan, evidence is checked, a held failover waits for a person) and rule 1.
#include <gtest/gtest.h>

#include <map>
#include <mutex>
#include <random>

#include "orchestrator/api/api.h"
#include "orchestrator/failovers/failover_report.h"
#include "tests/unit/orchestrator/failover_service_fixture.h"

namespace icewarden::testing {
namespace {

using P = FailoverPhase;

bool GuardFailed(const CommandOutcome& out, const std::string& guard) {
  for (const auto& g : out.body.value("guards", nlohmann::json::array()))
    if (g["guard"] == guard && !g["ok"].get<bool>() && !g["waived"].get<bool>()) return true;
  return false;
}

TEST_F(FailoverServiceTest, DryRunShowsPlanAndGuardsAndCreatesNothing) {
  Build();
  ProposeRequest req{FailoverKind::kFailover, kEu, "owner:us-east-1", "drill", "", true};
  CommandOutcome out = service_->Propose(Person("olivia", ActorKind::kOperator), req);
  ASSERT_TRUE(out.status.ok()) << out.status.ToString();
  EXPECT_EQ(out.body["tables"], 2);
  EXPECT_EQ(out.body["plan"]["steps"].size(), 3u);
  EXPECT_TRUE(out.body["plan_hash"].get<std::string>().starts_with("sha256:"));
  EXPECT_TRUE(out.body["guards_pass"].get<bool>()) << out.body.dump();
  EXPECT_TRUE(store_->ListFailovers(10)->empty());
}

// A proposal may name its route (a drill runs the one it names, not the first match); a
// route that does not cover the proposal, or no route by that name, is refused with why.
TEST_F(FailoverServiceTest, ANamedRouteIsTheOneRunAndMustCoverTheProposal) {
  Build();
  ProposeRequest req{FailoverKind::kFailover, kEu, "owner:us-east-1", "drill", "", true};
  req.route = "us-to-eu";
  CommandOutcome out = service_->Propose(Person("olivia", ActorKind::kOperator), req);
  ASSERT_TRUE(out.status.ok()) << out.status.ToString();
  EXPECT_EQ(out.body["plan"]["route"], "us-to-eu") << out.body["plan"].dump();

  req.route = "eu-to-us";
  out = service_->Propose(Person("olivia", ActorKind::kOperator), req);
  EXPECT_EQ(out.status.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(out.status.message().find("eu-to-us is a failover from eu-central-1 to us-east-1"),
            std::string::npos)
      << out.status.message();

  req.route = "nowhere";
  out = service_->Propose(Person("olivia", ActorKind::kOperator), req);
  EXPECT_EQ(out.status.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(out.status.message().find("no failover route named 'nowhere'"), std::string::npos);
  EXPECT_TRUE(store_->ListFailovers(10)->empty());
}

TEST_F(FailoverServiceTest, ApprovedFailoverRunsToCompletedWithQuietWindowEvidence) {
  Build();
  runner_->Start();
  const std::string id = Propose();
  CommandOutcome approved = Approve(id);
  ASSERT_TRUE(approved.status.ok()) << approved.status.ToString();
  ASSERT_TRUE(WaitFor(id, P::kCompleted)) << Get(id).last_reason;
  Failover f = Get(id);
  ASSERT_TRUE(f.fencing);
  EXPECT_EQ(f.fencing->kind, FencingKind::kEvidenceSteps);
  EXPECT_NE(f.fencing->evidence_json.find("fence.catalog_quiet"), std::string::npos);
  EXPECT_NE(f.rpo_json.find("sales.orders"), std::string::npos) << f.rpo_json;
  EXPECT_EQ(log_->RunCount("move"), 1);
  auto report = BuildFailoverReport(*store_, id);
  ASSERT_TRUE(report.ok());
  EXPECT_EQ((*report)["failover"]["phase"], "completed");
  EXPECT_TRUE((*report)["durations"]["machine_ms"].is_number()) << (*report)["durations"].dump();
  EXPECT_EQ((*report)["steps"].size(), 3u);
}

TEST_F(FailoverServiceTest, EveryDriveEndTellsTheHookWhichFailoverItWas) {
  // serve drops what the steps kept for one another (ActionEnv::observations) on this call.
  Build();
  std::mutex mu;
  std::vector<std::string> ended;
  runner_deps_.drive_ended = [&](const std::string& id) {
    std::lock_guard lock(mu);
    ended.push_back(id);
  };
  runner_ = std::make_unique<FailoverRunner>(runner_deps_);
  runner_->Start();
  const std::string id = Propose();
  ASSERT_TRUE(Approve(id).status.ok());
  ASSERT_TRUE(WaitFor(id, P::kCompleted)) << Get(id).last_reason;
  runner_->Stop();
  std::lock_guard lock(mu);
  ASSERT_FALSE(ended.empty());
  for (const auto& e : ended) EXPECT_EQ(e, id);
}

// Rule 8: a switchover route's runbook must wait for the demotion token before it transfers
// ownership; a runbook that does not is refused when the routes are loaded (serve, validate).
TEST_F(FailoverServiceTest, SwitchoverRouteWithoutADemotionTokenStepIsRefused) {
  Build();
  FailoverRouteConfig route;
  route.name = "planned";
  route.kind = "switchover";
  route.from = kUs;
  route.to = kEu;
  route.runbook = runbook_path_;
  route.line = 7;
  route.column = 5;
  config_.failovers.push_back(route);
  std::vector<std::string> errors;
  EXPECT_FALSE(RouteTable::Load(config_, registry_, &errors));
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_NE(errors[0].find(":7:5: failovers route 'planned': "), std::string::npos) << errors[0];
  EXPECT_NE(errors[0].find("needs a promote step with action switchover.demotion_token"),
            std::string::npos)
      << errors[0];
}

// What reaches the audit log is bounded: an over-long accept_data_loss changes nothing.
TEST_F(FailoverServiceTest, AnOverlongAcceptDataLossIsRefused) {
  Build();
  ProposeRequest req{FailoverKind::kFailover, kEu, "owner:us-east-1", "planned", "", false};
  req.accept_data_loss = std::string(kMaxReasonBytes + 1, 'x');
  CommandOutcome out = service_->Propose(Person("olivia", ActorKind::kOperator), req);
  EXPECT_EQ(out.status.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(out.status.message().find("accept_data_loss: the reason is longer than 4096 bytes"),
            std::string::npos)
      << out.status.message();
  EXPECT_TRUE(store_->ListFailovers(10)->empty());
}

// The way back needs a finished failover whose tables are still where it moved them.
TEST_F(FailoverServiceTest, FailbackWithoutACompletedFailoverOfTheScopeIsRefused) {
  Build();
  FailbackRequest req{"owner:us-east-1", "us-east-1 is back", "", false};
  CommandOutcome out = service_->Failback(Person("olivia", ActorKind::kOperator), req);
  EXPECT_EQ(out.status.code(), StatusCode::kNotFound);
  EXPECT_NE(out.status.message().find("no completed failover of scope owner:us-east-1"),
            std::string::npos)
      << out.status.message();
  EXPECT_TRUE(store_->ListFailovers(10)->empty());
}

TEST_F(FailoverServiceTest, ApprovalOfAnotherPlanIsRefused) {
  Build();
  const std::string id = Propose();
  ApproveRequest req;
  req.plan_hash = "sha256:0000";
  CommandOutcome out = service_->Approve(Person("alice", ActorKind::kApprover), id, req);
  EXPECT_EQ(out.status.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(out.status.message().find("plan changed"), std::string::npos) << out.status.message();
  EXPECT_EQ(Get(id).phase, P::kProposed);
  EXPECT_TRUE(Get(id).approvals.empty());
}

TEST_F(FailoverServiceTest, ProposerMayNotApproveUnderTwoPersonRule) {
  Build("  - {id: quiet, action: fence.catalog_quiet, params: {}}\n", /*two_person=*/true);
  const std::string id = Propose();
  CommandOutcome own = Approve(id, "olivia");
  EXPECT_EQ(own.status.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(own.status.message().find("may not approve"), std::string::npos)
      << own.status.message();
  EXPECT_TRUE(Approve(id, "alice").status.ok());
  EXPECT_EQ(Get(id).phase, P::kProposed);  // one of two
  EXPECT_TRUE(Approve(id, "bob").status.ok());
  EXPECT_EQ(Get(id).phase, P::kApproved);
}

TEST_F(FailoverServiceTest, FirstOfTwoApprovalsExpires) {
  Build("  - {id: quiet, action: fence.catalog_quiet, params: {}}\n", /*two_person=*/true);
  const std::string id = Propose();
  ASSERT_TRUE(Approve(id, "alice").status.ok());
  clock_->Advance(config_.policies.approval_ttl + std::chrono::seconds(1));
  PublishLag(std::chrono::seconds(1), LagState::kBehind);
  ASSERT_TRUE(Approve(id, "bob").status.ok());
  EXPECT_EQ(Get(id).phase, P::kProposed) << "alice's expired approval must not count";
}

TEST_F(FailoverServiceTest, RpoGuardRefusesApprovalUnlessDataLossIsAccepted) {
  Build();
  PublishLag(std::chrono::minutes(5), LagState::kBehind);
  const std::string id = Propose();
  CommandOutcome refused = Approve(id);
  EXPECT_EQ(refused.status.code(), StatusCode::kFailedPrecondition);
  EXPECT_TRUE(GuardFailed(refused, "rpo")) << refused.body.dump();
  EXPECT_EQ(Get(id).phase, P::kProposed);
  CommandOutcome accepted = Approve(id, "alice", "us-east-1 is gone; 5m of orders re-sent by hand");
  ASSERT_TRUE(accepted.status.ok()) << accepted.status.ToString();
  EXPECT_EQ(Get(id).accept_data_loss.value_or(""),
            "us-east-1 is gone; 5m of orders re-sent by hand");
}

TEST_F(FailoverServiceTest, UnknownLagWithALastKnownBoundCountsTheBound) {
  Build();
  // Compared 50 s ago, 2 s behind then; unknown since (the owner went away).
  LagReport report =
      LagOf(std::chrono::milliseconds(0), LagState::kUnknown, kUs, kEu, [&](TableLag& row) {
        row.last_known_at = clock_->Now() - 50'000;
        row.last_known_lag = std::chrono::seconds(2);
      });
  live_.PublishLag(report);
  const std::string id = Propose();
  EXPECT_TRUE(Approve(id).status.ok()) << "52 s of bound is within max_staleness 1m";
  // The same, measured 70 s ago: the bound (72 s) is over max_staleness.
  for (auto& row : report.tables) row.last_known_at = clock_->Now() - 70'000;
  live_.PublishLag(report);
  ASSERT_TRUE(service_->Abort(Person("olivia", ActorKind::kOperator), id, "again").status.ok());
  clock_->Advance(std::chrono::minutes(10));
  const std::string id2 = Propose();
  CommandOutcome out = Approve(id2);
  EXPECT_TRUE(GuardFailed(out, "rpo")) << out.body.dump();
}

TEST_F(FailoverServiceTest, TargetUnhealthyAndDivergedTargetAreRefused) {
  Build();
  SetHealth(kEu, RegionHealth::kDegraded);
  const std::string id = Propose();
  CommandOutcome out = Approve(id);
  EXPECT_TRUE(GuardFailed(out, "target_healthy")) << out.body.dump();
  SetHealth(kEu, RegionHealth::kHealthy);
  PublishLag(std::chrono::seconds(0), LagState::kDiverged);
  out = Approve(id);
  EXPECT_TRUE(GuardFailed(out, "divergence")) << out.body.dump();
  EXPECT_EQ(Get(id).phase, P::kProposed);
}

TEST_F(FailoverServiceTest, OverlappingProposalIsRefused) {
  Build();
  Propose();
  ProposeRequest req{FailoverKind::kFailover, kEu, "tables:sales.orders", "again", kUs, false};
  CommandOutcome out = service_->Propose(Person("olivia", ActorKind::kOperator), req);
  EXPECT_EQ(out.status.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(out.status.message().find("no_overlap"), std::string::npos) << out.status.message();
  EXPECT_EQ(store_->ListFailovers(10)->size(), 1u);
}

TEST_F(FailoverServiceTest, CooldownBlocksTheWayBackUntilAcknowledged) {
  Build();
  runner_->Start();
  const std::string id = Propose();
  ASSERT_TRUE(Approve(id).status.ok());
  ASSERT_TRUE(WaitFor(id, P::kCompleted));
  // What ownership.transfer does (the fake promote step does not): the tables move, last
  // moved by `id`.
  std::vector<OwnershipChange> moves;
  for (const char* t : {"sales.orders", "sales.items"})
    moves.push_back({*TableIdent::Parse(t), 1, kEu, id});
  ASSERT_TRUE(store_->CompareAndSetOwnership(moves, Audit("ownership.transfer")).ok());
  // Back again: eu-central-1 now owns both tables.
  ProposeRequest back{FailoverKind::kFailover, kUs, "owner:eu-central-1", "back", "", false};
  CommandOutcome proposed = service_->Propose(Person("olivia", ActorKind::kOperator), back);
  ASSERT_TRUE(proposed.status.ok()) << proposed.status.ToString();
  const std::string back_id = proposed.body["failover"]["id"];
  live_.PublishLag(LagOf(std::chrono::milliseconds(0), LagState::kCaughtUp, kEu, kUs));
  CommandOutcome refused = Approve(back_id);
  EXPECT_TRUE(GuardFailed(refused, "cooldown")) << refused.body.dump();
  ASSERT_TRUE(service_->Ack(Person("olivia", ActorKind::kOperator), id, "reviewed").status.ok());
  EXPECT_TRUE(Approve(back_id).status.ok());
}

TEST_F(FailoverServiceTest, GuardFailingBeforePromotionHoldsInFencedUntilReapproved) {
  Build("  - {id: quiet, action: fence.catalog_quiet, params: {delay_ms: 300}}\n");
  runner_->Start();
  const std::string id = Propose();
  ASSERT_TRUE(Approve(id).status.ok());
  ASSERT_TRUE(WaitFor(id, P::kFencing));
  SetHealth(kEu, RegionHealth::kDegraded);  // while the fence step runs
  ASSERT_TRUE(WaitFor(id, P::kFenced));
  for (int i = 0; i < 100 && Get(id).promotion_hold.empty(); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_NE(Get(id).promotion_hold.find("target_healthy"), std::string::npos)
      << Get(id).promotion_hold;
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_EQ(Get(id).phase, P::kFenced);
  EXPECT_EQ(log_->RunCount("move"), 0);
  SetHealth(kEu, RegionHealth::kHealthy);
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_EQ(Get(id).phase, P::kFenced) << "a healed guard alone does not promote";
  ASSERT_TRUE(Approve(id, "bob").status.ok());
  ASSERT_TRUE(WaitFor(id, P::kCompleted)) << Get(id).last_reason;
}

// The guard checks keep the scope's listing between an approval and the promotion while the
// store's ownership revision stands still; a table that moves in between is seen.
TEST_F(FailoverServiceTest, ATableThatMovesAfterTheApprovalIsSeenAtPromotion) {
  Build("  - {id: quiet, action: fence.catalog_quiet, params: {delay_ms: 300}}\n");
  runner_->Start();
  const std::string id = Propose();
  ASSERT_TRUE(Approve(id).status.ok());
  ASSERT_TRUE(WaitFor(id, P::kFencing));
  std::vector<OwnershipChange> away{{*TableIdent::Parse("sales.items"), 1, kEu, ""}};
  ASSERT_TRUE(store_->CompareAndSetOwnership(away, Audit("ownership.set")).ok());
  ASSERT_TRUE(WaitFor(id, P::kCompleted)) << Get(id).last_reason;
  nlohmann::json rpo = nlohmann::json::parse(Get(id).rpo_json);
  EXPECT_EQ(rpo["tables_in_scope"], 1) << rpo.dump();
  EXPECT_EQ(Get(id).rpo_json.find("sales.items"), std::string::npos) << rpo.dump();
}

TEST_F(FailoverServiceTest, SilenceLongEnoughIsUnreachableEvidence) {
  Build("  - {id: quiet, action: fence.catalog_quiet, params: {outcomes: [failed]}}\n");
  runner_->Start();
  const std::string id = Propose();
  ASSERT_TRUE(Approve(id).status.ok());
  ASSERT_TRUE(WaitFor(id, P::kFencing));
  live_.PublishSilence(kUs, RegionSilence{clock_->Now() - 5000, 5, "connection refused"});
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  EXPECT_EQ(Get(id).phase, P::kFencing) << "5 s of silence is less than unreachable_for 10s";
  live_.PublishSilence(kUs, std::nullopt);  // it answered (say 503): alive
  clock_->Advance(std::chrono::seconds(30));
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  EXPECT_EQ(Get(id).phase, P::kFencing);
  live_.PublishSilence(kUs, RegionSilence{clock_->Now() - 12'000, 12, "connection refused"});
  ASSERT_TRUE(WaitFor(id, P::kCompleted)) << Get(id).last_reason;
  ASSERT_TRUE(Get(id).fencing);
  EXPECT_EQ(Get(id).fencing->kind, FencingKind::kEvidenceUnreachable);
  EXPECT_NE(Get(id).fencing->evidence_json.find("silent_since"), std::string::npos);
}

// What replica `name` says of us-east-1: silent for `silent_ms` (0: it answered), its view
// last changed `heard_ms` ago on the leader's clock (nullopt: not seen to change).
ReplicaView ViewOfUs(const std::string& name, std::int64_t silent_ms,
                     std::optional<std::int64_t> heard_ms) {
  ReplicaView v;
  v.replica = name;
  v.heard_ms_ago = heard_ms;
  RegionSight s;
  s.probed = true;
  s.round_age_ms = 100;
  if (silent_ms > 0) {
    s.silent = true;
    s.silent_for_ms = silent_ms;
    s.silent_rounds = static_cast<int>(silent_ms / 1000);
    s.detail = "connection refused";
  }
  v.regions[kUs] = s;
  return v;
}

TEST_F(FailoverServiceTest, WithSeveralReplicasSilenceIsEvidenceOnlyWhenAMajorityHeardNothing) {
  replicas_ = {"a", "b", "c"};
  Build("  - {id: quiet, action: fence.catalog_quiet, params: {outcomes: [failed]}}\n");
  runner_->Start();
  const std::string id = Propose();
  ASSERT_TRUE(Approve(id).status.ok());
  ASSERT_TRUE(WaitFor(id, P::kFencing));
  // The leader's own silence, however long, is one vote of three.
  live_.PublishSilence(kUs, RegionSilence{clock_->Now() - 60'000, 60, "connection refused"});
  SetViews({ViewOfUs("a", 60'000, 0), ViewOfUs("b", 0, 400), ViewOfUs("c", 0, 700)});
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  EXPECT_EQ(Get(id).phase, P::kFencing) << "a partition around the leader is no evidence";
  std::string why;
  EXPECT_FALSE(service_->UnreachableEvidence(Get(id), &why));
  EXPECT_NE(why.find("1 of 3 replicas heard nothing from us-east-1"), std::string::npos) << why;
  EXPECT_NE(why.find("b: answered"), std::string::npos) << why;
  // The API says why it waits, so `failover show` does.
  ApiConfig viewer;
  viewer.tokens.push_back(ApiToken{"viewer", Role::kViewer, Secret("tok-viewer")});
  Api api(viewer, *store_, *clock_, nullptr);
  api.SetFailoverService(service_.get());
  ApiRequest req;
  req.method = "GET";
  req.target = "/api/v1/failovers/" + id;
  req.headers["authorization"] = "Bearer tok-viewer";
  ApiResponse shown = api.Handle(req);
  ASSERT_EQ(shown.status, 200) << shown.body;
  EXPECT_EQ(nlohmann::json::parse(shown.body).value("evidence_wait", ""), why);
  // b's view says silent, but it has not been seen to change (b may have died with it), or it
  // was silent for less than the window: no vote either way.
  SetViews(
      {ViewOfUs("a", 60'000, 0), ViewOfUs("b", 60'000, std::nullopt), ViewOfUs("c", 9'000, 300)});
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  EXPECT_EQ(Get(id).phase, P::kFencing);
  // A view from a replica that is not in state.etcd.replicas never votes.
  SetViews({ViewOfUs("a", 60'000, 0), ViewOfUs("z", 60'000, 100), ViewOfUs("c", 9'000, 300)});
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  EXPECT_EQ(Get(id).phase, P::kFencing);
  // c's silence reaches the window: two of three.
  SetViews({ViewOfUs("a", 60'000, 0), ViewOfUs("b", 0, 400), ViewOfUs("c", 10'500, 300)});
  ASSERT_TRUE(WaitFor(id, P::kCompleted)) << Get(id).last_reason;
  ASSERT_TRUE(Get(id).fencing);
  EXPECT_EQ(Get(id).fencing->kind, FencingKind::kEvidenceUnreachable);
  nlohmann::json evidence = nlohmann::json::parse(Get(id).fencing->evidence_json);
  EXPECT_EQ(evidence["quorum"]["votes"], 2) << evidence.dump(2);
  EXPECT_EQ(evidence["quorum"]["needed"], 2);
  ASSERT_EQ(evidence["observed_by"].size(), 3u) << evidence.dump(2);
  EXPECT_EQ(evidence["observed_by"][0]["replica"], "a");
  EXPECT_EQ(evidence["observed_by"][0]["silent_for_window"], true);
  EXPECT_EQ(evidence["observed_by"][1]["replica"], "b");
  EXPECT_EQ(evidence["observed_by"][1]["saw"], "answered");
  EXPECT_EQ(evidence["observed_by"][2]["silent_for_ms"], 10'500);
}

// Under the default policy a gateway.fence that every gateway confirmed is no evidence either:
// gateway_closed must be accepted explicitly (GatewayClosedEvidenceTest).
TEST_F(FailoverServiceTest, FenceStepsWithoutAQuietWindowAreNoEvidence) {
  config_.gateways.push_back(GatewayConfig{});
  config_.gateways.back().name = "gw-us";
  Build(
      "  - {id: gate, action: fake.idem, params: {}}\n"
      "  - {id: close, action: gateway.fence, params: {detail: {gateways: [{gateway: gw-us, "
      "confirmed: true}]}}}\n");
  runner_->Start();
  const std::string id = Propose();
  ASSERT_TRUE(Approve(id).status.ok());
  ASSERT_TRUE(WaitFor(id, P::kFencing));
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  EXPECT_EQ(Get(id).phase, P::kFencing);
  EXPECT_FALSE(Get(id).fencing);
  auto audit = store_->ListAudit({0, 1000, id});
  bool said = false;
  for (const auto& e : *audit)
    said = said || e.reason.find("fence.catalog_quiet") != std::string::npos;
  EXPECT_TRUE(said) << "the refusal says a quiet-window step is missing";
  // (Operators may not confirm fencing: the API's role table refuses them, see
  // ApiFailoverCommandsTest.BadInputIsAJsonErrorAndChangesNothing.)
  ASSERT_TRUE(service_->ConfirmFencing(Person("alice", ActorKind::kApprover), id, "powered off")
                  .status.ok());
  ASSERT_TRUE(WaitFor(id, P::kCompleted));
}

// gateway_closed: the closure at every configured gateway is the evidence, with no quiet
// window; the journal must show each gateway confirmed (the fake step's detail is what the
// real gateway.fence journals, orchestrator/gateway/gateway_fence.cpp).
class GatewayClosedEvidenceTest : public FailoverServiceTest {
 protected:
  void BuildWith(const std::string& confirmed_json) {
    fencing_evidence_ = {"gateway_closed", "operator"};
    for (const char* name : {"gw-us", "gw-eu"}) {
      GatewayConfig g;
      g.name = name;
      g.region = kUs;
      config_.gateways.push_back(g);
    }
    Build("  - {id: close, action: gateway.fence, params: {detail: {gateways: " + confirmed_json +
          "}}}\n");
    runner_->Start();
  }
  bool RefusalSays(const std::string& id, const std::string& text) {
    auto audit = store_->ListAudit({0, 1000, id});
    for (const auto& e : *audit)
      if (e.reason.find(text) != std::string::npos) return true;
    return false;
  }
};

TEST_F(GatewayClosedEvidenceTest, EveryGatewayConfirmedIsEvidenceWithoutAQuietWindow) {
  BuildWith(
      "[{gateway: gw-us, confirmed: true, polls: 1}, {gateway: gw-eu, confirmed: true, polls: 2}]");
  const std::string id = Propose();
  ASSERT_TRUE(Approve(id).status.ok());
  ASSERT_TRUE(WaitFor(id, P::kCompleted)) << Get(id).last_reason;
  Failover f = Get(id);
  ASSERT_TRUE(f.fencing);
  EXPECT_EQ(f.fencing->kind, FencingKind::kGatewayClosed);
  auto evidence = nlohmann::json::parse(f.fencing->evidence_json);
  EXPECT_EQ(evidence["kind"], "gateway_closed");
  EXPECT_EQ(evidence["gateways"], (nlohmann::json{"gw-us", "gw-eu"})) << evidence.dump();
  EXPECT_EQ(log_->RunCount("move"), 1);
}

TEST_F(GatewayClosedEvidenceTest, AGatewayThatDidNotConfirmLeavesTheFailoverInFencing) {
  // A step that ran over a subset (params gateways: [gw-us]) succeeds, but says nothing of
  // gw-eu, through which a writer could still reach the old owner.
  BuildWith("[{gateway: gw-us, confirmed: true, polls: 1}]");
  const std::string id = Propose();
  ASSERT_TRUE(Approve(id).status.ok());
  ASSERT_TRUE(WaitFor(id, P::kFencing));
  for (int i = 0; i < 300 && !RefusalSays(id, "not confirmed by gw-eu"); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_TRUE(RefusalSays(id, "not confirmed by gw-eu"));
  EXPECT_EQ(Get(id).phase, P::kFencing);
  EXPECT_FALSE(Get(id).fencing);
  EXPECT_EQ(log_->RunCount("move"), 0) << "nothing promoted";
}

// SIGTERM in `serve`: Stop lets the step in flight finish and be journaled, starts nothing
// more, and a new runner (the restarted daemon) resumes without running a step twice.
TEST_F(FailoverServiceTest, StopFinishesTheStepInFlightAndARestartResumes) {
  promote_ =
      "  - {id: move, action: fake.once, params: {delay_ms: 400}}\n"
      "  - {id: move2, action: fake.once, params: {}}\n";
  Build();
  runner_->Start();
  const std::string id = Propose();
  ASSERT_TRUE(Approve(id).status.ok());
  ASSERT_TRUE(WaitFor(id, P::kPromoting));
  auto running = [&] {
    const auto journal = store_->ListSteps(id);
    for (const StepRecord& r : *journal)
      if (r.step_id == "move" && r.state == StepState::kRunning) return true;
    return false;
  };
  for (int i = 0; i < 300 && !running(); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  ASSERT_TRUE(running());
  runner_->Stop();
  auto steps = *store_->ListSteps(id);
  std::map<std::string, StepState> state;
  for (const StepRecord& r : steps) state[r.step_id] = r.state;
  EXPECT_EQ(state["move"], StepState::kSucceeded)
      << "the step in flight finished and was journaled";
  EXPECT_EQ(state.count("move2"), 0u) << "nothing new starts once stopping";
  EXPECT_EQ(Get(id).phase, P::kPromoting);

  runner_ = std::make_unique<FailoverRunner>(runner_deps_);
  runner_->Start();
  ASSERT_TRUE(WaitFor(id, P::kCompleted)) << Get(id).last_reason;
  EXPECT_EQ(log_->RunCount("move"), 1);
  EXPECT_EQ(log_->RunCount("move2"), 1);
}

// Rule 1 under arbitrary commands from every role and source: whatever is sent in whatever
// order, a failover is never promoting (or past it) without an approval of its plan and a
// fencing confirmation on record.
TEST_F(FailoverServiceTest, RandomCommandsNeverPromoteWithoutApprovalAndFencing) {
  Build("  - {id: quiet, action: fence.catalog_quiet, params: {outcomes: [failed, succeeded]}}\n");
  std::mt19937 rng(20261201);
  const ActorKind kinds[] = {ActorKind::kOperator, ActorKind::kApprover, ActorKind::kAdmin,
                             ActorKind::kWebhook,  ActorKind::kProbe,    ActorKind::kExecutor};
  const FailoverEvent events[] = {FailoverEvent::kApprove,        FailoverEvent::kAbort,
                                  FailoverEvent::kBeginFencing,   FailoverEvent::kConfirmFencing,
                                  FailoverEvent::kBeginPromotion, FailoverEvent::kPromoted,
                                  FailoverEvent::kVerified,       FailoverEvent::kStepFailed,
                                  FailoverEvent::kInFlightUnknown};
  int promoted = 0;
  for (int round = 0; round < 60; ++round) {
    clock_->Advance(std::chrono::minutes(10));
    PublishLag(std::chrono::seconds(1), LagState::kBehind);
    std::string id = Propose();
    if (id.empty()) continue;
    for (int step = 0; step < 60; ++step) {
      // Weighted so that some sequences get far: approve, confirm, abort, executor events
      // 25/25/10/40 %, and half of all senders claim to be the executor.
      const int roll = static_cast<int>(rng() % 20);
      const int what = roll < 5 ? 0 : roll < 10 ? 1 : roll < 12 ? 2 : 3;
      const ActorKind kind = rng() % 2 ? ActorKind::kExecutor : kinds[rng() % 6];
      const std::string who = rng() % 2 ? "olivia" : "alice";
      if (what == 0) {
        ApproveRequest req;
        req.plan_hash = rng() % 4 ? PlanHash(id) : "sha256:stale";
        service_->Approve(Caller{who, kind, "fuzz"}, id, req);
      } else if (what == 1) {
        service_->ConfirmFencing(Caller{who, kind, "fuzz"}, id, rng() % 3 ? "because" : "");
      } else if (what == 2) {
        service_->Abort(Caller{who, kind, "fuzz"}, id, rng() % 5 ? "" : "stop");
      } else {
        FailoverInput in;
        in.event = events[rng() % 9];
        in.actor_kind = kind;
        in.actor = who;
        in.reason = "fuzz";
        in.fencing_kind = static_cast<FencingKind>(rng() % 3);
        runner_->Apply(id, in);  // the executor's path, guards included
      }
      const Failover f = Get(id);
      const bool past = f.phase == P::kPromoting || f.phase == P::kVerifying ||
                        f.phase == P::kCompleted || f.phase == P::kFailed ||
                        f.phase == P::kCompensating || f.phase == P::kRolledBack;
      const bool reached = past || (f.phase == P::kNeedsAttention && f.fencing);
      if (!reached) continue;
      ++promoted;
      ASSERT_TRUE(f.fencing.has_value()) << id << " in " << FailoverPhaseName(f.phase);
      bool approved = false;
      for (const Approval& a : f.approvals) approved = approved || a.plan_hash == f.plan.plan_hash;
      ASSERT_TRUE(approved) << id << " in " << FailoverPhaseName(f.phase) << " without approval";
    }
    if (!IsTerminal(Get(id).phase))
      service_->Abort(Person("olivia", ActorKind::kOperator), id, "next round");
    if (!IsTerminal(Get(id).phase)) {
      // Past fencing: abort is refused; let it end so the next round's scope is free.
      FailoverInput in{FailoverEvent::kStepFailed, ActorKind::kExecutor, "executor", "end"};
      runner_->Apply(id, in);
      runner_->Apply(id, FailoverInput{FailoverEvent::kBeginCompensation, ActorKind::kExecutor,
                                       "executor", "end"});
      runner_->Apply(
          id, FailoverInput{FailoverEvent::kCompensated, ActorKind::kExecutor, "executor", "end"});
    }
    // needs_attention holds its scope until a person looks: no further round can propose.
    if (!IsTerminal(Get(id).phase)) break;
  }
  EXPECT_GT(promoted, 0) << "the sequences should reach promotion sometimes, or they prove nothing";
}

}  // namespace
}  // namespace icewarden::testing
