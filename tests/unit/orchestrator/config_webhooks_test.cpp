// The config loader's `webhooks:` section (orchestrator/config/webhooks.cpp): who may post
// Alertmanager payloads, the signed generic endpoints and the mapping rules land where the
// receiver reads them, and every mistake is reported as FILE:LINE:COL with the key's path
// and a message that says what to write instead. Expected positions are counted by hand
// from the YAML literal (1-based; the literal's first line is line 1).

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>

#include "orchestrator/config/config.h"
#include "tests/fakes/test_paths.h"
#include "tests/unit/orchestrator/config_test_support.h"

namespace icewarden {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;
using ::testing::Pair;

using testing::EnvOf;
using testing::Yaml;

// Two regions and one route, on lines 1-5; every test's webhooks: section starts on line 6.
constexpr const char* kBase =
    R"(regions: [{name: us, catalog_uri: "http://a:1"}, {name: eu, catalog_uri: "http://b:1"}]
ownership: {default_owner: us}
failovers:
  - {name: us-to-eu, from: us, to: eu, runbook: r.yaml}
  - {name: any-to-us, from: "*", to: us, runbook: r.yaml}
)";

std::vector<std::string> WebhookErrorsOf(const std::string& webhooks, EnvLookup env = EnvOf({})) {
  ConfigLoad load = ParseConfig(kBase + webhooks, "c.yaml", std::move(env));
  EXPECT_EQ(load.config.has_value(), load.errors.empty());
  std::vector<std::string> out;
  for (const auto& e : load.errors) out.push_back(e.ToString());
  return out;
}

TEST(ConfigWebhooksTest, ValidSectionParsesEveryField) {
  const std::string dir = testing::MakeTempDir("config-webhooks-test");
  std::ofstream(dir + "/am-password") << "am-pass\n";
  ConfigLoad load = ParseConfig(std::string(kBase) + Yaml(R"(
webhooks:
  alertmanager:
    - {name: am, token_env: AM_TOKEN}
    - {name: am-basic, username: alertmanager, password_file: am-password}
  generic:
    - {name: ci, secret_env: CI_SECRET, max_skew: 90s}
    - {name: pager_2, secret_env: PAGER_SECRET}
  rules:
    - name: down-critical
      match: {alertname: IcebergCatalogDown, severity: "crit*"}
      effect: propose_failover
      route: us-to-eu
    - name: to-us
      match: {alertname: EuDown}
      effect: propose_failover
      route: any-to-us
      from: "${labels.region}"
      scope: "namespace:${labels.namespace}.*"
    - name: down
      match: {alertname: IcebergCatalogDown}
      effect: mark_suspect
    - name: noisy
      match: {alertname: "Watchdog"}
      effect: none
)"),
                                dir + "/c.yaml",
                                EnvOf({{"AM_TOKEN", "am-token"},
                                       {"CI_SECRET", "ci-secret"},
                                       {"PAGER_SECRET", "pager-secret"}}));
  std::filesystem::remove_all(dir);
  ASSERT_THAT(load.errors, IsEmpty()) << load.errors.front().ToString();
  const WebhooksConfig& w = load.config->webhooks;

  ASSERT_EQ(w.alertmanager.size(), 2u);
  EXPECT_EQ(w.alertmanager[0].name, "am");
  EXPECT_EQ(w.alertmanager[0].token.value(), "am-token");
  EXPECT_TRUE(w.alertmanager[0].username.empty());
  EXPECT_EQ(w.alertmanager[1].name, "am-basic");
  EXPECT_TRUE(w.alertmanager[1].token.empty());
  EXPECT_EQ(w.alertmanager[1].username, "alertmanager");
  EXPECT_EQ(w.alertmanager[1].password.value(), "am-pass") << "the file's newline is stripped";

  ASSERT_EQ(w.generic.size(), 2u);
  EXPECT_EQ(w.generic[0].name, "ci");
  EXPECT_EQ(w.generic[0].secret.value(), "ci-secret");
  EXPECT_EQ(w.generic[0].max_skew, std::chrono::seconds(90));
  EXPECT_EQ(w.generic[1].name, "pager_2");
  EXPECT_EQ(w.generic[1].max_skew, std::chrono::minutes(5)) << "the default";

  ASSERT_EQ(w.rules.size(), 4u);
  const WebhookRuleConfig& critical = w.rules[0];
  EXPECT_EQ(critical.name, "down-critical");
  EXPECT_THAT(critical.match,
              ElementsAre(Pair("alertname", "IcebergCatalogDown"), Pair("severity", "crit*")));
  EXPECT_EQ(critical.effect, "propose_failover");
  EXPECT_EQ(critical.route, "us-to-eu");
  EXPECT_EQ(critical.to, "eu") << "taken from the route";
  EXPECT_EQ(critical.from, "us") << "taken from the route";
  EXPECT_EQ(critical.scope, "") << "the receiver defaults it to owner:<from>";
  EXPECT_EQ(critical.line, 14);
  EXPECT_EQ(critical.column, 7);

  const WebhookRuleConfig& to_us = w.rules[1];
  EXPECT_EQ(to_us.to, "us");
  EXPECT_EQ(to_us.from, "${labels.region}") << "a route from '*' leaves from to the rule";
  EXPECT_EQ(to_us.scope, "namespace:${labels.namespace}.*");

  EXPECT_EQ(w.rules[2].effect, "mark_suspect");
  EXPECT_EQ(w.rules[2].region, "${labels.region}") << "the default";
  EXPECT_EQ(w.rules[3].effect, "none");
}

TEST(ConfigWebhooksTest, NoSectionMeansNoReceiversAndNoRules) {
  ConfigLoad load = ParseConfig(kBase, "c.yaml", EnvOf({}));
  ASSERT_THAT(load.errors, IsEmpty());
  EXPECT_THAT(load.config->webhooks.alertmanager, IsEmpty());
  EXPECT_THAT(load.config->webhooks.generic, IsEmpty());
  EXPECT_THAT(load.config->webhooks.rules, IsEmpty());
}

TEST(ConfigWebhooksTest, AlertmanagerReceiversNeedExactlyOneKindOfCredentials) {
  EXPECT_THAT(
      WebhookErrorsOf(Yaml(R"(
webhooks:
  alertmanager:
    - {name: am, token_env: T, username: u, password_env: P}
    - {name: x}
    - {name: am, token_env: T}
    - {name: b, username: "a:b", password_env: P}
    - {name: c, username: c}
    - {name: d, token_env: UNSET}
    - {token_env: T}
)"),
                      EnvOf({{"T", "t"}, {"P", "p"}})),
      ElementsAre(
          "c.yaml:8:7: webhooks.alertmanager[0]: set either a bearer token (token_env or "
          "token_file) or basic auth (username with password_env or password_file), as "
          "Alertmanager's http_config sends one of them",
          "c.yaml:9:7: webhooks.alertmanager[1]: set either a bearer token (token_env or "
          "token_file) or basic auth (username with password_env or password_file), as "
          "Alertmanager's http_config sends one of them",
          "c.yaml:10:14: webhooks.alertmanager[2].name: receiver 'am' is defined twice",
          "c.yaml:11:27: webhooks.alertmanager[3].username: must be non-empty and contain no "
          "':' (RFC 7617)",
          "c.yaml:12:7: webhooks.alertmanager[4]: missing required key 'password_env' or "
          "'password_file'",
          "c.yaml:13:28: webhooks.alertmanager[5].token_env: environment variable UNSET is not "
          "set",
          "c.yaml:14:7: webhooks.alertmanager[6]: missing required key 'name'"));
}

TEST(ConfigWebhooksTest, GenericEndpointsAreNamedPathSegmentsWithABoundedSkew) {
  EXPECT_THAT(WebhookErrorsOf(Yaml(R"(
webhooks:
  generic:
    - {name: "ci/x", secret_env: S}
    - {name: ok, secret_env: S, max_skew: 0s}
    - {name: late, secret_env: S, max_skew: 25h}
    - {name: ok, secret_env: S}
    - {name: nosecret}
)"),
                              EnvOf({{"S", "s"}})),
              ElementsAre("c.yaml:8:14: webhooks.generic[0].name: must be letters, digits, '-' "
                          "or '_': it is a path segment",
                          "c.yaml:9:43: webhooks.generic[1].max_skew: must be from 1s to 24h, "
                          "got 0s",
                          "c.yaml:10:45: webhooks.generic[2].max_skew: must be from 1s to 24h, "
                          "got 25h",
                          "c.yaml:11:14: webhooks.generic[3].name: generic webhook 'ok' is "
                          "defined twice",
                          "c.yaml:12:7: webhooks.generic[4]: missing required key 'secret_env' "
                          "or 'secret_file'"));
}

TEST(ConfigWebhooksTest, RulesNameKnownEffectsRoutesRegionsAndOnlyLabelTemplates) {
  EXPECT_THAT(
      WebhookErrorsOf(Yaml(R"(
webhooks:
  rules:
    - {name: a, match: {alertname: X}, effect: propse_failover}
    - {name: b, match: {}, effect: none}
    - {name: c, match: {"bad-label": X}, effect: none}
    - {name: d, match: {alertname: X}, effect: propose_failover, route: nowhere}
    - {name: e, match: {alertname: X}, effect: propose_failover}
    - {name: f, match: {alertname: X}, effect: mark_suspect, region: mars}
    - {name: g, match: {alertname: X}, effect: mark_suspect, region: "${env.HOME}"}
    - {name: h, match: {alertname: X}, effect: propose_failover, to: eu, scope: "owner:${labels.}"}
    - {name: a, match: {alertname: X}, effect: none}
    - {name: i, effect: none, severity: page}
)")),
      ElementsAre(
          "c.yaml:8:48: webhooks.rules[0].effect: expected one of 'mark_suspect', "
          "'propose_failover', 'none', got 'propse_failover'; did you mean 'propose_failover'?",
          "c.yaml:9:24: webhooks.rules[1].match: expected a mapping of label names to values "
          "(globs), e.g. {alertname: X}",
          "c.yaml:10:24: webhooks.rules[2].match: 'bad-label' is not a label name",
          "c.yaml:11:73: webhooks.rules[3].route: no failovers: route named 'nowhere'; routes "
          "are 'us-to-eu', 'any-to-us'",
          "c.yaml:12:7: webhooks.rules[4]: propose_failover needs 'to' (the target region) or "
          "'route' (a failovers: route)",
          "c.yaml:13:70: webhooks.rules[5].region: no region named 'mars'; regions are 'us', "
          "'eu'",
          "c.yaml:14:70: webhooks.rules[6].region: a template may only name an alert label, as "
          "in ${labels.region}; got '${env.HOME}'",
          "c.yaml:15:81: webhooks.rules[7].scope: a template may only name an alert label, as "
          "in ${labels.region}; got 'owner:${labels.}'",
          "c.yaml:16:14: webhooks.rules[8].name: rule 'a' is defined twice",
          "c.yaml:17:7: webhooks.rules[9]: missing required key 'match'",
          "c.yaml:17:31: webhooks.rules[9].severity: unknown key; allowed keys are 'name', "
          "'match', 'effect', 'region', 'route', 'to', 'from', 'scope'"));
}

TEST(ConfigWebhooksTest, UnknownKeysInTheSectionSuggestTheNearestOne) {
  EXPECT_THAT(WebhookErrorsOf(Yaml(R"(
webhooks:
  alertmanger: []
)")),
              ElementsAre("c.yaml:7:3: webhooks.alertmanger: unknown key, did you mean "
                          "'alertmanager'?"));
}

TEST(ConfigWebhooksTest, SecretValuesNeverAppearInErrors) {
  // Every secret is wrong somewhere near it; no error may quote one.
  const std::vector<std::string> errors = WebhookErrorsOf(
      Yaml(R"(
webhooks:
  alertmanager:
    - {name: am, token_env: T, username: hunter2-user, password_env: P}
  generic:
    - {name: "c i", secret_env: S, max_skew: 0s}
)"),
      EnvOf({{"T", "hunter2-token"}, {"P", "hunter2-password"}, {"S", "hunter2-secret"}}));
  ASSERT_EQ(errors.size(), 3u);
  for (const std::string& e : errors) {
    EXPECT_THAT(e, Not(HasSubstr("hunter2-token")));
    EXPECT_THAT(e, Not(HasSubstr("hunter2-password")));
    EXPECT_THAT(e, Not(HasSubstr("hunter2-secret")));
  }
}

}  // namespace
}  // namespace icewarden
