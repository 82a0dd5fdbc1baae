// The `drills:` section: a valid drill, and every mistake reported as FILE:LINE:COL.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "orchestrator/config/config.h"
#include "tests/unit/orchestrator/config_test_support.h"

namespace icewarden {
namespace {

using ::testing::ElementsAre;
using testing::EnvOf;
using testing::Yaml;

constexpr const char* kHead = R"(regions:
  - {name: us-east-1, catalog_uri: "http://127.0.0.1:18181"}
  - {name: eu-central-1, catalog_uri: "http://127.0.0.1:18182"}
ownership: {default_owner: us-east-1}
failovers:
  - {name: us-to-eu, from: us-east-1, to: eu-central-1, runbook: rb.yaml}
  - {name: any-to-eu, to: eu-central-1, runbook: rb.yaml}
drills:
)";  // the drills start on line 9

ConfigLoad Load(const std::string& drills) {
  return ParseConfig(std::string(kHead) + drills, "c.yaml", EnvOf({}));
}

std::vector<std::string> ErrorsOf(const std::string& drills) {
  std::vector<std::string> out;
  for (const auto& e : Load(drills).errors) out.push_back(e.ToString());
  return out;
}

TEST(ConfigDrillsTest, ADrillTakesItsRegionsFromTheRoute) {
  ConfigLoad load = Load(Yaml(R"(
  - name: weekly
    route: us-to-eu
    schedule: "30 2 * * 1"
    time_zone: Europe/Berlin
    mode: shadow
    rto_target: 5m
    targets: {dns_name: drill-writer.lake.lab., namespace: drill}
  - {name: on-demand, route: any-to-eu, from: us-east-1}
)"));
  ASSERT_TRUE(load.errors.empty()) << load.errors.front().ToString();
  const DrillConfig& d = load.config->drills.at(0);
  EXPECT_EQ(d.from, "us-east-1");
  EXPECT_EQ(d.to, "eu-central-1");
  EXPECT_EQ(d.scope, "owner:us-east-1");
  EXPECT_EQ(d.time_zone, "Europe/Berlin");
  EXPECT_EQ(d.rto_target, std::chrono::minutes(5));
  EXPECT_EQ(d.targets.namespace_, "drill");
  const DrillConfig& o = load.config->drills.at(1);
  EXPECT_EQ(o.mode, "plan");
  EXPECT_EQ(o.time_zone, "UTC");
  EXPECT_TRUE(o.schedule.empty());
  EXPECT_EQ(load.config->FindDrill("on-demand"), &o);
}

TEST(ConfigDrillsTest, MistakesPointAtTheirKey) {
  EXPECT_THAT(ErrorsOf(Yaml(R"(
  - name: a
    route: us-to-ue
    schedule: "30 25 * * *"
    time_zone: Europe/Berln
    mode: rehearse
    rto_target: 2d
)")),
              ElementsAre("c.yaml:10:12: drills[0].route: no failovers: route named 'us-to-ue'; "
                          "did you mean 'us-to-eu'?",
                          "c.yaml:11:15: drills[0].schedule: hour field '25': '25' is outside 0-23",
                          "c.yaml:12:16: drills[0].time_zone: unknown time zone 'Europe/Berln': "
                          "use an IANA name from /usr/share/zoneinfo, e.g. Europe/Berlin or UTC",
                          "c.yaml:13:11: drills[0].mode: expected one of 'plan', 'shadow', "
                          "'live', got 'rehearse'",
                          "c.yaml:14:17: drills[0].rto_target: expected a duration such as "
                          "'250ms', '5s', '2m', '1h' or a whole number of seconds, got '2d'"));
}

TEST(ConfigDrillsTest, ShadowNeedsACanaryNamespaceAndAnyRouteNeedsFrom) {
  EXPECT_THAT(ErrorsOf(Yaml(R"(
  - {name: s, route: us-to-eu, mode: shadow}
  - {name: f, route: any-to-eu}
  - {name: s, route: us-to-eu, to: us-east-1}
)")),
              ElementsAre("c.yaml:9:5: drills[0]: a shadow drill needs targets.namespace: the "
                          "canary tables it moves instead of production's",
                          "c.yaml:10:5: drills[1]: the route 'any-to-eu' is from any region "
                          "('*'): name the drill's 'from' region",
                          "c.yaml:11:12: drills[2].name: drill 's' is defined twice",
                          "c.yaml:11:36: drills[2].to: the route 'us-to-eu' moves ownership to "
                          "eu-central-1, not us-east-1"));
}

}  // namespace
}  // namespace icewarden
