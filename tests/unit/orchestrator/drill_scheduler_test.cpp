// The drill scheduler against a fake clock: one run per slot on the daylight-saving days, and
// never a slot run twice across restarts.
#include <gtest/gtest.h>

#include "state/pause_store.h"
#include "tests/fakes/utc_time.h"
#include "tests/unit/orchestrator/drill_fixture.h"

namespace icewarden::testing {
namespace {

class DrillSchedulerTest : public DrillTest {
 protected:
  void SetUp() override {
    BuildDrills();
    config_.drills[0].mode = "plan";  // cheap runs: the scheduling is under test
  }

  std::unique_ptr<DrillScheduler> NewScheduler() {
    DrillSchedulerDeps d;
    d.drills = &config_.drills;
    d.service = drill_service_.get();
    d.store = drills_;
    d.pauses = PauseStoreOf(*store_);
    d.routes = &config_.failovers;
    d.clock = clock_;
    return std::make_unique<DrillScheduler>(d);
  }

  // Ticks once a minute from `from` to `to`.
  void RunBetween(DrillScheduler& s, UnixMillis from, UnixMillis to) {
    for (UnixMillis t = from; t < to; t += 60'000) {
      clock_->Set(t);
      s.Tick();
    }
  }

  std::vector<UnixMillis> Slots() {
    std::vector<UnixMillis> out;
    auto runs = drills_->ListDrillRuns("weekly", 0);
    for (const DrillRun& r : *runs) out.insert(out.begin(), r.scheduled_for);  // oldest first
    return out;
  }
};

TEST_F(DrillSchedulerTest, SpringForwardDayRunsThe0230DrillOnce) {
  auto s = NewScheduler();
  RunBetween(*s, Utc(2026, 3, 28, 12, 0), Utc(2026, 3, 30, 12, 0));
  EXPECT_EQ(Slots(), (std::vector<UnixMillis>{Utc(2026, 3, 29, 1, 0), Utc(2026, 3, 30, 0, 30)}))
      << "Berlin has no 02:30 on 2026-03-29: once at 03:00 CEST, then 02:30 CEST";
}

TEST_F(DrillSchedulerTest, FallBackDayRunsThe0230DrillOnce) {
  auto s = NewScheduler();
  RunBetween(*s, Utc(2026, 10, 24, 12, 0), Utc(2026, 10, 26, 12, 0));
  EXPECT_EQ(Slots(), (std::vector<UnixMillis>{Utc(2026, 10, 25, 0, 30), Utc(2026, 10, 26, 1, 30)}))
      << "Berlin has 02:30 twice on 2026-10-25: once, at the first";
}

TEST_F(DrillSchedulerTest, ARestartNeverRunsASlotTwice) {
  auto first = NewScheduler();
  RunBetween(*first, Utc(2026, 6, 1, 0, 0), Utc(2026, 6, 1, 1, 0));  // past 02:30 CEST
  ASSERT_EQ(Slots().size(), 1u);
  first.reset();
  auto second = NewScheduler();  // the daemon restarted within the catch-up window
  RunBetween(*second, Utc(2026, 6, 1, 1, 0), Utc(2026, 6, 1, 2, 0));
  EXPECT_EQ(Slots().size(), 1u) << "the slot is recorded as run";
}

TEST_F(DrillSchedulerTest, ASlotMissedWhileDownRunsOnceAfterTheRestart) {
  // Down from before the slot (00:30 UTC) until 00:50: the slot runs once when back.
  clock_->Set(Utc(2026, 6, 1, 0, 50));
  auto back = NewScheduler();
  back->Tick();
  EXPECT_EQ(Slots(), std::vector<UnixMillis>{Utc(2026, 6, 1, 0, 30)});
  auto again = NewScheduler();  // and a second restart does not repeat it
  again->Tick();
  EXPECT_EQ(Slots().size(), 1u);
  // Down for three days: only the latest missed slot runs, once.
  clock_->Set(Utc(2026, 6, 4, 0, 40));
  auto later = NewScheduler();
  later->Tick();
  later->Tick();
  EXPECT_EQ(Slots().back(), Utc(2026, 6, 4, 0, 30));
  EXPECT_EQ(Slots().size(), 2u);
}

// A pause that covers the drill (by its name, its route or one of its regions) skips the
// slot, saying why; the slot is not run late when the pause is lifted, and the next one runs.
TEST_F(DrillSchedulerTest, APausedSlotIsSkippedSayingWhyAndTheNextSlotRunsAfterResume) {
  PauseStore* pauses = PauseStoreOf(*store_);
  ASSERT_NE(pauses, nullptr);
  const std::string drill = config_.drills[0].name;
  for (const std::string& scope :
       std::vector<std::string>{"all", "drill:" + drill, "route:us-to-eu", "region:eu-central-1"}) {
    SCOPED_TRACE(scope);
    ASSERT_TRUE(
        pauses->PutPause({scope, "olivia", "db maintenance", 1, 0}, Audit("automation.pause"))
            .ok());
    const std::size_t before = Slots().size();
    auto s = NewScheduler();
    clock_->Set(Utc(2026, 6, 1, 0, 31));  // a minute past the 02:30 CEST slot
    const std::vector<std::string> lines = s->Tick();
    EXPECT_EQ(Slots().size(), before) << "a paused slot runs nothing";
    bool said = false;
    for (const std::string& l : lines)
      said = said || (l.find("is skipped: automation is paused for " + scope + " by olivia") !=
                          std::string::npos &&
                      l.find("db maintenance") != std::string::npos);
    EXPECT_TRUE(said) << (lines.empty() ? "no line" : lines.front());
    ASSERT_TRUE(pauses->DeletePause(scope, Audit("automation.resume")).ok());
    s->Tick();
    EXPECT_EQ(Slots().size(), before) << "the skipped slot is not run late";
  }
  // Not paused (a pause of another region's drills elsewhere does not cover this one).
  ASSERT_TRUE(
      pauses->PutPause({"drill:other", "olivia", "x", 1, 0}, Audit("automation.pause")).ok());
  auto s = NewScheduler();
  clock_->Set(Utc(2026, 7, 6, 0, 31));
  s->Tick();
  EXPECT_EQ(Slots().size(), 1u);
}

}  // namespace
}  // namespace icewarden::testing
