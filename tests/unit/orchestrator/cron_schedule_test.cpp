// Drill schedules: cron fields, time zones, and daylight saving (a 02:30 drill runs once on the
// day the clocks skip 02:00-03:00 and once on the day they repeat 02:00-03:00).
#include "orchestrator/config/cron_schedule.h"

#include <gtest/gtest.h>

#include "tests/fakes/utc_time.h"

namespace icewarden::testing {
namespace {

CronSchedule Parse(const std::string& expr, const std::string& zone) {
  auto s = ParseCronSchedule(expr, zone);
  EXPECT_TRUE(s.ok()) << s.status().ToString();
  return s.ok() ? *s : CronSchedule{};
}

// Every firing in [from, to), by repeated NextFireAfter: what a scheduler would run.
std::vector<UnixMillis> Firings(const CronSchedule& s, UnixMillis from, UnixMillis to) {
  std::vector<UnixMillis> out;
  UnixMillis t = from - 1;
  while (auto next = NextFireAfter(s, t)) {
    if (*next >= to) break;
    out.push_back(*next);
    t = *next;
  }
  return out;
}

TEST(CronScheduleTest, DailyInUtc) {
  CronSchedule s = Parse("30 2 * * *", "UTC");
  EXPECT_EQ(NextFireAfter(s, Utc(2026, 6, 1, 0, 0)), Utc(2026, 6, 1, 2, 30));
  EXPECT_EQ(NextFireAfter(s, Utc(2026, 6, 1, 2, 30)), Utc(2026, 6, 2, 2, 30))
      << "strictly after: the slot just run is not due again";
}

TEST(CronScheduleTest, SpringForwardInBerlinRunsOnceAtTheTransition) {
  // 2026-03-29: Berlin skips 02:00-03:00 CET (01:00 UTC becomes 03:00 CEST).
  CronSchedule s = Parse("30 2 * * *", "Europe/Berlin");
  auto fired = Firings(s, Utc(2026, 3, 28, 12, 0), Utc(2026, 3, 30, 12, 0));
  ASSERT_EQ(fired.size(), 2u);
  EXPECT_EQ(fired[0], Utc(2026, 3, 29, 1, 0)) << "02:30 does not exist: it runs at 03:00 CEST";
  EXPECT_EQ(fired[1], Utc(2026, 3, 30, 0, 30)) << "02:30 CEST the next day";
}

TEST(CronScheduleTest, FallBackInBerlinRunsOnceAtTheFirstOccurrence) {
  // 2026-10-25: Berlin repeats 02:00-03:00 (CEST, then CET).
  CronSchedule s = Parse("30 2 * * *", "Europe/Berlin");
  auto fired = Firings(s, Utc(2026, 10, 24, 12, 0), Utc(2026, 10, 26, 12, 0));
  ASSERT_EQ(fired.size(), 2u);
  EXPECT_EQ(fired[0], Utc(2026, 10, 25, 0, 30)) << "02:30 CEST, the first of the two";
  EXPECT_EQ(fired[1], Utc(2026, 10, 26, 1, 30)) << "02:30 CET the next day";
}

TEST(CronScheduleTest, NewYorkSpringForwardAndFallBack) {
  // 2026-03-08: 02:00 EST -> 03:00 EDT. 2026-11-01: 02:00 EDT -> 01:00 EST (01:30 repeats).
  CronSchedule s = Parse("30 2 * * *", "America/New_York");
  auto spring = Firings(s, Utc(2026, 3, 8, 0, 0), Utc(2026, 3, 9, 0, 0));
  ASSERT_EQ(spring.size(), 1u);
  EXPECT_EQ(spring[0], Utc(2026, 3, 8, 7, 0)) << "03:00 EDT";
  CronSchedule early = Parse("30 1 * * *", "America/New_York");
  auto fall = Firings(early, Utc(2026, 11, 1, 0, 0), Utc(2026, 11, 2, 0, 0));
  ASSERT_EQ(fall.size(), 1u) << "01:30 happens twice that night and runs once";
  EXPECT_EQ(fall[0], Utc(2026, 11, 1, 5, 30)) << "01:30 EDT, the first occurrence";
}

TEST(CronScheduleTest, EveryQuarterHourThroughTheGapCollapsesToOneRun) {
  CronSchedule s = Parse("*/15 2 * * *", "Europe/Berlin");
  auto fired = Firings(s, Utc(2026, 3, 29, 0, 0), Utc(2026, 3, 29, 12, 0));
  EXPECT_EQ(fired.size(), 1u) << "02:00, 02:15, 02:30 and 02:45 all fall in the gap";
}

TEST(CronScheduleTest, FieldsListsRangesStepsAndNames) {
  CronSchedule s = Parse("0 9-17/4 * * MON-FRI", "UTC");
  // 2026-06-05 is a Friday: 9, 13, 17; the weekend nothing; Monday 9, 13, 17.
  auto fired = Firings(s, Utc(2026, 6, 5, 0, 0), Utc(2026, 6, 9, 0, 0));
  ASSERT_EQ(fired.size(), 6u);
  EXPECT_EQ(fired[2], Utc(2026, 6, 5, 17, 0));
  EXPECT_EQ(fired[3], Utc(2026, 6, 8, 9, 0));
  CronSchedule both = Parse("0 0 1 * 0", "UTC");  // the 1st, or any Sunday (Vixie cron)
  auto days = Firings(both, Utc(2026, 11, 1, 0, 0), Utc(2026, 11, 15, 0, 0));
  EXPECT_EQ(days.size(), 2u) << "Nov 1 (a Sunday and the 1st) and Sunday Nov 8";
  EXPECT_EQ(NextFireAfter(Parse("0 0 30 2 *", "UTC"), Utc(2026, 1, 1, 0, 0)), std::nullopt);
}

TEST(CronScheduleTest, BadExpressionsSayWhichFieldAndWhy) {
  struct Case {
    std::string expr, zone, says;
  };
  for (const Case& c : std::vector<Case>{
           {"30 2 * *", "UTC", "five fields"},
           {"61 2 * * *", "UTC", "minute field '61'"},
           {"0 24 * * *", "UTC", "outside 0-23"},
           {"0 2 * FOO *", "UTC", "'FOO' is not a value"},
           {"*/0 * * * *", "UTC", "at least 1"},
           {"0 2 * * *", "Mars/Olympus", "unknown time zone 'Mars/Olympus'"},
           {"0 2 * * *", "", "needs a time zone"},
       }) {
    auto s = ParseCronSchedule(c.expr, c.zone);
    ASSERT_FALSE(s.ok()) << c.expr;
    EXPECT_NE(s.status().message().find(c.says), std::string::npos)
        << c.expr << ": " << s.status().message();
  }
}

}  // namespace
}  // namespace icewarden::testing
