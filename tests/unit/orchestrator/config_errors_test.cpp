// The config loader on bad input: every error is reported as FILE:LINE:COL with the path
// of the key, all of them in file order, and no secret value ever appears in one.
// Expected positions are counted by hand from the YAML literal (1-based; the literal's
// first line is line 1).

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
using ::testing::Not;

using testing::EnvOf;
using testing::Yaml;

std::vector<std::string> ErrorsOf(const std::string& yaml, EnvLookup env = EnvOf({})) {
  ConfigLoad load = ParseConfig(yaml, "c.yaml", std::move(env));
  EXPECT_EQ(load.config.has_value(), load.errors.empty());
  std::vector<std::string> out;
  for (const auto& e : load.errors) out.push_back(e.ToString());
  return out;
}

TEST(ConfigErrorsTest, ATokenGivenAsItsHashIsCheckedAndComparedWithThePlainOnes) {
  // printf %s hunter2 | sha256sum
  const std::string hunter2 = "f52fbd32b2b3b86ff88ef6c490628285f482af15ddcb29541f94bcf526a3f6c7";
  auto load = ParseConfig(std::string(R"(api:
  tokens:
    - {name: a, role: viewer, token_env: A}
    - {name: b, role: operator, token_sha256: )") +
                              hunter2 + R"(}
    - {name: c, role: viewer, token_sha256: "not-a-digest"}
    - {name: d, role: viewer, token_env: D, token_sha256: )" +
                              hunter2 + R"(}
regions: [{name: a, catalog_uri: "http://a:1"}]
ownership: {default_owner: a}
)",
                          "c.yaml", EnvOf({{"A", "hunter2"}, {"D", "other"}}));
  std::vector<std::string> errors;
  for (const auto& e : load.errors) errors.push_back(e.ToString());
  EXPECT_THAT(
      errors,
      ElementsAre("c.yaml:4:47: api.tokens[1].token_sha256: this token has the same value as "
                  "api.tokens[0]; every API token must be different",
                  "c.yaml:5:45: api.tokens[2].token_sha256: must be the 64 hex digits of the "
                  "token's SHA-256, as `icewarden token hash` prints them",
                  "c.yaml:6:59: api.tokens[3].token_sha256: set one of 'token_env', "
                  "'token_file' or 'token_sha256', not several"));

  // Upper-case hex is the same digest; it is kept in lower case.
  auto ok = ParseConfig(R"(api:
  tokens:
    - {name: ci, role: operator, token_sha256: F52FBD32B2B3B86FF88EF6C490628285F482AF15DDCB29541F94BCF526A3F6C7}
regions: [{name: a, catalog_uri: "http://a:1"}]
ownership: {default_owner: a}
)",
                        "c.yaml", EnvOf({}));
  ASSERT_TRUE(ok.config) << (ok.errors.empty() ? "" : ok.errors[0].ToString());
  ASSERT_EQ(ok.config->api.tokens.size(), 1u);
  EXPECT_EQ(ok.config->api.tokens[0].token_sha256, hunter2);
  EXPECT_TRUE(ok.config->api.tokens[0].token.empty());
}

TEST(ConfigErrorsTest, UnknownKeyNearAnAllowedOneSuggestsIt) {
  EXPECT_THAT(ErrorsOf(Yaml(R"(
regions:
  - name: us-east-1
    catalog_uri: http://127.0.0.1:18181
    prbe: {fall: 2}
ownership:
  default_owner: us-east-1
)")),
              ElementsAre("c.yaml:4:5: regions[0].prbe: unknown key, did you mean 'probe'?"));
}

TEST(ConfigErrorsTest, UnknownKeyDifferingInCaseSuggestsIt) {
  // The misspelt key is left out, so the required one is also reported missing, at the
  // mapping (line 2, column 5: the first key of the list item).
  EXPECT_THAT(ErrorsOf(Yaml(R"(
regions:
  - name: us-east-1
    Catalog_URI: http://127.0.0.1:18181
ownership:
  default_owner: us-east-1
)")),
              ElementsAre("c.yaml:2:5: regions[0]: missing required key 'catalog_uri'",
                          "c.yaml:3:5: regions[0].Catalog_URI: unknown key, did you mean "
                          "'catalog_uri'?"));
}

TEST(ConfigErrorsTest, UnknownKeyFarFromAllListsTheAllowedKeys) {
  EXPECT_THAT(ErrorsOf(Yaml(R"(
regions: [{name: a, catalog_uri: "http://a:1"}]
ownership: {default_owner: a}
colour: blue
)")),
              ElementsAre("c.yaml:3:1: colour: unknown key; allowed keys are 'api', 'state', "
                          "'regions', 'ownership', 'policies', 'failovers', 'webhooks', 'alerts', "
                          "'drills', 'gateways'"));
}

TEST(ConfigErrorsTest, WrongTypeNamesTheKeyAndTheExpectedType) {
  EXPECT_THAT(ErrorsOf(Yaml(R"(
regions:
  - name: us-east-1
    catalog_uri: http://127.0.0.1:18181
  - name: eu-central-1
    catalog_uri: http://127.0.0.1:18182
    probe:
      fall: three
ownership:
  default_owner: [us-east-1]
policies:
  two_person_approval: maybe
  fencing_evidence: operator
)")),
              ElementsAre("c.yaml:7:13: regions[1].probe.fall: expected an integer, got 'three'",
                          "c.yaml:9:18: ownership.default_owner: expected a string, got a list",
                          "c.yaml:11:24: policies.two_person_approval: expected true or false, "
                          "got 'maybe'",
                          "c.yaml:12:21: policies.fencing_evidence: expected a list, got "
                          "'operator'"));
}

TEST(ConfigErrorsTest, MissingRequiredKeysPointAtTheMappingThatLacksThem) {
  EXPECT_THAT(ErrorsOf(Yaml(R"(
regions:
  - name: us-east-1
    catalog_uri: http://127.0.0.1:18181
  - name: eu-central-1
    warehouse: wh
  - catalog_uri: http://127.0.0.1:18183
)")),
              ElementsAre("c.yaml:1:1: missing required key 'ownership'",
                          "c.yaml:4:5: regions[1]: missing required key 'catalog_uri'",
                          "c.yaml:6:5: regions[2]: missing required key 'name'"));
}

TEST(ConfigErrorsTest, BadDurationsNameTheAcceptedForms) {
  EXPECT_THAT(
      ErrorsOf(Yaml(R"(
regions: [{name: a, catalog_uri: "http://a:1"}]
ownership: {default_owner: a}
policies:
  cooldown: 5 minutes
  max_staleness: -3s
)")),
      ElementsAre("c.yaml:4:13: policies.cooldown: expected a duration such as '250ms', '5s', "
                  "'2m', '1h' or a whole number of seconds, got '5 minutes'",
                  "c.yaml:5:18: policies.max_staleness: expected a duration such as '250ms', "
                  "'5s', '2m', '1h' or a whole number of seconds, got '-3s'"));
}

TEST(ConfigErrorsTest, ListenMustBeHostColonPort) {
  const char* tail =
      "regions: [{name: a, catalog_uri: \"http://a:1\"}]\nownership: {default_owner: a}\n";
  EXPECT_THAT(ErrorsOf(std::string("api:\n  listen: \":8480\"\n") + tail),
              ElementsAre("c.yaml:2:11: api.listen: the host is empty in ':8480'; use 0.0.0.0 "
                          "to listen everywhere"));
  EXPECT_THAT(ErrorsOf(std::string("api:\n  listen: 127.0.0.1:70000\n") + tail),
              ElementsAre("c.yaml:2:11: api.listen: the port must be a number from 0 to 65535, "
                          "got '127.0.0.1:70000'"));
  EXPECT_THAT(ErrorsOf(std::string("api: {listen: localhost}\n") + tail),
              ElementsAre("c.yaml:1:15: api.listen: expected HOST:PORT such as "
                          "'127.0.0.1:8480', got 'localhost'"));
  EXPECT_THAT(ErrorsOf(std::string("api: {listen: \"[::1]:0\"}\n") + tail), ::testing::IsEmpty());
}

TEST(ConfigErrorsTest, StateBackendEtcdNeedsItsSectionAndReadsIt) {
  const std::string tail = R"(regions: [{name: a, catalog_uri: "http://a:1"}]
ownership: {default_owner: a}
)";
  EXPECT_THAT(ErrorsOf("state:\n  backend: etcd\n" + tail),
              ElementsAre("c.yaml:2:12: state.backend: the etcd backend needs a state.etcd "
                          "section with endpoints"));
  EXPECT_THAT(ErrorsOf("state:\n  backend: sqlite\n  etcd: {endpoints: []}\n" + tail),
              ElementsAre("c.yaml:3:9: state.etcd: is read only with state.backend: etcd"));
  EXPECT_THAT(ErrorsOf(R"(state:
  backend: etcd
  etcd:
    endpoints: ["https://127.0.0.1:2379", "127.0.0.1:2379"]
    prefix: /icewarden
    leader_ttl: 2500ms
    max_txn_ops: 4
)" + tail),
              ElementsAre("c.yaml:4:17: state.etcd.endpoints[0]: an https:// endpoint needs "
                          "state.etcd.tls.ca_file, the CA that signs the members' certificates",
                          "c.yaml:4:43: state.etcd.endpoints[1]: expected http://HOST:PORT or "
                          "https://HOST:PORT, got '127.0.0.1:2379'",
                          "c.yaml:5:13: state.etcd.prefix: must end with '/', e.g. '/icewarden/'",
                          "c.yaml:6:17: state.etcd.leader_ttl: must be whole seconds (etcd grants "
                          "leases in seconds)",
                          "c.yaml:7:18: state.etcd.max_txn_ops: must be from 8 to 100000, got 4"));
  ConfigLoad ok = ParseConfig(R"(state:
  backend: etcd
  etcd:
    endpoints: [http://127.0.0.1:2379, http://127.0.0.1:22379]
    max_txn_ops: 1024
    leader_ttl: 5s
    replica: icewarden-a
)" + tail,
                              "c.yaml", EnvOf({}));
  ASSERT_TRUE(ok.errors.empty()) << ok.errors.front().ToString();
  EXPECT_EQ(ok.config->state.backend, "etcd");
  EXPECT_EQ(ok.config->state.etcd.endpoints.size(), 2u);
  EXPECT_EQ(ok.config->state.etcd.max_txn_ops, 1024);
  EXPECT_EQ(ok.config->state.etcd.leader_ttl, std::chrono::seconds(5));
  EXPECT_EQ(ok.config->state.etcd.replica, "icewarden-a");
  EXPECT_EQ(ok.config->state.etcd.prefix, "/icewarden/");
}

TEST(ConfigErrorsTest, EtcdWithUnreachableEvidenceNamesTheReplicasThatVote) {
  const std::string tail = R"(regions: [{name: a, catalog_uri: "http://a:1"}]
ownership: {default_owner: a}
)";
  const std::string policies = "policies: {fencing_evidence: [old_region_unreachable, operator]}\n";
  EXPECT_THAT(ErrorsOf(policies +
                       "state:\n  backend: etcd\n  etcd:\n    endpoints: "
                       "[http://127.0.0.1:2379]\n" +
                       tail),
              ElementsAre("c.yaml:5:5: state.etcd: policies.fencing_evidence accepts "
                          "old_region_unreachable, which with several replicas needs a majority "
                          "of them to agree: list every replica's name in state.etcd.replicas "
                          "(e.g. replicas: [icewarden-a, icewarden-b, icewarden-c])"));
  EXPECT_THAT(
      ErrorsOf(policies + R"(state:
  backend: etcd
  etcd:
    endpoints: [http://127.0.0.1:2379]
    replica: d
    replicas: [a, b, a, ""]
)" + tail),
      ElementsAre("c.yaml:6:14: state.etcd.replica: replica 'd' is not in "
                  "state.etcd.replicas",
                  "c.yaml:7:22: state.etcd.replicas[2]: replica 'a' is listed twice",
                  "c.yaml:7:25: state.etcd.replicas[3]: a replica's name must not be empty"));
  ConfigLoad ok = ParseConfig(policies + R"(state:
  backend: etcd
  etcd:
    endpoints: [http://127.0.0.1:2379]
    replicas: [a, b, c]
)" + tail,
                              "c.yaml", EnvOf({}));
  ASSERT_TRUE(ok.errors.empty()) << ok.errors.front().ToString();
  EXPECT_EQ(ok.config->state.etcd.replicas, (std::vector<std::string>{"a", "b", "c"}));
  // Without the evidence kind nothing votes, and the list may be left out.
  EXPECT_THAT(
      ErrorsOf("state:\n  backend: etcd\n  etcd:\n    endpoints: [http://127.0.0.1:2379]\n" + tail),
      ::testing::IsEmpty());
}

TEST(ConfigErrorsTest, RegionNamesMustBeUniqueAndWellFormed) {
  EXPECT_THAT(ErrorsOf(Yaml(R"(
regions:
  - name: us-east-1
    catalog_uri: http://127.0.0.1:18181
  - name: us-east-1
    catalog_uri: http://127.0.0.1:18182
  - name: US_East
    catalog_uri: ftp://127.0.0.1
region: 1
ownership:
  default_owner: us-east-1
)")),
              ElementsAre("c.yaml:4:11: regions[1].name: duplicate region name 'us-east-1' "
                          "(first used at regions[0])",
                          "c.yaml:6:11: regions[2].name: a region name may contain only "
                          "lowercase letters, digits and '-', got 'US_East'",
                          "c.yaml:7:18: regions[2].catalog_uri: expected an http:// or https:// "
                          "URL, got 'ftp://127.0.0.1'",
                          "c.yaml:8:1: region: unknown key, did you mean 'regions'?"));
}

TEST(ConfigErrorsTest, AtLeastOneRegion) {
  EXPECT_THAT(ErrorsOf("regions: []\nownership: {default_owner: a}\n"),
              ElementsAre("c.yaml:1:10: regions: must list at least one region",
                          "c.yaml:2:28: ownership.default_owner: no region named 'a'"));
}

TEST(ConfigErrorsTest, OwnersMustNameARegion) {
  EXPECT_THAT(ErrorsOf(Yaml(R"(
regions:
  - {name: us-east-1, catalog_uri: "http://127.0.0.1:18181"}
  - {name: eu-central-1, catalog_uri: "http://127.0.0.1:18182"}
ownership:
  default_owner: mars
  rules:
    - {match: "eu.*", owner: eu-central}
    - {owner: us-east-1}
)")),
              ElementsAre("c.yaml:5:18: ownership.default_owner: no region named 'mars'; "
                          "regions are 'us-east-1', 'eu-central-1'",
                          "c.yaml:7:30: ownership.rules[0].owner: no region named 'eu-central'; "
                          "did you mean 'eu-central-1'?",
                          "c.yaml:8:7: ownership.rules[1]: missing required key 'match'"));
}

TEST(ConfigErrorsTest, ProbeRules) {
  EXPECT_THAT(
      ErrorsOf(Yaml(R"(
regions:
  - name: a
    catalog_uri: http://a:1
    probe: {interval: 2s, timeout: 2s}
  - name: b
    catalog_uri: http://b:1
    probe: {interval: 1s, fall: 0, rise: 0}
ownership: {default_owner: a}
policies:
  probe: {interval: 0s}
)")),
      ElementsAre("c.yaml:4:36: regions[0].probe.timeout: the probe timeout (2s) must "
                  "be shorter than the interval (2s)",
                  // b inherits the default 2s timeout; only its interval is its own.
                  "c.yaml:7:23: regions[1].probe.interval: the probe timeout (2s) must "
                  "be shorter than the interval (1s)",
                  "c.yaml:7:33: regions[1].probe.fall: must be from 1 to 100, got 0",
                  "c.yaml:7:42: regions[1].probe.rise: must be from 1 to 100, got 0",
                  "c.yaml:10:21: policies.probe.interval: must be from 100ms to 1h, got 0s"));
}

TEST(ConfigErrorsTest, PolicyDurationsAndProbeCountsAreBounded) {
  // Sums like max_staleness + retention_margin and "now + interval" must not overflow, and a
  // lag round every few milliseconds would list every catalog in a tight loop.
  EXPECT_THAT(ErrorsOf(Yaml(R"(
policies:
  max_staleness: 744h
  lag_interval: 10ms
  cooldown: 100000h
  probe: {interval: 2h, fall: 1000}
regions:
  - name: a
    catalog_uri: http://a:1
ownership: {default_owner: a}
)")),
              ElementsAre("c.yaml:2:18: policies.max_staleness: must be from 0s to 720h, got 744h",
                          "c.yaml:3:17: policies.lag_interval: must be from 100ms to 1h, got 10ms",
                          "c.yaml:4:13: policies.cooldown: must be from 0s to 720h, got 100000h",
                          "c.yaml:5:21: policies.probe.interval: must be from 100ms to 1h, got 2h",
                          "c.yaml:5:31: policies.probe.fall: must be from 1 to 100, got 1000"));
}

TEST(ConfigErrorsTest, FencingEvidenceIsANonEmptyListOfKnownKindsWithoutDuplicates) {
  const char* head =
      "regions: [{name: a, catalog_uri: \"http://a:1\"}]\nownership: {default_owner: a}\n";
  EXPECT_THAT(ErrorsOf(std::string(head) + "policies: {fencing_evidence: []}\n"),
              ElementsAre("c.yaml:3:30: policies.fencing_evidence: must list at least one of "
                          "'steps_and_quiet_window', 'old_region_unreachable', 'operator', "
                          "'gateway_closed'"));
  EXPECT_THAT(
      ErrorsOf(std::string(head) + "policies: {fencing_evidence: [operator, operatr, operator]}\n"),
      ElementsAre("c.yaml:3:41: policies.fencing_evidence[1]: expected one of "
                  "'steps_and_quiet_window', 'old_region_unreachable', 'operator', "
                  "'gateway_closed', got 'operatr'; did you mean 'operator'?",
                  "c.yaml:3:50: policies.fencing_evidence[2]: 'operator' is listed twice"));
}

TEST(ConfigErrorsTest, CatalogAuthKeysMustMatchTheType) {
  EXPECT_THAT(
      ErrorsOf(Yaml(R"(
regions:
  - name: a
    catalog_uri: http://a:1
    auth:
      type: bearer
      token_env: A_TOKEN
      client_id: me
  - name: b
    catalog_uri: http://b:1
    auth: {type: oauth2, client_id: me}
  - name: c
    catalog_uri: http://c:1
    auth: {type: basic}
ownership: {default_owner: a}
)"),
               EnvOf({{"A_TOKEN", "t"}})),
      ElementsAre("c.yaml:7:18: regions[0].auth.client_id: is only used with type 'oauth2', "
                  "not 'bearer'",
                  "c.yaml:10:11: regions[1].auth: missing required key 'client_secret_env' or "
                  "'client_secret_file'",
                  "c.yaml:13:18: regions[2].auth.type: expected one of 'none', 'bearer', "
                  "'oauth2', got 'basic'"));
}

TEST(ConfigErrorsTest, ApiTokens) {
  EXPECT_THAT(ErrorsOf(Yaml(R"(
api:
  tokens:
    - {name: alice, role: admn, token_env: ALICE}
    - {name: alice, role: viewer, token_env: UNSET}
    - {name: bob, role: viewer}
    - {name: carol, role: viewer, token_env: ALICE, token_file: carol.token}
regions: [{name: a, catalog_uri: "http://a:1"}]
ownership: {default_owner: a}
)"),
                       EnvOf({{"ALICE", "alice-secret"}})),
              ElementsAre("c.yaml:3:27: api.tokens[0].role: expected one of 'viewer', "
                          "'operator', 'approver', 'admin', got 'admn'; did you mean 'admin'?",
                          "c.yaml:4:14: api.tokens[1].name: duplicate token name 'alice' (first "
                          "used at api.tokens[0])",
                          "c.yaml:4:46: api.tokens[1].token_env: environment variable UNSET is "
                          "not set",
                          "c.yaml:5:7: api.tokens[2]: missing required key 'token_env' or "
                          "'token_file'",
                          "c.yaml:6:65: api.tokens[3].token_file: set either 'token_env' or "
                          "'token_file', not both"));
}

TEST(ConfigErrorsTest, EmptyEnvironmentVariableIsNotSet) {
  EXPECT_THAT(ErrorsOf(Yaml(R"(
regions:
  - name: a
    catalog_uri: http://a:1
    auth: {type: bearer, token_env: EMPTY}
ownership: {default_owner: a}
)"),
                       EnvOf({{"EMPTY", ""}})),
              ElementsAre("c.yaml:4:37: regions[0].auth.token_env: environment variable EMPTY "
                          "is not set"));
}

TEST(ConfigErrorsTest, SecretValuesNeverAppearInErrors) {
  std::string dir = testing::MakeTempDir("config-errors-test");
  std::ofstream(dir + "/dup.token") << "hunter2-from-file\n";
  ConfigLoad load = ParseConfig(
      Yaml(R"(
api:
  tokens:
    - {name: a, role: viewer, token_env: A}
    - {name: b, role: viewer, token_env: B}
    - {name: c, role: viewer, token_file: dup.token}
    - {name: d, role: viewer, token_env: D}
regions:
  - name: a
    catalog_uri: http://a:1
    auth: {type: bearer, token_env: A, scope: x}
  - name: b
    catalog_uri: http://b:1
    auth: {type: oauth2, client_id: x, client_secret_env: B, token_uri: "ftp://x"}
ownership: {default_owner: z}
)"),
      dir + "/c.yaml",
      EnvOf({{"A", "hunter2-from-env"}, {"B", "hunter2-from-env"}, {"D", "hunter2-from-file"}}));
  std::vector<std::string> errors;
  for (const auto& e : load.errors) errors.push_back(e.ToString());
  std::string f = dir + "/c.yaml";
  EXPECT_THAT(errors,
              ElementsAre(f + ":4:42: api.tokens[1].token_env: this token has the same value as "
                              "api.tokens[0]; every API token must be different",
                          f + ":6:42: api.tokens[3].token_env: this token has the same value as "
                              "api.tokens[2]; every API token must be different",
                          f + ":10:47: regions[0].auth.scope: is only used with type 'oauth2', "
                              "not 'bearer'",
                          f + ":13:73: regions[1].auth.token_uri: expected an http:// or "
                              "https:// URL, got 'ftp://x'",
                          f + ":14:28: ownership.default_owner: no region named 'z'; regions "
                              "are 'a', 'b'"));
  for (const auto& e : errors) EXPECT_THAT(e, Not(HasSubstr("hunter2")));
  std::filesystem::remove_all(dir);
}

TEST(ConfigErrorsTest, UnreadableSecretFileIsAnErrorAtItsKey) {
  ConfigLoad load = ParseConfig(Yaml(R"(
api:
  tokens: [{name: a, role: viewer, token_file: no-such.token}]
regions: [{name: a, catalog_uri: "http://a:1"}]
ownership: {default_owner: a}
)"),
                                "/nonexistent-dir/c.yaml", EnvOf({}));
  ASSERT_EQ(load.errors.size(), 1u);
  EXPECT_EQ(load.errors[0].ToString(),
            "/nonexistent-dir/c.yaml:2:48: api.tokens[0].token_file: cannot read "
            "'/nonexistent-dir/no-such.token': No such file or directory");
}

TEST(ConfigErrorsTest, ManyErrorsAreAllReportedInFileOrder) {
  // Found in a different order (policies and ownership are read around the regions), but
  // reported top to bottom.
  EXPECT_THAT(
      ErrorsOf(Yaml(R"(
policies:
  cooldown: soon
api:
  listen: nowhere
regions:
  - name: a
    catalog_uri: http://a:1
    probe: {fall: -1}
  - name: a
    catalog_uri: http://a:2
ownership:
  default_owner: a
  rules: [{match: "x.*", owner: b}]
)")),
      ElementsAre("c.yaml:2:13: policies.cooldown: expected a duration such as '250ms', '5s', "
                  "'2m', '1h' or a whole number of seconds, got 'soon'",
                  "c.yaml:4:11: api.listen: expected HOST:PORT such as '127.0.0.1:8480', got "
                  "'nowhere'",
                  "c.yaml:8:19: regions[0].probe.fall: must be from 1 to 100, got -1",
                  "c.yaml:9:11: regions[1].name: duplicate region name 'a' (first used at "
                  "regions[0])",
                  "c.yaml:13:33: ownership.rules[0].owner: no region named 'b'; regions are "
                  "'a'"));
}

TEST(ConfigErrorsTest, DuplicateKeyIsAnError) {
  EXPECT_THAT(ErrorsOf(Yaml(R"(
regions: [{name: a, catalog_uri: "http://a:1"}]
ownership: {default_owner: a}
regions: [{name: b, catalog_uri: "http://b:1"}]
)")),
              ElementsAre("c.yaml:3:1: regions: duplicate key (first at line 1)"));
}

TEST(ConfigErrorsTest, SyntaxErrorHasAPosition) {
  EXPECT_THAT(ErrorsOf("regions: [a\nownership: 1\n"),
              ElementsAre("c.yaml:2:10: YAML syntax error: end of sequence flow not found"));
  EXPECT_THAT(ErrorsOf("regions: a: b\n"),
              ElementsAre("c.yaml:1:11: YAML syntax error: illegal map value"));
}

TEST(ConfigErrorsTest, NotAMappingOrEmpty) {
  EXPECT_THAT(ErrorsOf("- a\n- b\n"), ElementsAre("c.yaml:1:1: expected a mapping, got a list"));
  EXPECT_THAT(ErrorsOf("# nothing here\n"),
              ElementsAre("c.yaml: the file is empty; expected a mapping with 'regions' and "
                          "'ownership'"));
}

TEST(ConfigErrorsTest, EmptyValueIsReportedAtItsKey) {
  // yaml-cpp places an empty value on the next line; the error points at the key instead.
  EXPECT_THAT(ErrorsOf(Yaml(R"(
api:
regions: [{name: a, catalog_uri: "http://a:1"}]
ownership:
  default_owner:
)")),
              ElementsAre("c.yaml:1:1: api: expected a mapping, got nothing",
                          "c.yaml:4:3: ownership.default_owner: expected a string, got nothing"));
}

TEST(ConfigErrorsTest, OnlyOneYamlDocument) {
  EXPECT_THAT(ErrorsOf(Yaml(R"(
regions: [{name: a, catalog_uri: "http://a:1"}]
ownership: {default_owner: a}
---
regions: []
)")),
              ElementsAre("c.yaml:4:1: a config file holds one YAML document, found another"));
}

// yaml-cpp's LoadAll never returned on these (tests/fuzz found the first): a config with a
// stray comma is an error at once, and `validate` or `serve` does not hang eating memory.
TEST(ConfigErrorsTest, AStrayCommaIsAnErrorNotAHang) {
  EXPECT_FALSE(ErrorsOf(",").empty());
  EXPECT_FALSE(ErrorsOf(",\n").empty());
  EXPECT_THAT(ErrorsOf(Yaml(R"(
regions: [{name: a, catalog_uri: "http://a:1"}]
ownership: {default_owner: a}
)") + ",\n"),
              ElementsAre("c.yaml:3:1: YAML syntax error: end of map not found"));
}

TEST(ConfigErrorsTest, DirectoryIsNotAConfigFile) {
  std::string dir = testing::MakeTempDir("config-errors-test");
  ConfigLoad load = LoadConfig(dir, EnvOf({}));
  ASSERT_EQ(load.errors.size(), 1u);
  EXPECT_EQ(load.errors[0].ToString(), dir + ": cannot read '" + dir + "': Is a directory");
  std::filesystem::remove_all(dir);
}

TEST(ConfigErrorsTest, MissingFileIsOneErrorAboutTheFile) {
  ConfigLoad load = LoadConfig("/nonexistent-dir/icewarden.yaml", EnvOf({}));
  EXPECT_FALSE(load.config.has_value());
  ASSERT_EQ(load.errors.size(), 1u);
  EXPECT_EQ(load.errors[0].line, 0);
  EXPECT_EQ(load.errors[0].file, "/nonexistent-dir/icewarden.yaml");
  EXPECT_EQ(load.errors[0].ToString(),
            "/nonexistent-dir/icewarden.yaml: cannot read '/nonexistent-dir/icewarden.yaml': "
            "No such file or directory");
}

TEST(ConfigErrorsTest, ConfigErrorToString) {
  EXPECT_EQ((ConfigError{"a.yaml", 3, 7, "boom"}).ToString(), "a.yaml:3:7: boom");
  EXPECT_EQ((ConfigError{"a.yaml", 0, 0, "boom"}).ToString(), "a.yaml: boom");
}

// gateway_closed is evidence only when there are gateways and the orchestrator can ask each.
TEST(ConfigErrorsTest, GatewayClosedEvidenceNeedsGatewaysTheOrchestratorCanAsk) {
  const std::string head = R"(
regions:
  - {name: us-east-1, catalog_uri: http://127.0.0.1:18181}
ownership:
  default_owner: us-east-1
policies:
  fencing_evidence: [operator, gateway_closed]
)";
  EXPECT_THAT(ErrorsOf(Yaml(head.c_str())),
              ElementsAre(HasSubstr("c.yaml:6:32: policies.fencing_evidence[1]: gateway_closed is "
                                    "evidence only where catalog gateways stand in front")));
  EXPECT_THAT(ErrorsOf(Yaml((head + R"(gateways:
  - {name: gw-a, region: us-east-1, listen: 127.0.0.1:0}
)")
                                .c_str())),
              ElementsAre(HasSubstr("c.yaml:6:32: policies.fencing_evidence[1]: gateway_closed "
                                    "needs every gateway to confirm its closure, and gateway "
                                    "'gw-a' (line 8)")));
  EXPECT_THAT(ErrorsOf(Yaml((head + R"(gateways:
  - {name: gw-a, region: us-east-1, listen: 127.0.0.1:0, advertise: http://gw-a.lab:8181}
)")
                                .c_str())),
              ::testing::IsEmpty());
}

}  // namespace
}  // namespace icewarden
