// Which pause covers what automation is about to start, and how its refusal reads.
#include "orchestrator/failovers/automation_pause.h"

#include <gtest/gtest.h>

namespace icewarden {
namespace {

Pause P(std::string scope, UnixMillis expected_end = 0) {
  return {std::move(scope), "otto", "incident 7", 1000, expected_end};
}

TEST(AutomationPauseTest, AScopeCoversItsRouteItsRegionsOrItsDrillOnly) {
  const AutomationTarget webhook{"us-to-eu", "us-east-1", "eu-central-1", ""};
  EXPECT_TRUE(CoveringPause({P("region:us-east-1")}, webhook));
  EXPECT_TRUE(CoveringPause({P("region:eu-central-1")}, webhook));
  EXPECT_TRUE(CoveringPause({P("route:us-to-eu")}, webhook));
  EXPECT_FALSE(CoveringPause({P("route:us-to-eu-2")}, webhook)) << "a whole name, not a prefix";
  EXPECT_FALSE(CoveringPause({P("region:us-east")}, webhook));
  EXPECT_FALSE(CoveringPause({P("drill:weekly")}, webhook)) << "a webhook is no drill";
  EXPECT_TRUE(CoveringPause({P("drill:weekly")}, {"us-to-eu", "", "", "weekly"}));
  EXPECT_FALSE(CoveringPause({}, webhook));
}

TEST(AutomationPauseTest, TheWidestCoveringPauseIsTheOneNamed) {
  auto p = CoveringPause({P("route:us-to-eu"), P("region:us-east-1"), P("all")},
                         {"us-to-eu", "us-east-1", "eu-central-1", ""});
  ASSERT_TRUE(p);
  EXPECT_EQ(p->scope, "all");
  p = CoveringPause({P("route:us-to-eu"), P("region:us-east-1")},
                    {"us-to-eu", "us-east-1", "eu-central-1", ""});
  EXPECT_EQ(p->scope, "region:us-east-1");
}

TEST(AutomationPauseTest, TheRefusalSaysWhoWhyUntilWhenAndHowToLiftIt) {
  EXPECT_EQ(PauseRefusal(P("all"), 5000),
            "automation is paused for all by otto since 1970-01-01T00:00:01.000Z (until "
            "resumed): incident 7; `icewarden resume` lifts it");
  const Pause timed = P("region:eu", 1000 + 3600 * 1000);
  EXPECT_EQ(PauseOverdueMillis(timed, 1000 + 3600 * 1000), 0);
  EXPECT_EQ(PauseOverdueMillis(timed, 1000 + 3600 * 1000 + 90 * 60 * 1000), 90 * 60 * 1000);
  EXPECT_NE(PauseRefusal(timed, 1000 + 3600 * 1000 + 90 * 60 * 1000)
                .find("(expected until 1970-01-01T01:00:01.000Z, overdue by 90 min)"),
            std::string::npos);
  EXPECT_NE(PauseRefusal(timed, 0).find("`icewarden resume --scope region:eu` lifts it"),
            std::string::npos);
}

}  // namespace
}  // namespace icewarden
