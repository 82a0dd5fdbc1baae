// ProbeScheduler on fake timers: rounds, jitter, no overlap, the deadline guard, Stop.
#include "health/probe_scheduler.h"

#include <gtest/gtest.h>

#include <random>

#include "tests/fakes/fake_probe.h"
#include "tests/fakes/fake_timers.h"

namespace icewarden::testing {
namespace {

using std::chrono::milliseconds;
using namespace std::chrono_literals;

// (bits >> 11) * 2^-53 == 0: no jitter at all.
constexpr std::uint64_t kMidpoint = 0;

class ProbeSchedulerTest : public ::testing::Test {
 protected:
  ProbeScheduleOptions Options() {
    ProbeScheduleOptions o;
    o.interval = 10s;
    o.timeout = 2s;
    o.grace = 500ms;
    return o;
  }

  std::unique_ptr<ProbeScheduler> Scheduler(ProbeScheduleOptions o, RandomBits random = nullptr) {
    if (!random) random = [] { return kMidpoint; };
    return std::make_unique<ProbeScheduler>(timers_, std::move(random), o,
                                            [this](const ProbeRound& r) {
                                              rounds_.push_back(r);
                                              round_times_.push_back(Elapsed());
                                            });
  }

  std::shared_ptr<FakeProbeScript> AddProbe(std::vector<std::unique_ptr<Probe>>& probes,
                                            const std::string& kind) {
    auto script = std::make_shared<FakeProbeScript>();
    probes.push_back(std::make_unique<FakeProbe>(kind, timers_, script));
    return script;
  }

  milliseconds Elapsed() const {
    return std::chrono::duration_cast<milliseconds>(timers_.Now() - start_);
  }

  FakeClock clock_;
  FakeTimers timers_{&clock_};
  std::chrono::steady_clock::time_point start_ = timers_.Now();
  std::vector<ProbeRound> rounds_;
  std::vector<milliseconds> round_times_;
};

TEST_F(ProbeSchedulerTest, RoundPassesWhenEveryProbePassesAndNamesTheFirstKind) {
  auto s = Scheduler(Options());
  std::vector<std::unique_ptr<Probe>> probes;
  auto config = AddProbe(probes, "catalog_config");
  auto load = AddProbe(probes, "table_load");
  ASSERT_TRUE(s->AddRegion("us-east-1", std::move(probes)).ok());
  s->Start();
  timers_.Advance(0ms);
  ASSERT_EQ(rounds_.size(), 1u);
  EXPECT_TRUE(rounds_[0].ok);
  EXPECT_EQ(rounds_[0].region, "us-east-1");
  EXPECT_EQ(rounds_[0].kind, "catalog_config");
  EXPECT_EQ(rounds_[0].detail, "");
  ASSERT_EQ(rounds_[0].probes.size(), 2u);
  EXPECT_EQ(rounds_[0].probes[1].kind, "table_load");
  // Both ran concurrently, each with the timeout as its deadline.
  EXPECT_EQ(config->deadlines, std::vector<milliseconds>{2s});
  EXPECT_EQ(load->deadlines, std::vector<milliseconds>{2s});
}

TEST_F(ProbeSchedulerTest, RoundFailsWithTheFirstFailedKindInConfiguredOrder) {
  auto s = Scheduler(Options());
  std::vector<std::unique_ptr<Probe>> probes;
  AddProbe(probes, "tcp");
  AddProbe(probes, "catalog_config")->Fail("connection refused", 300ms);
  AddProbe(probes, "table_load")->Fail("HTTP 503 from load table db.canary", 100ms);
  ASSERT_TRUE(s->AddRegion("us-east-1", std::move(probes)).ok());
  s->Start();
  timers_.Advance(1s);
  ASSERT_EQ(rounds_.size(), 1u);
  EXPECT_FALSE(rounds_[0].ok);
  EXPECT_EQ(rounds_[0].kind, "catalog_config");
  EXPECT_EQ(rounds_[0].detail, "connection refused");
  EXPECT_EQ(rounds_[0].latency, 300ms);  // the round ends with its last answer
  EXPECT_EQ(round_times_[0], 300ms);
}

TEST_F(ProbeSchedulerTest, RoundsStartEveryIntervalAfterTheirStart) {
  auto s = Scheduler(Options());
  std::vector<std::unique_ptr<Probe>> probes;
  auto p = AddProbe(probes, "catalog_config");
  p->fallback.delay = 1500ms;
  ASSERT_TRUE(s->AddRegion("eu-west-1", std::move(probes)).ok());
  s->Start();
  timers_.Advance(35s);
  // Starts at 0, 10, 20, 30 s; each ends 1.5 s later.
  EXPECT_EQ(p->checks, 4);
  EXPECT_EQ(round_times_, (std::vector<milliseconds>{1500ms, 11500ms, 21500ms, 31500ms}));
}

TEST_F(ProbeSchedulerTest, JitterOnlyShortensTheIntervalByUpToTenPercentAndVaries) {
  std::mt19937_64 rng(42);
  auto s = Scheduler(Options(), [&rng] { return rng(); });
  std::vector<std::unique_ptr<Probe>> probes;
  AddProbe(probes, "catalog_config");
  ASSERT_TRUE(s->AddRegion("eu-west-1", std::move(probes)).ok());
  s->Start();
  timers_.Advance(2000s);
  ASSERT_GT(round_times_.size(), 150u);
  milliseconds lo = 1h, hi = 0ms;
  for (size_t i = 1; i < round_times_.size(); ++i) {
    milliseconds gap = round_times_[i] - round_times_[i - 1];
    lo = std::min(lo, gap);
    hi = std::max(hi, gap);
  }
  EXPECT_GE(lo, 9000ms);
  EXPECT_LE(hi, 10000ms) << "jitter must never delay a round (detection bound)";
  EXPECT_LT(lo, 9150ms) << "jitter should use most of its range";
  EXPECT_GT(hi, 9850ms) << "jitter should use most of its range";
}

TEST_F(ProbeSchedulerTest, JitterExtremesOfTheRandomSource) {
  for (auto [bits, expected] :
       {std::pair<std::uint64_t, milliseconds>{0, 10000ms}, {~0ULL, 9000ms}}) {
    rounds_.clear();
    round_times_.clear();
    start_ = timers_.Now();
    auto s = Scheduler(Options(), [bits = bits] { return bits; });
    std::vector<std::unique_ptr<Probe>> probes;
    AddProbe(probes, "catalog_config");
    ASSERT_TRUE(s->AddRegion("eu-west-1", std::move(probes)).ok());
    s->Start();
    timers_.Advance(12s);
    ASSERT_EQ(round_times_.size(), 2u);
    EXPECT_EQ(round_times_[1] - round_times_[0], expected);
    s->Stop();
  }
}

TEST_F(ProbeSchedulerTest, RoundsNeverOverlapWhenAProbeIsSlowerThanTheInterval) {
  auto o = Options();
  o.interval = 1s;
  o.timeout = 5s;
  auto s = Scheduler(o);
  std::vector<std::unique_ptr<Probe>> probes;
  auto p = AddProbe(probes, "catalog_config");
  p->fallback.delay = 3s;
  ASSERT_TRUE(s->AddRegion("eu-west-1", std::move(probes)).ok());
  s->Start();
  timers_.Advance(2999ms);
  EXPECT_EQ(p->checks, 1) << "the next round waits for the previous one to end";
  timers_.Advance(1ms);
  EXPECT_EQ(p->checks, 2) << "and starts as soon as it ends";
  timers_.Advance(6s);
  EXPECT_EQ(round_times_, (std::vector<milliseconds>{3s, 6s, 9s}));
  EXPECT_EQ(p->checks, 4);
}

TEST_F(ProbeSchedulerTest, AProbeThatNeverAnswersFailsAtDeadlinePlusGraceAndLateAnswersAreIgnored) {
  auto s = Scheduler(Options());
  std::vector<std::unique_ptr<Probe>> probes;
  AddProbe(probes, "catalog_config");
  auto silent = AddProbe(probes, "table_load");
  silent->Silent();
  ASSERT_TRUE(s->AddRegion("us-east-1", std::move(probes)).ok());
  s->Start();
  timers_.Advance(2499ms);
  EXPECT_TRUE(rounds_.empty());
  timers_.Advance(1ms);
  ASSERT_EQ(rounds_.size(), 1u);
  EXPECT_FALSE(rounds_[0].ok);
  EXPECT_EQ(rounds_[0].kind, "table_load");
  EXPECT_EQ(rounds_[0].detail, "probe did not answer within 2500ms");
  EXPECT_EQ(rounds_[0].probes[1].latency, 2500ms);
  EXPECT_TRUE(rounds_[0].probes[0].ok);

  // The silent probe finally answers, after the round was closed: nothing happens.
  ASSERT_EQ(silent->silenced.size(), 1u);
  silent->silenced[0](ProbeResult{true, 3s, "table_load", ""});
  EXPECT_EQ(rounds_.size(), 1u);
  // The next round still starts on time and passes.
  timers_.Advance(7500ms);
  ASSERT_EQ(rounds_.size(), 2u);
  EXPECT_TRUE(rounds_[1].ok);
  EXPECT_EQ(round_times_[1], 10s);
}

TEST_F(ProbeSchedulerTest, StopCancelsEveryTimerAndDropsAnswersInFlight) {
  auto s = Scheduler(Options());
  std::vector<std::unique_ptr<Probe>> probes;
  auto p = AddProbe(probes, "catalog_config");
  p->fallback.delay = 1s;
  ASSERT_TRUE(s->AddRegion("us-east-1", std::move(probes)).ok());
  s->Start();
  timers_.Advance(500ms);
  s->Stop();
  EXPECT_FALSE(s->running());
  // Only the fake probe's own answer timer is left; the guard and next-round timers are gone.
  EXPECT_EQ(timers_.pending(), 1u);
  timers_.Advance(1h);
  EXPECT_TRUE(rounds_.empty());
  EXPECT_EQ(p->checks, 1);

  // Start again: a fresh round at once.
  s->Start();
  timers_.Advance(1s);
  EXPECT_EQ(rounds_.size(), 1u);
}

TEST_F(ProbeSchedulerTest, AnAnswerAfterTheSchedulerIsDestroyedIsHarmless) {
  auto s = Scheduler(Options());
  std::vector<std::unique_ptr<Probe>> probes;
  auto silent = AddProbe(probes, "catalog_config");
  silent->Silent();
  ASSERT_TRUE(s->AddRegion("us-east-1", std::move(probes)).ok());
  s->Start();
  s.reset();
  EXPECT_EQ(timers_.pending(), 0u);
  silent->silenced.at(0)(ProbeResult{false, 1s, "catalog_config", "late"});
  EXPECT_TRUE(rounds_.empty());
}

TEST_F(ProbeSchedulerTest, ASinkThatStopsTheSchedulerStopsIt) {
  std::unique_ptr<ProbeScheduler> s;
  s = std::make_unique<ProbeScheduler>(
      timers_, [] { return kMidpoint; }, Options(),
      [&](const ProbeRound& r) {
        rounds_.push_back(r);
        s->Stop();
      });
  std::vector<std::unique_ptr<Probe>> probes;
  AddProbe(probes, "catalog_config");
  ASSERT_TRUE(s->AddRegion("us-east-1", std::move(probes)).ok());
  s->Start();
  timers_.Advance(1h);
  EXPECT_EQ(rounds_.size(), 1u);
  EXPECT_EQ(timers_.pending(), 0u);
}

TEST_F(ProbeSchedulerTest, RegionsKeepTheirOwnRhythm) {
  auto s = Scheduler(Options());
  std::vector<std::unique_ptr<Probe>> a, b;
  auto pa = AddProbe(a, "catalog_config");
  auto pb = AddProbe(b, "catalog_config");
  pb->fallback.delay = 2s;
  pb->Fail("connection refused", 2s);
  ASSERT_TRUE(s->AddRegion("us-east-1", std::move(a)).ok());
  ASSERT_TRUE(s->AddRegion("eu-west-1", std::move(b)).ok());
  s->Start();
  timers_.Advance(25s);
  EXPECT_EQ(pa->checks, 3);
  EXPECT_EQ(pb->checks, 3);
  ASSERT_EQ(rounds_.size(), 6u);
  EXPECT_EQ(rounds_[0].region, "us-east-1");
  EXPECT_EQ(rounds_[1].region, "eu-west-1");
  EXPECT_FALSE(rounds_[1].ok);
  EXPECT_TRUE(rounds_[3].ok);
}

// Answers from inside Check() (a scripted transport does that) still make exactly one round.
class AnswersAtOnce final : public Probe {
 public:
  explicit AnswersAtOnce(bool ok) : ok_(ok) {}
  const std::string& kind() const override { return kind_; }
  void Check(std::chrono::milliseconds, std::function<void(ProbeResult)> done) override {
    ++checks;
    done(ProbeResult{ok_, 0ms, kind_, ok_ ? "" : "connection refused"});
  }
  int checks = 0;

 private:
  std::string kind_ = "catalog_config";
  bool ok_;
};

TEST_F(ProbeSchedulerTest, SynchronousAnswersMakeOneRoundPerInterval) {
  auto s = Scheduler(Options());
  std::vector<std::unique_ptr<Probe>> probes;
  probes.push_back(std::make_unique<AnswersAtOnce>(true));
  probes.push_back(std::make_unique<AnswersAtOnce>(false));
  auto* second = static_cast<AnswersAtOnce*>(probes.back().get());
  ASSERT_TRUE(s->AddRegion("us-east-1", std::move(probes)).ok());
  s->Start();
  ASSERT_EQ(rounds_.size(), 1u);
  EXPECT_FALSE(rounds_[0].ok);
  EXPECT_EQ(rounds_[0].detail, "connection refused");
  timers_.Advance(25s);
  EXPECT_EQ(rounds_.size(), 3u);
  EXPECT_EQ(second->checks, 3);
  EXPECT_EQ(timers_.pending(), 1u) << "only the next round's timer";
}

// "Probe it faster" while an alert says a region is suspect: the override applies to that
// region alone, cuts the wait already armed, and clearing it restores the interval.
TEST_F(ProbeSchedulerTest, AnIntervalOverrideProbesThatRegionFasterUntilCleared) {
  auto s = Scheduler(Options());
  std::vector<std::unique_ptr<Probe>> us, eu;
  AddProbe(us, "catalog_config");
  AddProbe(eu, "catalog_config");
  ASSERT_TRUE(s->AddRegion("us-east-1", std::move(us)).ok());
  ASSERT_TRUE(s->AddRegion("eu-central-1", std::move(eu)).ok());
  s->Start();
  timers_.Advance(3s);  // both ran at 0 s; their next rounds are armed for 10 s
  ASSERT_TRUE(s->SetIntervalOverride("us-east-1", 2s).ok());
  timers_.Advance(7s);  // to 10 s
  auto times_of = [&](const std::string& region) {
    std::vector<milliseconds> out;
    for (size_t i = 0; i < rounds_.size(); ++i)
      if (rounds_[i].region == region) out.push_back(round_times_[i]);
    return out;
  };
  // The wait armed at 0 s for 10 s is cut to 0 + 2 s, which has passed: at once, at 3 s.
  EXPECT_EQ(times_of("us-east-1"), (std::vector<milliseconds>{0s, 3s, 5s, 7s, 9s}));
  EXPECT_EQ(times_of("eu-central-1"), (std::vector<milliseconds>{0s, 10s}))
      << "the other region keeps its interval";

  ASSERT_TRUE(s->SetIntervalOverride("us-east-1", std::nullopt).ok());
  rounds_.clear();
  round_times_.clear();
  timers_.Advance(30s);  // to 40 s: the round armed at 9 s for 11 s, then every 10 s
  EXPECT_EQ(times_of("us-east-1"), (std::vector<milliseconds>{11s, 21s, 31s}));

  EXPECT_EQ(s->SetIntervalOverride("mars", 1s).code(), StatusCode::kNotFound);
  EXPECT_EQ(s->SetIntervalOverride("us-east-1", 0s).code(), StatusCode::kInvalidArgument);
}

TEST_F(ProbeSchedulerTest, AddRegionRejectsWhatCannotWork) {
  auto s = Scheduler(Options());
  std::vector<std::unique_ptr<Probe>> none;
  EXPECT_EQ(s->AddRegion("us-east-1", std::move(none)).message(), "region us-east-1 has no probes");
  std::vector<std::unique_ptr<Probe>> one, two;
  AddProbe(one, "tcp");
  AddProbe(two, "tcp");
  ASSERT_TRUE(s->AddRegion("us-east-1", std::move(one)).ok());
  EXPECT_EQ(s->AddRegion("us-east-1", std::move(two)).message(),
            "region us-east-1 is already scheduled for probing");

  auto bad = Options();
  bad.jitter = 0.9;
  auto t = Scheduler(bad);
  std::vector<std::unique_ptr<Probe>> three;
  AddProbe(three, "tcp");
  EXPECT_EQ(t->AddRegion("x", std::move(three)).code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace icewarden::testing
