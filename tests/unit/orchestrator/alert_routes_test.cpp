// The `alerts:` section (orchestrator/config/alerts.cpp) and AlertRoutes (alert_routes.h): routes
// land as written, mistakes are FILE:LINE:COL, and each route's params are checked against its
// action kind with the alert the daemon would add.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "actions/action.h"
#include "orchestrator/config/config.h"
#include "orchestrator/watch/alert_routes.h"
#include "tests/unit/orchestrator/config_test_support.h"

namespace icewarden {
namespace {

using ::testing::ElementsAre;
using testing::EnvOf;
using ::testing::HasSubstr;
using testing::Yaml;

constexpr const char* kBase = R"(regions: [{name: us, catalog_uri: "http://a:1"}]
ownership: {default_owner: us}
)";

TEST(AlertRoutesTest, SectionParsesAndEachRouteIsCheckedAgainstItsActionKind) {
  ConfigLoad load = ParseConfig(std::string(kBase) + Yaml(R"(
alerts:
  - {name: am, action: alert.alertmanager, params: {url: "http://127.0.0.1:9093"}}
  - name: hook
    action: alert.webhook
    params: {url: "not a url", format: generic}
)"),
                                "c.yaml", EnvOf({}));
  ASSERT_TRUE(load.config) << (load.errors.empty() ? "" : load.errors[0].ToString());
  const Config& c = *load.config;
  ASSERT_EQ(c.alerts.size(), 2u);
  EXPECT_EQ(c.alerts[0].action, "alert.alertmanager");
  EXPECT_EQ(c.alerts[0].params,
            (std::vector<std::pair<std::string, std::string>>{{"url", "http://127.0.0.1:9093"}}));
  EXPECT_EQ(c.alerts[1].line, 5);
  EXPECT_EQ(c.alerts[1].column, 5);

  ActionRegistry actions;
  ASSERT_TRUE(registerBuiltinActions(actions, ActionEnv{}).ok());
  std::vector<std::string> errors;
  EXPECT_FALSE(AlertRoutes::Load(c, actions, &errors));
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_THAT(errors[0], HasSubstr("c.yaml:5:5: alerts route 'hook': params.url: "));

  Config good = c;
  good.alerts.pop_back();
  errors.clear();
  auto routes = AlertRoutes::Load(good, actions, &errors);
  ASSERT_TRUE(routes) << errors[0];
  EXPECT_FALSE(routes->empty());
}

TEST(AlertRoutesTest, UnknownActionAndDuplicateNamesAreErrorsAtTheirPosition) {
  ConfigLoad load = ParseConfig(std::string(kBase) + Yaml(R"(
alerts:
  - {name: a, action: alert.pager}
  - {name: a, action: alert.webhook, params: {url: {nested: 1}}}
)"),
                                "c.yaml", EnvOf({}));
  std::vector<std::string> errors;
  for (const auto& e : load.errors) errors.push_back(e.ToString());
  EXPECT_THAT(errors, ElementsAre(HasSubstr("c.yaml:4:23: alerts[0].action: expected one of "
                                            "'alert.alertmanager', 'alert.webhook'"),
                                  HasSubstr("c.yaml:5:12: alerts[1].name: alert route 'a' is "
                                            "defined twice"),
                                  HasSubstr("must be a single value")));
}

}  // namespace
}  // namespace icewarden
