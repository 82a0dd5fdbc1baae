// Drills in plan, shadow and live mode (drill_service.h), over fake actions: what a shadow run
// acts on (the drill's targets, never production's), that it cleans up after itself (also
// after a crash), what its report says, and that a live drill never approves itself.
#include <gtest/gtest.h>

#include "orchestrator/api/metrics_exposition.h"
#include "tests/unit/orchestrator/drill_fixture.h"

namespace icewarden::testing {
namespace {

using nlohmann::json;

json StepOf(const json& report, const std::string& id) {
  for (const json& s : report["steps"])
    if (s.value("id", "") == id) return s;
  return json::object();
}

TEST_F(DrillTest, ShadowRunActsOnTheDrillTargetsOnlyAndCleansUp) {
  BuildDrills();
  const std::string production = OwnershipDigest();
  const std::string id = RunDrill("shadow");
  json report = Report(id);
  EXPECT_EQ(report["verdict"]["result"], "passed") << report.dump(2);
  EXPECT_EQ(report["run"]["scope"], "namespace:drill");

  // DNS: the drill's name, never writer.lake.lab.; then put back by the cleanup.
  auto dns = recorders_["dns.rfc2136"]->Calls();
  ASSERT_EQ(dns.size(), 2u);
  EXPECT_EQ(dns[0].what, "run");
  EXPECT_EQ(dns[0].params["records"][0]["name"], "drill-writer.lake.lab.");
  EXPECT_EQ(dns[0].params["records"][0]["value"], "catalog.eu-central-1.lake.lab.");
  EXPECT_EQ(dns[0].scope, "namespace:drill");
  EXPECT_EQ(dns[1].what, "compensate");
  EXPECT_EQ(dns[1].before, R"({"before":"dns"})") << "the cleanup restores what was captured";
  EXPECT_EQ(recorders_["verify.dns"]->Calls().at(0).params["name"], "drill-writer.lake.lab.");
  // Alerts are labelled as a drill's.
  auto page = recorders_["alert.alertmanager"]->Calls();
  ASSERT_EQ(page.size(), 1u);
  EXPECT_EQ(page[0].params["labels"]["drill"], "true");
  EXPECT_EQ(page[0].params["annotations"]["summary"], "[drill] moving namespace:drill");
  // A call to a write gateway cannot be pointed at a drill target: skipped, never run.
  EXPECT_TRUE(recorders_["http.request"]->Calls().empty());
  EXPECT_EQ(StepOf(report, "gateway")["status"], "skipped");
  EXPECT_NE(StepOf(report, "gateway")["error"].get<std::string>().find("would reach production"),
            std::string::npos);
  EXPECT_EQ(StepOf(report, "dns")["status"], "succeeded");
  EXPECT_EQ(StepOf(report, "dns")["attempts"], 1);
  EXPECT_EQ(StepOf(report, "dns")["cleanup"], "done");
  EXPECT_EQ(OwnershipDigest(), production) << "production ownership is untouched";
  auto failovers = store_->ListFailovers(0);
  EXPECT_TRUE(failovers->empty()) << "a shadow drill creates no failover";
  // The report's parts.
  EXPECT_EQ(report["rto"]["target_ms"], 300000);
  EXPECT_TRUE(report["rto"]["measured_ms"].is_number());
  EXPECT_EQ(report["rto"]["within_target"], true);
  EXPECT_TRUE(report["durations"]["detection_ms"].is_null()) << "a drill starts decided";
  EXPECT_TRUE(report["durations"]["dns_ms"].is_number());
  EXPECT_GE(report["timeline"].size(), 4u);
  const std::string text = RenderDrillReportText(report);
  EXPECT_NE(text.find("verdict        passed"), std::string::npos) << text;
}

TEST_F(DrillTest, ShadowFailureNamesTheFailingStepAndStillCleansUp) {
  BuildDrills(/*dns_fails=*/true);
  const std::string id = RunDrill("shadow");
  json report = Report(id);
  EXPECT_EQ(report["verdict"]["result"], "failed");
  EXPECT_EQ(report["verdict"]["failing_step"], "dns");
  EXPECT_NE(report["verdict"]["reason"].get<std::string>().find("dns.rfc2136 refused"),
            std::string::npos)
      << report["verdict"];
  EXPECT_EQ(StepOf(report, "dns")["status"], "failed");
  EXPECT_EQ(StepOf(report, "dns-check")["status"], "not_started");
  EXPECT_TRUE(report["rto"]["measured_ms"].is_null()) << "a failed rehearsal measures no RTO";
  // The failed update may have half-applied: it is undone too.
  auto dns = recorders_["dns.rfc2136"]->Calls();
  ASSERT_EQ(dns.size(), 2u);
  EXPECT_EQ(dns[1].what, "compensate");
  auto move = recorders_["ownership.transfer"]->Calls();
  ASSERT_EQ(move.size(), 2u);
  EXPECT_EQ(move[0].params["scope"], "namespace:drill") << "the canary namespace, not production";
  EXPECT_EQ(move[1].what, "compensate");
  EXPECT_EQ(move[1].key, report["run"]["id"].get<std::string>() + "/move.compensate");
}

TEST_F(DrillTest, ShadowRunInterruptedByACrashIsCleanedUpAtStart) {
  BuildDrills();
  // What a crash in the middle of the dns step leaves: the run running, the step running
  // with its cleanup obligation journaled.
  DrillRun run;
  run.id = "dr-crashed";
  run.drill = "weekly";
  run.mode = "shadow";
  run.trigger = "operator:olivia";
  run.scope = "namespace:drill";
  run.from = kUs;
  run.to = kEu;
  run.started_at = clock_->Now();
  ASSERT_TRUE(drills_->CreateDrillRun(run, Audit("drill.run")).ok());
  DrillStep dns;
  dns.run_id = run.id;
  dns.step_id = "dns";
  dns.ordinal = 5;
  dns.section = "promote";
  dns.action = "dns.rfc2136";
  dns.state = "running";
  dns.attempts = 1;
  dns.before_json = R"({"previous":"catalog.us-east-1.lake.lab."})";
  dns.cleanup = "pending";
  dns.started_at = clock_->Now();
  ASSERT_TRUE(drills_->PutDrillStep(dns).ok());

  MakeDrillService();  // the restarted daemon
  auto lines = drill_service_->ResumeAtStart();
  ASSERT_EQ(lines.size(), 1u);
  auto undo = recorders_["dns.rfc2136"]->Calls();
  ASSERT_EQ(undo.size(), 1u);
  EXPECT_EQ(undo[0].what, "compensate");
  EXPECT_EQ(undo[0].before, dns.before_json);
  EXPECT_EQ(undo[0].params["records"][0]["name"], "drill-writer.lake.lab.");
  json report = Report(run.id);
  EXPECT_EQ(report["run"]["phase"], "finished");
  EXPECT_EQ(report["verdict"]["result"], "failed");
  EXPECT_EQ(report["verdict"]["failing_step"], "dns");
  EXPECT_NE(report["verdict"]["reason"].get<std::string>().find("interrupted by a restart"),
            std::string::npos);
  EXPECT_EQ(StepOf(report, "dns")["cleanup"], "done");
  EXPECT_TRUE(drill_service_->ResumeAtStart().empty()) << "cleaned up once";
}

TEST_F(DrillTest, PlanRunShowsTheStepsAndEveryGuardAndChangesNothing) {
  BuildDrills();
  const std::string before = OwnershipDigest();
  json passed = Report(RunDrill("plan"));
  EXPECT_EQ(passed["verdict"]["result"], "passed") << passed.dump(2);
  ASSERT_TRUE(passed["guards"].is_array());
  EXPECT_FALSE(passed["guards"].empty());
  EXPECT_EQ(passed["plan"]["steps"].size(), 7u) << "fence 1, promote 5, verify 1";
  SetHealth(kEu, RegionHealth::kUnreachable);
  json failed = Report(RunDrill("plan"));
  EXPECT_EQ(failed["verdict"]["result"], "failed");
  EXPECT_EQ(failed["verdict"]["failing_step"], "guard:target_healthy");
  EXPECT_TRUE(store_->ListFailovers(0)->empty());
  EXPECT_EQ(OwnershipDigest(), before);
  EXPECT_TRUE(recorders_["dns.rfc2136"]->Calls().empty());
}

TEST_F(DrillTest, LiveRunIsProposedAndWaitsForPeopleToApproveFailoverAndFailback) {
  BuildDrills();
  runner_->Start();
  const std::string id = RunDrill("live");
  json report = Report(id);
  EXPECT_EQ(report["run"]["phase"], "waiting");
  const std::string fo = report["run"]["failover_id"];
  Failover f = Get(fo);
  EXPECT_EQ(f.phase, FailoverPhase::kProposed) << "a drill never approves itself";
  EXPECT_TRUE(f.approvals.empty());
  EXPECT_EQ(f.proposed_by, "olivia");
  EXPECT_TRUE(drill_service_->Refresh().empty()) << "nothing moves without an approval";
  ASSERT_TRUE(Approve(fo).status.ok());
  ASSERT_TRUE(WaitFor(fo, FailoverPhase::kCompleted));
  // What the runbook's transfer did (its fake here moves nothing), and eu-central-1's lag as
  // the failback's guards will read it.
  std::vector<OwnershipChange> rows;
  for (const char* t : {"sales.orders", "sales.items"})
    rows.push_back({*TableIdent::Parse(t), 1, kEu, fo});
  ASSERT_TRUE(store_->CompareAndSetOwnership(rows, Audit("ownership.transfer")).ok());
  live_.PublishLag(LagOf(std::chrono::milliseconds(0), LagState::kCaughtUp, kEu, kUs));
  auto moved = drill_service_->Refresh();
  ASSERT_EQ(moved.size(), 1u);
  EXPECT_NE(moved[0].find("failback"), std::string::npos) << moved[0];
  report = Report(id);
  ASSERT_TRUE(report["run"]["failback_id"].is_string()) << moved[0] << "\n" << report["verdict"];
  const std::string back = report["run"]["failback_id"];
  EXPECT_EQ(Get(back).phase, FailoverPhase::kProposed) << "the failback waits for a person too";
  clock_->Advance(std::chrono::minutes(3));  // past the cooldown
  live_.PublishLag(LagOf(std::chrono::milliseconds(0), LagState::kCaughtUp, kEu, kUs));
  CommandOutcome approved = Approve(back);
  ASSERT_TRUE(approved.status.ok()) << approved.status.ToString();
  ASSERT_TRUE(WaitFor(back, FailoverPhase::kCompleted));
  drill_service_->Refresh();
  report = Report(id);
  EXPECT_EQ(report["run"]["phase"], "finished");
  EXPECT_EQ(report["verdict"]["result"], "passed") << report["verdict"];
  EXPECT_TRUE(report["failover"].is_object());
  EXPECT_TRUE(report["failback"].is_object());
  EXPECT_TRUE(report["rto"]["measured_ms"].is_number());
}

TEST_F(DrillTest, NotesAreKeptInTheReport) {
  BuildDrills();
  const std::string id = RunDrill("plan");
  CommandOutcome noted = drill_service_->Note(Person("olivia", ActorKind::kOperator), id,
                                              "DNS TTL was too long in the last real one");
  ASSERT_TRUE(noted.status.ok());
  json report = Report(id);
  ASSERT_EQ(report["notes"].size(), 1u);
  EXPECT_EQ(report["notes"][0]["by"], "olivia");
  EXPECT_EQ(
      drill_service_->Note(Person("olivia", ActorKind::kOperator), "dr-nope", "x").status.code(),
      StatusCode::kNotFound);
  EXPECT_EQ(drill_service_->Note(Person("olivia", ActorKind::kOperator), id, "").status.code(),
            StatusCode::kInvalidArgument);
}

TEST_F(DrillTest, MetricsCarryTheLastSuccessAndRto) {
  BuildDrills();
  EXPECT_EQ(drill_service_->Metrics().at(0).last_success_at, 0);
  RunDrill("shadow");
  auto metrics = drill_service_->Metrics();
  ASSERT_EQ(metrics.size(), 1u);
  EXPECT_EQ(metrics[0].last_success_at, clock_->Now());
  EXPECT_GE(metrics[0].last_rto_ms, 0);
  const std::string page = RenderDrillMetrics(metrics);
  EXPECT_NE(page.find("icewarden_drill_last_success_timestamp_seconds{drill=\"weekly\"} "),
            std::string::npos)
      << page;
  EXPECT_NE(page.find("icewarden_drill_last_rto_seconds{drill=\"weekly\"} "), std::string::npos);
}

}  // namespace
}  // namespace icewarden::testing
