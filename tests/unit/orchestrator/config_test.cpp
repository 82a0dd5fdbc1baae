// The config loader on valid input: every field lands where it should, secrets are read
// from the environment and from files, probes inherit, ownership rules resolve, and every
// example in examples/ validates. Error reporting is in config_errors_test.cpp.

#include "orchestrator/config/config.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "tests/fakes/test_paths.h"
#include "tests/unit/orchestrator/config_test_support.h"

namespace icewarden {
namespace {

using std::chrono::milliseconds;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

using testing::EnvOf;
using testing::Yaml;

std::vector<std::string> Errors(const ConfigLoad& load) {
  std::vector<std::string> out;
  for (const auto& e : load.errors) out.push_back(e.ToString());
  return out;
}

void WriteFile(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

TEST(ConfigTest, ValidConfigParsesEveryField) {
  std::string dir = testing::MakeTempDir("config-test");
  WriteFile(dir + "/ci.token", "ci-secret\n");
  std::string path = dir + "/icewarden.yaml";
  WriteFile(path, Yaml(R"(
api:
  listen: 0.0.0.0:9000
  read_timeout: 250ms
  write_timeout: 2m
  tokens:
    - {name: alice, role: approver, token_env: ALICE_TOKEN}
    - name: ci
      role: operator
      token_file: ci.token
state:
  backend: sqlite
  path: state/ice.db
regions:
  - name: us-east-1
    catalog_uri: https://catalog.us.example.com/api/catalog
    warehouse: wh
    auth:
      type: oauth2
      client_id: icewarden
      client_secret_env: US_SECRET
      scope: PRINCIPAL_ROLE:ALL
      token_uri: https://auth.example.com/token
  - name: eu-central-1
    catalog_uri: http://127.0.0.1:18182
    auth: {type: bearer, token_env: EU_TOKEN}
    probe: {timeout: 1s, fall: 5}
  - name: ap-1
    catalog_uri: http://127.0.0.1:18183
ownership:
  default_owner: us-east-1
  rules:
    - {match: "eu.*", owner: eu-central-1}
policies:
  max_staleness: 90
  cooldown: 1h
  fencing_evidence: [operator, quorum_unreachable]
  two_person_approval: true
  probe: {interval: 3s, timeout: 2s, fall: 2, rise: 4}
)"));
  ConfigLoad load = LoadConfig(
      path, EnvOf({{"ALICE_TOKEN", "alice-secret"}, {"US_SECRET", "us"}, {"EU_TOKEN", "eu"}}));
  ASSERT_THAT(Errors(load), IsEmpty());
  ASSERT_TRUE(load.config.has_value());
  const Config& c = *load.config;
  EXPECT_EQ(c.source_path, path);

  EXPECT_EQ(c.api.listen, "0.0.0.0:9000");
  EXPECT_EQ(c.api.read_timeout, milliseconds(250));
  EXPECT_EQ(c.api.write_timeout, milliseconds(120000));
  ASSERT_EQ(c.api.tokens.size(), 2u);
  EXPECT_EQ(c.api.tokens[0].name, "alice");
  EXPECT_EQ(c.api.tokens[0].role, Role::kApprover);
  EXPECT_EQ(c.api.tokens[0].token.value(), "alice-secret");
  EXPECT_EQ(c.api.tokens[1].name, "ci");
  EXPECT_EQ(c.api.tokens[1].role, Role::kOperator);
  EXPECT_EQ(c.api.tokens[1].token.value(), "ci-secret");  // trailing newline stripped

  EXPECT_EQ(c.state.backend, "sqlite");
  EXPECT_EQ(c.state.path, dir + "/state/ice.db");

  ASSERT_EQ(c.regions.size(), 3u);
  const RegionConfig& us = c.regions[0];
  EXPECT_EQ(us.name, "us-east-1");
  EXPECT_EQ(us.catalog_uri, "https://catalog.us.example.com/api/catalog");
  EXPECT_EQ(us.warehouse, "wh");
  EXPECT_EQ(us.auth.kind, CatalogAuthConfig::Kind::kOAuth2);
  EXPECT_EQ(us.auth.client_id, "icewarden");
  EXPECT_EQ(us.auth.client_secret.value(), "us");
  EXPECT_EQ(us.auth.scope, "PRINCIPAL_ROLE:ALL");
  EXPECT_EQ(us.auth.token_uri, "https://auth.example.com/token");
  const RegionConfig& eu = c.regions[1];
  EXPECT_EQ(eu.auth.kind, CatalogAuthConfig::Kind::kBearer);
  EXPECT_EQ(eu.auth.token.value(), "eu");
  EXPECT_EQ(eu.warehouse, "");
  EXPECT_EQ(c.regions[2].auth.kind, CatalogAuthConfig::Kind::kNone);

  // Probe inheritance: us-east-1 and ap-1 take the policies' probe; eu-central-1 overrides
  // timeout and fall and inherits interval and rise.
  EXPECT_EQ(us.probe.interval, milliseconds(3000));
  EXPECT_EQ(us.probe.timeout, milliseconds(2000));
  EXPECT_EQ(us.probe.fall, 2);
  EXPECT_EQ(us.probe.rise, 4);
  EXPECT_EQ(eu.probe.interval, milliseconds(3000));
  EXPECT_EQ(eu.probe.timeout, milliseconds(1000));
  EXPECT_EQ(eu.probe.fall, 5);
  EXPECT_EQ(eu.probe.rise, 4);
  EXPECT_EQ(c.regions[2].probe.fall, 2);

  EXPECT_EQ(c.ownership.default_owner, "us-east-1");
  ASSERT_EQ(c.ownership.rules.size(), 1u);
  EXPECT_EQ(c.ownership.rules[0].match, "eu.*");
  EXPECT_EQ(c.ownership.rules[0].owner, "eu-central-1");

  EXPECT_EQ(c.policies.max_staleness, milliseconds(90000));  // a bare number is seconds
  EXPECT_EQ(c.policies.cooldown, milliseconds(3600000));
  EXPECT_EQ(c.policies.fencing_evidence,
            (std::vector<std::string>{"operator", "old_region_unreachable"}));
  EXPECT_TRUE(c.policies.two_person_approval);

  EXPECT_EQ(c.FindRegion("eu-central-1"), &c.regions[1]);
  EXPECT_EQ(c.FindRegion("mars"), nullptr);
  std::filesystem::remove_all(dir);
}

TEST(ConfigTest, MinimalConfigTakesDefaults) {
  ConfigLoad load = ParseConfig(Yaml(R"(
regions:
  - name: us-east-1
    catalog_uri: http://127.0.0.1:18181
ownership:
  default_owner: us-east-1
)"),
                                "conf/c.yaml", EnvOf({}));
  ASSERT_THAT(Errors(load), IsEmpty());
  const Config& c = *load.config;
  ProbeSettings defaults;
  EXPECT_EQ(c.api.listen, "127.0.0.1:8480");
  EXPECT_THAT(c.api.tokens, IsEmpty());
  EXPECT_EQ(c.state.path, "conf/icewarden.db");  // the default resolves against the folder
  EXPECT_EQ(c.regions[0].probe.interval, defaults.interval);
  EXPECT_EQ(c.regions[0].probe.timeout, defaults.timeout);
  EXPECT_EQ(c.policies.fencing_evidence, PolicyConfig().fencing_evidence);
  EXPECT_FALSE(c.policies.two_person_approval);
}

TEST(ConfigTest, AbsoluteStatePathIsKept) {
  ConfigLoad load = ParseConfig(Yaml(R"(
state: {path: /var/lib/icewarden/x.db}
regions: [{name: a, catalog_uri: "http://a:1"}]
ownership: {default_owner: a}
)"),
                                "/etc/icewarden/c.yaml", EnvOf({}));
  ASSERT_THAT(Errors(load), IsEmpty());
  EXPECT_EQ(load.config->state.path, "/var/lib/icewarden/x.db");
}

TEST(ConfigTest, SecretFileKeepsInnerContentAndStripsCrLf) {
  std::string dir = testing::MakeTempDir("config-test");
  WriteFile(dir + "/t", "line one\r\n");
  ConfigLoad load = ParseConfig(Yaml(R"(
api:
  tokens: [{name: a, role: admin, token_file: t}]
regions: [{name: a, catalog_uri: "http://a:1"}]
ownership: {default_owner: a}
)"),
                                dir + "/c.yaml", EnvOf({}));
  ASSERT_THAT(Errors(load), IsEmpty());
  EXPECT_EQ(load.config->api.tokens[0].token.value(), "line one");
  EXPECT_EQ(load.config->api.tokens[0].role, Role::kAdmin);
  std::filesystem::remove_all(dir);
}

TEST(ConfigTest, RoleNamesRoundTrip) {
  for (Role r : {Role::kViewer, Role::kOperator, Role::kApprover, Role::kAdmin}) {
    EXPECT_EQ(ParseRole(RoleName(r)), r);
  }
  EXPECT_EQ(ParseRole("root"), std::nullopt);
  EXPECT_EQ(ParseRole("Admin"), std::nullopt);
}

TEST(ConfigTest, ProcessEnvReadsTheEnvironment) {
  ::setenv("ICEWARDEN_CONFIG_TEST_VAR", "x", 1);
  EXPECT_EQ(ProcessEnv("ICEWARDEN_CONFIG_TEST_VAR"), "x");
  ::unsetenv("ICEWARDEN_CONFIG_TEST_VAR");
  EXPECT_EQ(ProcessEnv("ICEWARDEN_CONFIG_TEST_VAR"), std::nullopt);
}

TEST(GlobMatchTest, StarAndQuestionMark) {
  EXPECT_TRUE(GlobMatch("eu.*", "eu.orders"));
  EXPECT_TRUE(GlobMatch("eu.*", "eu."));
  EXPECT_TRUE(GlobMatch("eu.*", "eu.sales.orders"));  // '*' crosses dots
  EXPECT_FALSE(GlobMatch("eu.*", "europe.orders"));
  EXPECT_FALSE(GlobMatch("eu.*", "xeu.orders"));
  EXPECT_TRUE(GlobMatch("*", ""));
  EXPECT_TRUE(GlobMatch("*", "a.b.c"));
  EXPECT_TRUE(GlobMatch("*.orders", "sales.orders"));
  EXPECT_FALSE(GlobMatch("*.orders", "sales.orders_v2"));
  EXPECT_TRUE(GlobMatch("sales.orders_ap?", "sales.orders_apj"));
  EXPECT_FALSE(GlobMatch("sales.orders_ap?", "sales.orders_ap"));
  EXPECT_FALSE(GlobMatch("sales.orders_ap?", "sales.orders_apac"));
  EXPECT_TRUE(GlobMatch("a*b*c", "aXXbYYbZZc"));
  EXPECT_FALSE(GlobMatch("a*b*c", "aXXbYYbZZ"));
  EXPECT_TRUE(GlobMatch("sales.orders", "sales.orders"));
  EXPECT_FALSE(GlobMatch("sales.orders", "sales.order"));
  EXPECT_FALSE(GlobMatch("", "a"));
  EXPECT_TRUE(GlobMatch("", ""));
  EXPECT_TRUE(GlobMatch("**.?", "ns.t"));
}

TEST(OwnerForTest, FirstMatchingRuleElseDefault) {
  Config c;
  c.ownership.default_owner = "us-east-1";
  c.ownership.rules = {{"eu.gdpr_*", "eu-west-1"}, {"eu.*", "eu-central-1"}, {"*.t?", "ap-1"}};
  EXPECT_EQ(c.OwnerFor("eu.gdpr_users"), "eu-west-1");  // first match wins over "eu.*"
  EXPECT_EQ(c.OwnerFor("eu.orders"), "eu-central-1");
  EXPECT_EQ(c.OwnerFor("eu.t1"), "eu-central-1");
  EXPECT_EQ(c.OwnerFor("sales.t1"), "ap-1");
  EXPECT_EQ(c.OwnerFor("sales.orders"), "us-east-1");
  c.ownership.rules.clear();
  EXPECT_EQ(c.OwnerFor("eu.orders"), "us-east-1");
}

TEST(ExamplesTest, EveryExampleConfigValidates) {
  // Every variable is "set", each to a different value, so API tokens stay unique.
  EnvLookup every_var = [](const std::string& name) -> std::optional<std::string> {
    return "dummy-" + name;
  };
  std::filesystem::path examples = std::filesystem::path(testing::SourceDir()) / "examples";
  int checked = 0;
  for (const auto& entry : std::filesystem::directory_iterator(examples)) {
    if (entry.path().extension() != ".yaml") continue;
    ConfigLoad load = LoadConfig(entry.path().string(), every_var);
    EXPECT_THAT(Errors(load), IsEmpty()) << entry.path();
    ++checked;
  }
  EXPECT_GE(checked, 3);
}

TEST(ExamplesTest, LocalLabConfigDescribesTheLab) {
  std::string path = testing::SourceDir() + "/examples/local.yaml";
  ConfigLoad load = LoadConfig(
      path, [](const std::string& name) -> std::optional<std::string> { return "dummy-" + name; });
  ASSERT_THAT(Errors(load), IsEmpty());
  const Config& c = *load.config;
  EXPECT_EQ(c.api.listen, "127.0.0.1:8480");
  ASSERT_NE(c.FindRegion("us-east-1"), nullptr);
  EXPECT_EQ(c.FindRegion("us-east-1")->catalog_uri, "http://127.0.0.1:18181");
  ASSERT_NE(c.FindRegion("eu-central-1"), nullptr);
  EXPECT_EQ(c.FindRegion("eu-central-1")->catalog_uri, "http://127.0.0.1:18182");
  EXPECT_EQ(c.OwnerFor("eu.orders"), "eu-central-1");
  EXPECT_EQ(c.OwnerFor("sales.orders"), "us-east-1");
  ASSERT_EQ(c.api.tokens.size(), 4u);
  for (const auto& t : c.api.tokens) {
    EXPECT_EQ(t.token.value(), std::string("dummy-ICEWARDEN_") +
                                   (t.role == Role::kViewer     ? "VIEWER"
                                    : t.role == Role::kOperator ? "OPERATOR"
                                    : t.role == Role::kApprover ? "APPROVER"
                                                                : "ADMIN") +
                                   "_TOKEN");
  }
  EXPECT_THAT(c.state.path, HasSubstr("examples/local.db"));
  // Failovers in both directions through the lab's runbook, at run-lab.sh's DNS and
  // Alertmanager, with old_region_unreachable evidence after 10 s of silence.
  EXPECT_EQ(c.policies.unreachable_for, std::chrono::seconds(10));
  // And switchovers (failbacks) both ways through examples/runbooks/switchover.yaml, and the
  // one the replication-stopped drill rehearses, gated on verify.replica_caught_up too; and the
  // failover that closes the catalog gateways first.
  ASSERT_EQ(c.failovers.size(), 6u);
  std::set<std::pair<std::string, std::string>> directions, switchovers;
  for (const auto& route : c.failovers) {
    (route.kind == "switchover" ? switchovers : directions).insert({route.from, route.to});
    EXPECT_EQ(route.scope, "*");
    const std::string runbook =
        route.name.starts_with("checked-")   ? "examples/runbooks/checked-switchover.yaml"
        : route.name.starts_with("gateway-") ? "examples/runbooks/gateway-failover.yaml"
        : route.kind == "switchover"         ? "examples/runbooks/switchover.yaml"
                                             : "examples/runbooks/lab-failover.yaml";
    EXPECT_EQ(std::filesystem::path(route.runbook).lexically_normal(),
              (std::filesystem::path(testing::SourceDir()) / runbook).lexically_normal());
    EXPECT_TRUE(std::filesystem::exists(route.runbook)) << route.runbook;
    std::map<std::string, std::string> params(route.params.begin(), route.params.end());
    EXPECT_EQ(params["dns_server"], "127.0.0.1:18153");
    EXPECT_EQ(params["zone"], "lake.lab.");
    EXPECT_EQ(params["alertmanager_url"], "http://127.0.0.1:19093");
  }
  EXPECT_EQ(directions, (std::set<std::pair<std::string, std::string>>{
                            {"us-east-1", "eu-central-1"}, {"eu-central-1", "us-east-1"}}));
  EXPECT_EQ(switchovers, directions);
  // A catalog gateway per region, on fixed ports gateway.fence can reach.
  ASSERT_EQ(c.gateways.size(), 2u);
  EXPECT_EQ(c.gateways[0].region, "us-east-1");
  EXPECT_EQ(c.gateways[0].listen, "127.0.0.1:18281");
  EXPECT_EQ(c.gateways[1].region, "eu-central-1");
  EXPECT_EQ(c.gateways[1].listen, "127.0.0.1:18282");
  ASSERT_EQ(c.alerts.size(), 1u);
  EXPECT_EQ(c.alerts[0].action, "alert.alertmanager");
  // docs/webhooks.md's commands run against the lab: its receiver, its signed endpoint `ci`,
  // and a critical alert proposing to fail its own region over to the other one.
  ASSERT_EQ(c.webhooks.alertmanager.size(), 1u);
  EXPECT_EQ(c.webhooks.alertmanager[0].token.value(), "dummy-ICEWARDEN_WEBHOOK_TOKEN");
  ASSERT_EQ(c.webhooks.generic.size(), 1u);
  EXPECT_EQ(c.webhooks.generic[0].name, "ci");
  EXPECT_EQ(c.webhooks.generic[0].secret.value(), "dummy-CI_WEBHOOK_SECRET");
  std::set<std::pair<std::string, std::string>> proposes;
  for (const auto& rule : c.webhooks.rules)
    if (rule.effect == "propose_failover") proposes.insert({rule.from, rule.to});
  EXPECT_EQ(proposes, directions);
}

}  // namespace
}  // namespace icewarden

namespace icewarden {
namespace {

std::optional<std::string> AnyEnv(const std::string& name) { return "v-" + name; }

const char* kProbeBase = R"(regions:
  - name: us-east-1
    catalog_uri: http://127.0.0.1:18181
    probe:
)";

TEST(ConfigProbeKinds, KindsAndTargetsParse) {
  std::string yaml =
      std::string(kProbeBase) +
      "      kinds: [catalog_config, table_load, tcp, dns]\n"
      "      canary_table: sales.orders\n"
      "      tcp: 127.0.0.1:18181\n"
      "      dns: {name: catalog.lab.test, server: 127.0.0.1:5353, expect: 10.0.0.1}\n"
      "ownership:\n  default_owner: us-east-1\n"
      "policies:\n  lag_interval: 10s\n  retention_margin: 2h\n";
  auto load = ParseConfig(yaml, "p.yaml", AnyEnv);
  ASSERT_TRUE(load.errors.empty()) << load.errors[0].ToString();
  const auto& p = load.config->regions[0].probe;
  EXPECT_EQ(p.kinds, (std::vector<std::string>{"catalog_config", "table_load", "tcp", "dns"}));
  EXPECT_EQ(p.canary_table, "sales.orders");
  EXPECT_EQ(p.tcp_address, "127.0.0.1:18181");
  EXPECT_EQ(p.dns_name, "catalog.lab.test");
  EXPECT_EQ(p.dns_server, "127.0.0.1:5353");
  EXPECT_EQ(p.dns_expect, "10.0.0.1");
  EXPECT_EQ(load.config->policies.lag_interval, std::chrono::seconds(10));
  EXPECT_EQ(load.config->policies.retention_margin, std::chrono::hours(2));
}

TEST(ConfigProbeKinds, DefaultIsCatalogConfigOnly) {
  auto load = ParseConfig(
      "regions:\n  - name: a\n    catalog_uri: http://x\nownership:\n  default_owner: a\n",
      "p.yaml", AnyEnv);
  ASSERT_TRUE(load.errors.empty());
  EXPECT_EQ(load.config->regions[0].probe.kinds, std::vector<std::string>{"catalog_config"});
}

TEST(HostPortTest, ValidationAndUseReadTheSamePort) {
  // Validation used to read six digits and use all of them: "h:0065537" passed and the probe
  // connected to port 1; twenty digits threw at start-up.
  auto ok = ParseHostPort("127.0.0.1:0065535");
  ASSERT_TRUE(ok.has_value());
  EXPECT_EQ(ok->host, "127.0.0.1");
  EXPECT_EQ(ok->port, 65535);
  auto v6 = ParseHostPort("[::1]:53");
  ASSERT_TRUE(v6.has_value());
  EXPECT_EQ(v6->host, "::1");
  EXPECT_EQ(v6->port, 53);
  EXPECT_EQ(ParseHostPort("h:000000000000000000000053")->port, 53);  // zeros, not a throw
  for (const char* bad : {"h:0065537", "h:99999999999999999999999", "h:0", "h:", ":53", "h",
                          "::1:53", "[::1:53", "h:+53", "h:5a", "h: 53"})
    EXPECT_FALSE(ParseHostPort(bad).has_value()) << bad;
}

TEST(ConfigProbeKinds, ErrorsPointAtTheKey) {
  std::string yaml = std::string(kProbeBase) +
                     "      kinds: [catalog_config, table_load, pingg, catalog_config]\n"
                     "      tcp: localhost\n"
                     "ownership:\n  default_owner: us-east-1\n";
  auto load = ParseConfig(yaml, "p.yaml", AnyEnv);
  ASSERT_FALSE(load.config.has_value());
  std::vector<std::string> got;
  for (const auto& e : load.errors) got.push_back(e.ToString());
  ASSERT_EQ(got.size(), 4u) << ::testing::PrintToString(got);
  EXPECT_EQ(got[0].rfind("p.yaml:5:14: ", 0), 0u) << got[0];  // kinds: missing canary_table
  EXPECT_NE(got[0].find("canary_table"), std::string::npos);
  EXPECT_EQ(got[1].rfind("p.yaml:5:43: ", 0), 0u) << got[1];  // pingg
  EXPECT_EQ(got[2].rfind("p.yaml:5:50: ", 0), 0u) << got[2];  // listed twice
  EXPECT_NE(got[2].find("listed twice"), std::string::npos);
  EXPECT_EQ(got[3].rfind("p.yaml:6:12: ", 0), 0u) << got[3];  // tcp
  EXPECT_NE(got[3].find("HOST:PORT"), std::string::npos);
}

}  // namespace
}  // namespace icewarden
