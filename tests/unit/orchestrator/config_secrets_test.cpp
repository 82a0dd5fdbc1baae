// Secrets that the config names correctly but that are not available where it is read (CI,
// a laptop): with SecretCheck::kWarnIfMissing (`config validate`) they are warnings and the
// config loads; with kRequire (`serve`, `config validate --strict`) they are errors. Mistakes
// in how a secret is named stay errors either way.

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

using testing::EnvOf;
using testing::Yaml;

std::vector<std::string> Strings(const std::vector<ConfigError>& errors) {
  std::vector<std::string> out;
  for (const auto& e : errors) out.push_back(e.ToString());
  return out;
}

const char* kTwoTokensAndBearer = R"(
api:
  tokens:
    - {name: viewer, role: viewer, token_env: VIEWER_TOKEN}
    - {name: admin, role: admin, token_env: ADMIN_TOKEN}
regions:
  - name: a
    catalog_uri: http://a:1
    auth: {type: bearer, token_env: CATALOG_TOKEN}
ownership: {default_owner: a}
)";

TEST(ConfigSecretsTest, UnsetEnvironmentVariablesAreWarningsWhenValidating) {
  ConfigLoad load = ParseConfig(Yaml(kTwoTokensAndBearer), "c.yaml", EnvOf({{"ADMIN_TOKEN", ""}}),
                                SecretCheck::kWarnIfMissing);
  EXPECT_THAT(Strings(load.errors), IsEmpty());
  EXPECT_THAT(Strings(load.warnings),
              ElementsAre("c.yaml:3:47: warning: api.tokens[0].token_env: environment variable "
                          "VIEWER_TOKEN is not set (icewarden serve needs it)",
                          "c.yaml:4:45: warning: api.tokens[1].token_env: environment variable "
                          "ADMIN_TOKEN is not set (icewarden serve needs it)",
                          "c.yaml:8:37: warning: regions[0].auth.token_env: environment "
                          "variable CATALOG_TOKEN is not set (icewarden serve needs it)"));
  ASSERT_TRUE(load.config.has_value());
  // Two absent tokens are not "the same value": only readable secrets are compared.
  ASSERT_EQ(load.config->api.tokens.size(), 2u);
  EXPECT_TRUE(load.config->api.tokens[0].token.empty());
  EXPECT_EQ(load.config->api.tokens[1].role, Role::kAdmin);
  EXPECT_EQ(load.config->regions[0].auth.kind, CatalogAuthConfig::Kind::kBearer);
}

TEST(ConfigSecretsTest, UnsetEnvironmentVariablesAreErrorsWhenRequired) {
  for (ConfigLoad load :
       {ParseConfig(Yaml(kTwoTokensAndBearer), "c.yaml", EnvOf({{"ADMIN_TOKEN", "x"}})),
        ParseConfig(Yaml(kTwoTokensAndBearer), "c.yaml", EnvOf({{"ADMIN_TOKEN", "x"}}),
                    SecretCheck::kRequire)}) {
    EXPECT_FALSE(load.config.has_value());
    EXPECT_THAT(load.warnings, IsEmpty());
    EXPECT_THAT(Strings(load.errors),
                ElementsAre("c.yaml:3:47: api.tokens[0].token_env: environment variable "
                            "VIEWER_TOKEN is not set",
                            "c.yaml:8:37: regions[0].auth.token_env: environment variable "
                            "CATALOG_TOKEN is not set"));
  }
}

TEST(ConfigSecretsTest, AbsentOrEmptySecretFilesAreWarningsAndWrongOnesErrors) {
  std::string dir = testing::MakeTempDir("config-secrets-test");
  std::ofstream(dir + "/empty.token") << "\n";
  std::filesystem::create_directory(dir + "/folder.token");
  std::ofstream(dir + "/big.token") << std::string(70 * 1024, 'x');
  const std::string yaml = Yaml(R"(
api:
  tokens:
    - {name: a, role: viewer, token_file: absent.token}
    - {name: b, role: viewer, token_file: empty.token}
    - {name: c, role: viewer, token_file: folder.token}
    - {name: d, role: viewer, token_file: big.token}
regions:
  - name: a
    catalog_uri: http://a:1
    auth: {type: oauth2, client_id: me, client_secret_file: /nonexistent/icewarden/secret}
ownership: {default_owner: a}
)");
  ConfigLoad load = ParseConfig(yaml, dir + "/c.yaml", EnvOf({}), SecretCheck::kWarnIfMissing);
  const std::string at = dir + "/c.yaml:";
  EXPECT_THAT(Strings(load.warnings),
              ElementsAre(at + "3:43: warning: api.tokens[0].token_file: cannot read '" + dir +
                              "/absent.token': No such file or directory (icewarden serve "
                              "needs it)",
                          at + "4:43: warning: api.tokens[1].token_file: secret file '" + dir +
                              "/empty.token' is empty (icewarden serve needs it)",
                          at + "10:61: warning: regions[0].auth.client_secret_file: cannot "
                               "read '/nonexistent/icewarden/secret': No such file or directory "
                               "(icewarden serve needs it)"));
  // A folder or a 70 KiB file is the wrong path here and on any host: still errors.
  ASSERT_EQ(load.errors.size(), 2u) << ::testing::PrintToString(Strings(load.errors));
  EXPECT_THAT(load.errors[0].ToString(), HasSubstr(at + "5:43: api.tokens[2].token_file: "));
  EXPECT_THAT(load.errors[1].ToString(),
              HasSubstr(at + "6:43: api.tokens[3].token_file: cannot read '" + dir +
                        "/big.token': larger than"));
  EXPECT_FALSE(load.config.has_value());
  std::filesystem::remove_all(dir);
}

TEST(ConfigSecretsTest, HowASecretIsNamedIsCheckedEvenWhenItMayBeMissing) {
  ConfigLoad load = ParseConfig(Yaml(R"(
api:
  tokens:
    - {name: a, role: viewer}
    - {name: b, role: viewer, token_env: B, token_file: b.token}
    - {name: c, role: viewer, token_env: ""}
regions: [{name: a, catalog_uri: "http://a:1"}]
ownership: {default_owner: a}
)"),
                                "c.yaml", EnvOf({}), SecretCheck::kWarnIfMissing);
  EXPECT_THAT(load.warnings, IsEmpty());
  EXPECT_THAT(Strings(load.errors),
              ElementsAre("c.yaml:3:7: api.tokens[0]: missing required key 'token_env' or "
                          "'token_file'",
                          "c.yaml:4:57: api.tokens[1].token_file: set either 'token_env' or "
                          "'token_file', not both",
                          "c.yaml:5:42: api.tokens[2].token_env: must name an environment "
                          "variable"));
}

TEST(ConfigSecretsTest, WarningsAreKeptNextToErrors) {
  ConfigLoad load = ParseConfig(Yaml(R"(
api:
  tokens: [{name: a, role: viewr, token_env: A}]
regions: [{name: a, catalog_uri: "http://a:1"}]
ownership: {default_owner: a}
)"),
                                "c.yaml", EnvOf({}), SecretCheck::kWarnIfMissing);
  EXPECT_FALSE(load.config.has_value());
  ASSERT_EQ(load.errors.size(), 1u);
  EXPECT_THAT(load.errors[0].ToString(), HasSubstr("api.tokens[0].role"));
  EXPECT_THAT(Strings(load.warnings),
              ElementsAre("c.yaml:2:46: warning: api.tokens[0].token_env: environment variable "
                          "A is not set (icewarden serve needs it)"));
}

TEST(ConfigSecretsTest, EveryExampleValidatesWithoutItsSecrets) {
  for (const char* name : {"local.yaml", "single-writer.yaml", "partitioned.yaml",
                           "primary-secondary.yaml", "ha/icewarden.yaml"}) {
    const std::string path = testing::SourceDir() + "/examples/" + name;
    ConfigLoad load = LoadConfig(path, EnvOf({}), SecretCheck::kWarnIfMissing);
    EXPECT_THAT(Strings(load.errors), IsEmpty()) << path;
    EXPECT_TRUE(load.config.has_value()) << path;
    EXPECT_FALSE(LoadConfig(path, EnvOf({})).config.has_value())
        << path << " names no secret, so this test proves nothing about it";
  }
}

}  // namespace
}  // namespace icewarden
