// HealthTracker: rounds from the scheduler (fake probes, fake timers) through the region
// health machine; the sink sees changes only.
#include "health/health_tracker.h"

#include <gtest/gtest.h>

#include "tests/fakes/fake_probe.h"
#include "tests/fakes/fake_timers.h"

namespace icewarden::testing {
namespace {

using namespace std::chrono_literals;

Region Healthy(const std::string& name) {
  Region r;
  r.name = name;
  return r;
}

ProbeRound Round(const std::string& region, bool ok, const std::string& kind = "catalog_config",
                 const std::string& detail = "") {
  ProbeRound r;
  r.region = region;
  r.ok = ok;
  r.kind = kind;
  r.detail = detail;
  r.latency = 12ms;
  return r;
}

// The whole path: scheduler rounds every 10 s from one catalog_config probe into a tracker.
class TrackedRegionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    tracker_ = std::make_unique<HealthTracker>(
        std::vector<Region>{Healthy("us-east-1")}, clock_,
        [this](const HealthDecision& d) { decisions_.push_back(d); }, HealthThresholds{3, 2});
    ProbeScheduleOptions o;
    o.interval = 10s;
    o.timeout = 2s;
    scheduler_ = std::make_unique<ProbeScheduler>(
        timers_, [] { return std::uint64_t{0}; }, o,
        [this](const ProbeRound& r) { ASSERT_TRUE(tracker_->ApplyRound(r).ok()); });
    std::vector<std::unique_ptr<Probe>> probes;
    probes.push_back(std::make_unique<FakeProbe>("catalog_config", timers_, script_));
    auto tcp = std::make_shared<FakeProbeScript>();
    probes.push_back(std::make_unique<FakeProbe>("tcp", timers_, tcp));
    ASSERT_TRUE(scheduler_->AddRegion("us-east-1", std::move(probes)).ok());
  }

  // Runs exactly one more round (the first at once, then one per interval).
  void RunRound() {
    if (!scheduler_->running()) {
      scheduler_->Start();
      timers_.Advance(0ms);
    } else {
      timers_.Advance(10s);
    }
  }

  RegionHealth Health() { return tracker_->Get("us-east-1")->health; }

  FakeClock clock_;
  FakeTimers timers_{&clock_};
  std::shared_ptr<FakeProbeScript> script_ = std::make_shared<FakeProbeScript>();
  std::unique_ptr<HealthTracker> tracker_;
  std::unique_ptr<ProbeScheduler> scheduler_;
  std::vector<HealthDecision> decisions_;
};

TEST_F(TrackedRegionTest, ThreeFailedRoundsMakeTheRegionUnreachableWithTheExactReason) {
  script_->fallback = {false, "connection refused", 0ms, false};
  RunRound();
  EXPECT_EQ(Health(), RegionHealth::kDegraded);
  ASSERT_EQ(decisions_.size(), 1u);
  EXPECT_EQ(
      decisions_[0].reason,
      "us-east-1 degraded: 1 consecutive catalog_config failure (fall 3): connection refused");
  RunRound();
  EXPECT_EQ(Health(), RegionHealth::kDegraded);
  EXPECT_EQ(tracker_->Get("us-east-1")->consecutive_failures, 2);
  EXPECT_EQ(decisions_.size(), 1u) << "counters alone do not reach the sink";
  const UnixMillis third_round_at = clock_.Now() + 10'000;
  RunRound();
  EXPECT_EQ(Health(), RegionHealth::kUnreachable);
  ASSERT_EQ(decisions_.size(), 2u);
  EXPECT_EQ(decisions_[1].reason,
            "us-east-1 unreachable: 3 consecutive catalog_config failures: connection refused");
  EXPECT_EQ(decisions_[1].next.health, RegionHealth::kUnreachable);
  EXPECT_EQ(decisions_[1].next.since, third_round_at);
  EXPECT_EQ(tracker_->Get("us-east-1")->reason, decisions_[1].reason);
}

TEST_F(TrackedRegionTest, TwoPassedRoundsBringItBack) {
  script_->fallback = {false, "connection refused", 0ms, false};
  for (int i = 0; i < 4; ++i) RunRound();
  ASSERT_EQ(Health(), RegionHealth::kUnreachable);
  decisions_.clear();
  script_->fallback = {true, "", 0ms, false};
  RunRound();
  EXPECT_EQ(Health(), RegionHealth::kDegraded);
  RunRound();
  EXPECT_EQ(Health(), RegionHealth::kHealthy);
  ASSERT_EQ(decisions_.size(), 2u);
  EXPECT_EQ(decisions_[0].reason, "us-east-1 degraded: 1 consecutive passed round (rise 2)");
  EXPECT_EQ(decisions_[1].reason, "us-east-1 healthy: 2 consecutive passed rounds");
}

TEST_F(TrackedRegionTest, FlappingStaysDegradedAndNeverReachesUnreachable) {
  for (int i = 0; i < 20; ++i) {
    if (i % 2 == 0)
      script_->Fail("HTTP 503 from GET /v1/config");
    else
      script_->Pass();
  }
  for (int i = 0; i < 20; ++i) {
    RunRound();
    EXPECT_EQ(Health(), RegionHealth::kDegraded) << "round " << i;
  }
  ASSERT_EQ(decisions_.size(), 1u) << "one change: healthy -> degraded";
}

TEST_F(TrackedRegionTest, ASilentProbeCountsAsAFailedRoundWithTheGuardsDetail) {
  script_->Silent();
  RunRound();
  timers_.Advance(2500ms);
  ASSERT_EQ(decisions_.size(), 1u);
  EXPECT_EQ(decisions_[0].reason,
            "us-east-1 degraded: 1 consecutive catalog_config failure (fall 3): probe did not "
            "answer within 2500ms");
  auto last = tracker_->LastRound("us-east-1");
  ASSERT_TRUE(last);
  EXPECT_EQ(last->latency, 2500ms);
  EXPECT_EQ(last->detail, "probe did not answer within 2500ms");
}

TEST(HealthTrackerTest, StartsFromTheStoredRecordsAndUsesPerRegionThresholds) {
  FakeClock clock;
  Region down = Healthy("eu-west-1");
  down.health = RegionHealth::kUnreachable;
  down.consecutive_failures = 7;
  down.reason = "stored";
  std::vector<HealthDecision> seen;
  HealthTracker tracker({Healthy("us-east-1"), down}, clock,
                        [&](const HealthDecision& d) { seen.push_back(d); }, HealthThresholds{3, 2},
                        {{"us-east-1", HealthThresholds{1, 1}}});
  EXPECT_EQ(tracker.ThresholdsFor("us-east-1").fall, 1);
  EXPECT_EQ(tracker.ThresholdsFor("eu-west-1").fall, 3);

  auto d = tracker.ApplyRound(Round("us-east-1", false, "tcp", "connection refused"));
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->next.health, RegionHealth::kUnreachable);
  EXPECT_EQ(d->reason, "us-east-1 unreachable: 1 consecutive tcp failure: connection refused");

  ASSERT_TRUE(tracker.ApplyRound(Round("eu-west-1", true)).ok());
  EXPECT_EQ(tracker.Get("eu-west-1")->health, RegionHealth::kDegraded);
  EXPECT_EQ(tracker.Get("eu-west-1")->consecutive_failures, 0);
  ASSERT_EQ(seen.size(), 2u);

  auto regions = tracker.Regions();
  ASSERT_EQ(regions.size(), 2u);
  EXPECT_EQ(regions[0].name, "us-east-1");
  EXPECT_EQ(regions[1].health, RegionHealth::kDegraded);
  auto last = tracker.LastRound("eu-west-1");
  ASSERT_TRUE(last);
  EXPECT_TRUE(last->ok);
  EXPECT_EQ(last->latency, 12ms);
  EXPECT_FALSE(tracker.LastRound("nowhere"));
}

TEST(HealthTrackerTest, UnknownRegionIsNotFound) {
  FakeClock clock;
  HealthTracker tracker({Healthy("us-east-1")}, clock, nullptr);
  auto d = tracker.ApplyRound(Round("ap-south-1", false));
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(d.status().message(), "probe round for unknown region ap-south-1");
}

TEST(HealthTrackerTest, OverlaysFromTheOrchestratorReachTheSinkAndProbesMayNotSetThem) {
  FakeClock clock;
  std::vector<HealthDecision> seen;
  HealthTracker tracker({Healthy("us-east-1")}, clock,
                        [&](const HealthDecision& d) { seen.push_back(d); });
  HealthInput fence{HealthEvent::kSetFenced, EventSource::kProbe, "", "nope", 0};
  auto refused = tracker.ApplyEvent("us-east-1", fence);
  ASSERT_TRUE(refused.ok());
  EXPECT_FALSE(refused->accepted);
  EXPECT_FALSE(tracker.Get("us-east-1")->fenced);

  fence.source = EventSource::kOrchestrator;
  fence.detail = "fo-1 fence step";
  auto d = tracker.ApplyEvent("us-east-1", fence);
  ASSERT_TRUE(d.ok());
  EXPECT_TRUE(d->changed);
  EXPECT_TRUE(tracker.Get("us-east-1")->fenced);
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].reason, "us-east-1 fenced (orchestrator: fo-1 fence step)");
  // Probe rounds still count while fenced; the overlay stays.
  ASSERT_TRUE(tracker.ApplyRound(Round("us-east-1", false)).ok());
  EXPECT_TRUE(tracker.Get("us-east-1")->fenced);
}

// A failed round whose catalog answered something icewarden cannot parse.
ProbeRound UnparsedRound(const std::string& region) {
  const std::string why =
      "get catalog config from http://catalog: catalog returned a malformed CatalogConfig: "
      "not JSON";
  ProbeRound r = Round(region, false, "catalog_config", why);
  ProbeResult p;
  p.kind = "catalog_config";
  p.detail = why;
  p.answered = true;
  p.unparsed = true;
  ProbeResult tcp;
  tcp.kind = "tcp";
  tcp.ok = true;
  r.probes = {p, tcp};
  return r;
}

// DESIGN.md rule 7: a catalog that answers garbage is alive. However long it does, the
// region is degraded with the parse error as the reason, never unreachable.
TEST(HealthTrackerTest, UnparsableAnswersKeepARegionDegradedAndNeverUnreachable) {
  FakeClock clock;
  std::vector<HealthDecision> changes;
  HealthTracker tracker(
      {Healthy("us-east-1")}, clock, [&](const HealthDecision& d) { changes.push_back(d); },
      HealthThresholds{3, 2});
  for (int i = 0; i < 10; ++i) {
    auto d = tracker.ApplyRound(UnparsedRound("us-east-1"));
    ASSERT_TRUE(d.ok());
    EXPECT_EQ(d->next.health, RegionHealth::kDegraded) << i << ": " << d->reason;
  }
  ASSERT_EQ(changes.size(), 1u) << "healthy -> degraded once, then it stays";
  EXPECT_EQ(changes[0].next.reason,
            "us-east-1 degraded: catalog_config answered with something icewarden cannot parse: "
            "get catalog config from http://catalog: catalog returned a malformed "
            "CatalogConfig: not JSON");

  // Unparsed rounds do not count towards fall: two refusals after them are not three.
  ASSERT_TRUE(tracker.ApplyRound(Round("us-east-1", false, "catalog_config", "refused")).ok());
  ASSERT_TRUE(tracker.ApplyRound(Round("us-east-1", false, "catalog_config", "refused")).ok());
  EXPECT_EQ(tracker.Get("us-east-1")->health, RegionHealth::kDegraded);

  // From unreachable, the first unparsable answer brings it back to degraded: it answered.
  ASSERT_TRUE(tracker.ApplyRound(Round("us-east-1", false, "catalog_config", "refused")).ok());
  EXPECT_EQ(tracker.Get("us-east-1")->health, RegionHealth::kUnreachable);
  auto back = tracker.ApplyRound(UnparsedRound("us-east-1"));
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->next.health, RegionHealth::kDegraded) << back->reason;
  EXPECT_TRUE(back->changed);

  // An answer that is merely an error (a 503) still counts as a failure, as before.
  for (int i = 0; i < 3; ++i)
    ASSERT_TRUE(
        tracker.ApplyRound(Round("us-east-1", false, "catalog_config", "HTTP 503 from GET")).ok());
  EXPECT_EQ(tracker.Get("us-east-1")->health, RegionHealth::kUnreachable);
}

}  // namespace
}  // namespace icewarden::testing
