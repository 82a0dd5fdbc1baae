// examples/primary-secondary.yaml: the DR sketch as a config whose runbook and drill load, as
// `icewarden config validate` and `serve` read them.
#include <gtest/gtest.h>

#include "actions/action.h"
#include "orchestrator/config/config.h"
#include "orchestrator/failovers/route_table.h"
#include "state/clock.h"
#include "tests/fakes/test_paths.h"
#include "tests/unit/orchestrator/config_test_support.h"

namespace icewarden::testing {
namespace {

TEST(DrillExamplesTest, PrimarySecondaryLoadsWithItsRunbookAndDrill) {
  const std::string path = SourceDir() + "/examples/primary-secondary.yaml";
  ConfigLoad load = LoadConfig(path, EnvOf({}), SecretCheck::kWarnIfMissing);
  ASSERT_TRUE(load.errors.empty()) << load.errors.front().ToString();
  const Config& c = *load.config;
  ASSERT_EQ(c.regions.size(), 2u);
  EXPECT_EQ(c.regions[0].catalog_uri, "https://us-east-1.catalog.example.com");
  EXPECT_EQ(c.regions[1].catalog_uri, "https://us-west-2.catalog.example.com");
  EXPECT_EQ(c.regions[0].probe.fall, 3) << "failure_threshold: 3";
  EXPECT_EQ(c.regions[0].probe.interval, std::chrono::seconds(10)) << "detection_interval: 10s";
  ActionEnv env;
  env.clock = SystemClock();
  ActionRegistry actions;
  ASSERT_TRUE(registerBuiltinActions(actions, env).ok());
  std::vector<std::string> errors;
  auto routes = RouteTable::Load(c, actions, &errors);
  ASSERT_TRUE(routes) << (errors.empty() ? "" : errors.front());
  const LoadedRoute* route = routes->Named("primary-to-secondary");
  ASSERT_NE(route, nullptr);
  std::vector<std::string> kinds;
  for (const RunbookStep& s : route->runbook.promote) kinds.push_back(s.action);
  EXPECT_EQ(kinds,
            (std::vector<std::string>{"ownership.transfer", "dns.rfc2136", "alert.alertmanager"}))
      << "DNS_UPDATE and ALERT_SRE around the ownership move";
  ASSERT_EQ(c.drills.size(), 1u);
  EXPECT_EQ(c.drills[0].route, "primary-to-secondary");
  EXPECT_EQ(c.drills[0].from, "us-east-1");
}

}  // namespace
}  // namespace icewarden::testing
