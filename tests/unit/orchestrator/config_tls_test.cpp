// A region's `tls:` settings: valid ones land in the config and in the catalog options every
// transport is made from, and each mistake is one FILE:LINE:COL error at the key that is
// wrong; and the same for state.etcd's tls and auth. The certificates are made for the test
// with the openssl CLI.
//
// Every document below has the same first lines, so positions count from line 4 ("tls:")
// and the tls keys start at line 5, column 7.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>

#include "orchestrator/config/catalog_options.h"
#include "orchestrator/config/config.h"
#include "orchestrator/gateway/gateway.h"
#include "tests/fakes/test_paths.h"
#include "tests/fakes/test_pki.h"
#include "tests/unit/orchestrator/config_test_support.h"

namespace icewarden {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

using testing::EnvOf;

class ConfigTlsTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (!testing::HaveOpenSslCli()) return;
    dir_ = testing::MakeTempDir("config-tls");
    std::string error;
    ASSERT_TRUE(testing::MakeTestCa(dir_, "ca", &ca_, &error)) << error;
    ASSERT_TRUE(
        testing::MakeTestLeaf(dir_, "client", ca_, "DNS:icewarden", "clientAuth", &client_, &error))
        << error;
    ASSERT_TRUE(
        testing::MakeTestLeaf(dir_, "other", ca_, "DNS:other", "clientAuth", &other_, &error))
        << error;
    std::ofstream(dir_ + "/notes.txt") << "not a certificate\n";
  }
  static void TearDownTestSuite() {
    if (!dir_.empty()) std::filesystem::remove_all(dir_);
  }
  void SetUp() override {
    if (!testing::HaveOpenSslCli()) GTEST_SKIP() << "openssl CLI is not installed";
  }

  // A config whose one region has `tls_lines` (each indented by the caller's 6 spaces)
  // under tls:, read as if from DIR/c.yaml.
  static std::string Doc(const std::string& tls_lines,
                         const std::string& uri = "https://127.0.0.1:8443") {
    return "regions:\n"
           "  - name: us-east-1\n"
           "    catalog_uri: " +
           uri +
           "\n"
           "    tls:\n" +
           tls_lines +
           "ownership:\n"
           "  default_owner: us-east-1\n";
  }
  static ConfigLoad Load(const std::string& yaml, EnvLookup env = EnvOf({}),
                         SecretCheck check = SecretCheck::kRequire) {
    return ParseConfig(yaml, dir_ + "/c.yaml", std::move(env), check);
  }
  static std::vector<std::string> Errors(const std::string& yaml, EnvLookup env = EnvOf({})) {
    ConfigLoad load = Load(yaml, std::move(env));
    EXPECT_EQ(load.config.has_value(), load.errors.empty());
    std::vector<std::string> out;
    for (const auto& e : load.errors) out.push_back(e.ToString());
    return out;
  }
  // A config whose one gateway has `tls_lines` under tls: (line 10), after `extra` lines.
  static std::string GatewayDoc(const std::string& tls_lines, const std::string& extra = "") {
    return "regions:\n"
           "  - name: us-east-1\n"
           "    catalog_uri: http://127.0.0.1:8181\n"
           "ownership:\n"
           "  default_owner: us-east-1\n"
           "gateways:\n"
           "  - name: gw\n"
           "    region: us-east-1\n"
           "    listen: 127.0.0.1:18443\n" +
           extra + "    tls:\n" + tls_lines;
  }
  // "DIR/c.yaml:LINE:COL: regions[0].tls...": the prefix every expected error starts with.
  static std::string At(int line, int col, const std::string& path) {
    return dir_ + "/c.yaml:" + std::to_string(line) + ":" + std::to_string(col) + ": " + path +
           ": ";
  }

  static std::string dir_;
  static testing::TestCa ca_;
  static testing::TestLeaf client_, other_;
};

std::string ConfigTlsTest::dir_;
testing::TestCa ConfigTlsTest::ca_;
testing::TestLeaf ConfigTlsTest::client_, ConfigTlsTest::other_;

TEST_F(ConfigTlsTest, EverySettingLandsInTheCatalogOptions) {
  // Relative paths resolve against the config's folder.
  ConfigLoad load =
      Load(Doc("      ca_file: ca.crt\n"
               "      cert_file: client.crt\n"
               "      key_file: client.key\n"
               "      server_name: catalog.internal\n"));
  ASSERT_THAT(load.errors, IsEmpty()) << load.errors[0].ToString();
  const CatalogTlsConfig& tls = load.config->regions[0].tls;
  EXPECT_EQ(tls.ca_file, ca_.cert);
  EXPECT_EQ(tls.cert_file, client_.cert);
  EXPECT_EQ(tls.server_name, "catalog.internal");
  EXPECT_FALSE(tls.insecure_skip_verify);

  TlsOptions options = CatalogOptionsFor(load.config->regions[0]).tls;
  EXPECT_TRUE(options.verify_peer);
  EXPECT_EQ(options.ca_file, ca_.cert);
  EXPECT_EQ(options.cert_file, client_.cert);
  EXPECT_THAT(options.key_pem, HasSubstr("PRIVATE KEY-----"));
  EXPECT_EQ(options.server_name, "catalog.internal");
  EXPECT_THAT(InsecureTlsWarnings(*load.config), IsEmpty());
}

TEST_F(ConfigTlsTest, TheKeyMayComeFromTheEnvironment) {
  ConfigLoad load = Load(Doc("      cert_file: client.crt\n"
                             "      key_env: CLIENT_KEY\n"),
                         EnvOf({{"CLIENT_KEY", ReadAll(client_.key)}}));
  ASSERT_THAT(load.errors, IsEmpty()) << load.errors[0].ToString();
  EXPECT_EQ(CatalogOptionsFor(load.config->regions[0]).tls.key_pem, ReadAll(client_.key));
}

TEST_F(ConfigTlsTest, ARegionWithoutTlsVerifiesWithTheSystemCas) {
  ConfigLoad load = ParseConfig(
      "regions:\n  - {name: us-east-1, catalog_uri: 'https://c.example.com'}\n"
      "ownership: {default_owner: us-east-1}\n",
      dir_ + "/c.yaml", EnvOf({}));
  ASSERT_THAT(load.errors, IsEmpty());
  TlsOptions options = CatalogOptionsFor(load.config->regions[0]).tls;
  EXPECT_TRUE(options.verify_peer);
  EXPECT_TRUE(options.ca_file.empty());
  EXPECT_TRUE(options.cert_file.empty());
}

TEST_F(ConfigTlsTest, SkippingVerificationTurnsItOffAndIsWarnedAboutByRegion) {
  ConfigLoad load = Load(Doc("      insecure_skip_verify: true\n"));
  ASSERT_THAT(load.errors, IsEmpty());
  EXPECT_FALSE(CatalogOptionsFor(load.config->regions[0]).tls.verify_peer);
  auto warnings = InsecureTlsWarnings(*load.config);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_THAT(warnings[0], HasSubstr("region us-east-1: tls.insecure_skip_verify is set"));
}

TEST_F(ConfigTlsTest, AnUnknownKeyIsNamedWithItsNearestKnownOne) {
  EXPECT_THAT(
      Errors(Doc("      ca_fle: ca.crt\n")),
      ElementsAre(At(5, 7, "regions[0].tls.ca_fle") + "unknown key, did you mean 'ca_file'?"));
}

TEST_F(ConfigTlsTest, AMissingCaFileIsAnError) {
  EXPECT_THAT(Errors(Doc("      ca_file: nowhere/ca.pem\n")),
              ElementsAre(At(5, 16, "regions[0].tls.ca_file") + "cannot read '" + dir_ +
                          "/nowhere/ca.pem': No such file or directory"));
}

TEST_F(ConfigTlsTest, AMissingCaFileIsAWarningWhereSecretsAreToo) {
  ConfigLoad load =
      Load(Doc("      ca_file: /etc/icewarden/ca.pem\n"), EnvOf({}), SecretCheck::kWarnIfMissing);
  EXPECT_THAT(load.errors, IsEmpty());
  ASSERT_EQ(load.warnings.size(), 1u);
  EXPECT_EQ(load.warnings[0].ToString(),
            At(5, 16, "warning: regions[0].tls.ca_file") +
                "cannot read '/etc/icewarden/ca.pem': No such file or directory (icewarden serve "
                "needs it)");
}

TEST_F(ConfigTlsTest, ACaFileWithoutACertificateIsAnError) {
  EXPECT_THAT(Errors(Doc("      ca_file: notes.txt\n")),
              ElementsAre(At(5, 16, "regions[0].tls.ca_file") + "'" + dir_ +
                          "/notes.txt': no PEM certificate found (want -----BEGIN "
                          "CERTIFICATE-----)"));
}

TEST_F(ConfigTlsTest, ACertificateWithoutItsKeyIsAnError) {
  EXPECT_THAT(Errors(Doc("      cert_file: client.crt\n")),
              ElementsAre(At(5, 18, "regions[0].tls.cert_file") +
                          "a client certificate needs its private key: set key_file or key_env"));
}

TEST_F(ConfigTlsTest, AKeyWithoutItsCertificateIsAnError) {
  EXPECT_THAT(Errors(Doc("      key_file: client.key\n")),
              ElementsAre(At(5, 17, "regions[0].tls.key_file") +
                          "a client key needs its certificate: set cert_file"));
}

TEST_F(ConfigTlsTest, AKeyOfAnotherCertificateIsAnError) {
  EXPECT_THAT(
      Errors(Doc("      cert_file: client.crt\n"
                 "      key_file: other.key\n")),
      ElementsAre(At(6, 17, "regions[0].tls.key_file") +
                  "the private key is not the key of this certificate ('" + client_.cert + "')"));
}

TEST_F(ConfigTlsTest, AKeyFileThatHoldsNoKeyIsAnErrorThatDoesNotQuoteIt) {
  auto errors =
      Errors(Doc("      cert_file: client.crt\n"
                 "      key_file: client.crt\n"));
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_THAT(errors[0], HasSubstr(At(6, 17, "regions[0].tls.key_file") +
                                   "not an unencrypted PEM private key"));
  EXPECT_THAT(errors[0], ::testing::Not(HasSubstr("BEGIN CERTIFICATE-----\n")));
}

TEST_F(ConfigTlsTest, SkippingVerificationWithACaFileIsAnError) {
  EXPECT_THAT(Errors(Doc("      ca_file: ca.crt\n"
                         "      insecure_skip_verify: true\n")),
              ElementsAre(At(6, 29, "regions[0].tls.insecure_skip_verify") +
                          "turns off the certificate check that ca_file is for: set one or the "
                          "other"));
}

TEST_F(ConfigTlsTest, TlsOnAnHttpCatalogIsAnError) {
  EXPECT_THAT(Errors(Doc("      ca_file: ca.crt\n", "http://127.0.0.1:8181")),
              ElementsAre(At(5, 7, "regions[0].tls") +
                          "tls settings apply only to https:// URLs, and catalog_uri is "
                          "http://127.0.0.1:8181"));
}

TEST_F(ConfigTlsTest, AServerNameIsAHostNameNotAUrl) {
  EXPECT_THAT(Errors(Doc("      server_name: https://catalog.internal:8443\n")),
              ElementsAre(At(5, 20, "regions[0].tls.server_name") +
                          "expected a host name or IP address as the certificate names it (no "
                          "scheme, port or path), got 'https://catalog.internal:8443'"));
}

TEST_F(ConfigTlsTest, AServerNameCannotAlsoStandForAnotherTokenHost) {
  std::string yaml =
      "regions:\n"
      "  - name: us-east-1\n"
      "    catalog_uri: https://catalog.internal:8443\n"
      "    auth: {type: oauth2, client_id: ice, client_secret_env: S,\n"
      "           token_uri: 'https://idp.example.com/token'}\n"
      "    tls:\n"
      "      server_name: catalog.example.com\n"
      "ownership:\n"
      "  default_owner: us-east-1\n";
  EXPECT_THAT(Errors(yaml, EnvOf({{"S", "x"}})),
              ElementsAre(At(7, 20, "regions[0].tls.server_name") +
                          "would also be required of auth.token_uri's host idp.example.com, which "
                          "is not the catalog's; put the token endpoint on the catalog's host or "
                          "drop server_name"));
}

// ---- state.etcd's tls: and auth: (orchestrator/config/etcd_access.cpp), with the same
// certificates. Every document starts with the same six lines: the endpoints are on line 6,
// and the first key a test adds under state.etcd on line 7 (at column 5, its keys at 7).

class ConfigErrorsEtcdTlsTest : public ConfigTlsTest {
 protected:
  static void SetUpTestSuite() {
    ConfigTlsTest::SetUpTestSuite();
    if (!dir_.empty()) std::ofstream(dir_ + "/etcd.password") << "pw-from-file-7\n";
  }
  // state.etcd with `endpoints` and then `lines` (keys of state.etcd indented by 4 spaces).
  static std::string EtcdDoc(const std::string& lines,
                             const std::string& endpoints = "[https://127.0.0.1:2379]") {
    return "regions: [{name: a, catalog_uri: \"http://a:1\"}]\n"
           "ownership: {default_owner: a}\n"
           "state:\n"
           "  backend: etcd\n"
           "  etcd:\n"
           "    endpoints: " +
           endpoints + "\n" + lines;
  }
};

TEST_F(ConfigErrorsEtcdTlsTest, EverySettingLandsInTheConfigWithPathsFromTheConfigsFolder) {
  ConfigLoad load =
      Load(EtcdDoc("    tls:\n"
                   "      ca_file: ca.crt\n"
                   "      cert_file: client.crt\n"
                   "      key_file: client.key\n"
                   "    auth:\n"
                   "      username: icewarden\n"
                   "      password_file: etcd.password\n",
                   "[https://127.0.0.1:2379, https://127.0.0.1:22379]"));
  ASSERT_THAT(load.errors, IsEmpty()) << load.errors[0].ToString();
  const EtcdStateConfig& etcd = load.config->state.etcd;
  EXPECT_EQ(etcd.endpoints.size(), 2u);
  EXPECT_EQ(etcd.tls.ca_file, ca_.cert);
  EXPECT_EQ(etcd.tls.cert_file, client_.cert);
  EXPECT_THAT(etcd.tls.key.value(), HasSubstr("PRIVATE KEY-----"));
  EXPECT_EQ(etcd.auth.username, "icewarden");
  EXPECT_EQ(etcd.auth.password.value(), "pw-from-file-7") << "the trailing newline is not in it";

  // A password from the environment, and TLS without a client certificate.
  ConfigLoad env = Load(EtcdDoc("    tls: {ca_file: ca.crt}\n"
                                "    auth: {username: icewarden, password_env: ETCD_PW}\n"),
                        EnvOf({{"ETCD_PW", "pw-from-env-3"}}));
  ASSERT_THAT(env.errors, IsEmpty()) << env.errors[0].ToString();
  EXPECT_EQ(env.config->state.etcd.auth.password.value(), "pw-from-env-3");
  EXPECT_TRUE(env.config->state.etcd.tls.cert_file.empty());
  // Auth over plain http is etcd's choice to allow (a private network).
  EXPECT_THAT(Errors(EtcdDoc("    auth: {username: icewarden, password_file: etcd.password}\n",
                             "[http://127.0.0.1:2379]")),
              IsEmpty());
}

TEST_F(ConfigErrorsEtcdTlsTest, EndpointsAndTlsMustAgree) {
  EXPECT_THAT(Errors(EtcdDoc("", "[https://127.0.0.1:2379]")),
              ElementsAre(At(6, 17, "state.etcd.endpoints[0]") +
                          "an https:// endpoint needs state.etcd.tls.ca_file, the CA that signs "
                          "the members' certificates"));
  EXPECT_THAT(Errors(EtcdDoc("    tls: {ca_file: ca.crt}\n",
                             "[https://127.0.0.1:2379, http://127.0.0.1:22379]")),
              ElementsAre(At(6, 41, "state.etcd.endpoints[1]") +
                          "mixes http:// and https:// (state.etcd.endpoints[0] is "
                          "https://127.0.0.1:2379); every member of one cluster speaks the same"));
  EXPECT_THAT(Errors(EtcdDoc("    tls: {ca_file: ca.crt}\n", "[http://127.0.0.1:2379]")),
              ElementsAre(At(7, 10, "state.etcd.tls") +
                          "tls settings apply only to https:// endpoints, and state.etcd.endpoints "
                          "are http://127.0.0.1:2379...; write them as https://HOST:PORT or drop "
                          "tls"));
  EXPECT_THAT(Errors(EtcdDoc("    tls: {cert_file: client.crt, key_file: client.key}\n")),
              ElementsAre(At(7, 10, "state.etcd.tls") + "missing required key 'ca_file'"));
}

TEST_F(ConfigErrorsEtcdTlsTest, TlsFilesAreCheckedAsOpenSslReadsThem) {
  EXPECT_THAT(Errors(EtcdDoc("    tls:\n"
                             "      ca_file: nope.crt\n"
                             "      cert_file: notes.txt\n"
                             "      key_file: client.key\n")),
              ElementsAre(At(8, 16, "state.etcd.tls.ca_file") + "cannot read '" + dir_ +
                              "/nope.crt': No such file or directory",
                          At(9, 18, "state.etcd.tls.cert_file") + "'" + dir_ +
                              "/notes.txt': no PEM certificate found (want -----BEGIN "
                              "CERTIFICATE-----)"));
  EXPECT_THAT(Errors(EtcdDoc("    tls:\n"
                             "      ca_file: ca.crt\n"
                             "      cert_file: client.crt\n")),
              ElementsAre(At(9, 18, "state.etcd.tls.cert_file") +
                          "a client certificate needs its private key: set key_file or key_env"));
  EXPECT_THAT(Errors(EtcdDoc("    tls:\n"
                             "      ca_file: ca.crt\n"
                             "      key_file: client.key\n")),
              ElementsAre(At(9, 17, "state.etcd.tls.key_file") +
                          "a client key needs its certificate: set cert_file"));
  std::vector<std::string> mismatch =
      Errors(EtcdDoc("    tls:\n"
                     "      ca_file: ca.crt\n"
                     "      cert_file: client.crt\n"
                     "      key_file: other.key\n"));
  EXPECT_THAT(mismatch, ElementsAre(At(10, 17, "state.etcd.tls.key_file") +
                                    "the private key is not the key of this certificate ('" +
                                    client_.cert + "')"));
  EXPECT_THAT(mismatch[0], ::testing::Not(HasSubstr("PRIVATE KEY")));
}

TEST_F(ConfigErrorsEtcdTlsTest, AuthNeedsAUserAndAPasswordFromAFileOrTheEnvironment) {
  std::vector<std::string> inline_password = Errors(EtcdDoc(
      "    auth: {username: icewarden, password: hunter2-inline}\n", "[http://127.0.0.1:2379]"));
  ASSERT_EQ(inline_password.size(), 2u);
  EXPECT_EQ(inline_password[0], At(7, 11, "state.etcd.auth") +
                                    "missing required key 'password_env' or 'password_file'");
  EXPECT_THAT(inline_password[1], HasSubstr(At(7, 33, "state.etcd.auth.password") + "unknown key"));
  EXPECT_THAT(inline_password[1], ::testing::Not(HasSubstr("hunter2-inline")));
  EXPECT_THAT(
      Errors(EtcdDoc("    auth: {password_file: missing.password}\n", "[http://127.0.0.1:2379]")),
      ElementsAre(At(7, 11, "state.etcd.auth") + "missing required key 'username'",
                  At(7, 27, "state.etcd.auth.password_file") + "cannot read '" + dir_ +
                      "/missing.password': No such file or directory"));
  EXPECT_THAT(Errors(EtcdDoc("    auth: {username: \"\", password_env: ETCD_PW}\n",
                             "[http://127.0.0.1:2379]"),
                     EnvOf({{"ETCD_PW", "pw-from-env-3"}})),
              ElementsAre(At(7, 22, "state.etcd.auth.username") +
                          "must name an etcd user (etcdctl user add NAME)"));
}

TEST_F(ConfigTlsTest, AGatewaysTlsLandsInTheConfigAndWhereTheFenceAsksIt) {
  ConfigLoad load =
      Load(GatewayDoc("      cert_file: client.crt\n"
                      "      key_file: client.key\n"
                      "      ca_file: ca.crt\n"));
  ASSERT_THAT(load.errors, IsEmpty()) << load.errors[0].ToString();
  const ServerTlsConfig& tls = load.config->gateways[0].tls;
  EXPECT_TRUE(tls.enabled());
  EXPECT_EQ(tls.cert_file, client_.cert);
  EXPECT_THAT(tls.key.value(), HasSubstr("PRIVATE KEY-----"));
  EXPECT_EQ(tls.ca_file, ca_.cert);
  std::vector<GatewayEndpoint> endpoints = GatewayEndpoints(*load.config);
  ASSERT_EQ(endpoints.size(), 1u);
  EXPECT_EQ(endpoints[0].url, "https://127.0.0.1:18443");
  EXPECT_EQ(endpoints[0].ca_file, ca_.cert);
}

TEST_F(ConfigTlsTest, AGatewaysCertificateWithoutItsKeyIsAnError) {
  EXPECT_THAT(Errors(GatewayDoc("      cert_file: client.crt\n")),
              ElementsAre(At(11, 7, "gateways[0].tls") +
                          "a server certificate needs its private key: set key_file or key_env"));
}

TEST_F(ConfigTlsTest, AGatewaysKeyOfAnotherCertificateIsAnError) {
  EXPECT_THAT(
      Errors(GatewayDoc("      cert_file: client.crt\n"
                        "      key_file: other.key\n")),
      ElementsAre(At(12, 17, "gateways[0].tls.key_file") +
                  "the private key is not the key of this certificate ('" + client_.cert + "')"));
}

TEST_F(ConfigTlsTest, AGatewayServingTlsMayNotAdvertiseHttp) {
  EXPECT_THAT(Errors(GatewayDoc("      cert_file: client.crt\n"
                                "      key_file: client.key\n",
                                "    advertise: http://gw.internal:8181\n")),
              ElementsAre(At(10, 16, "gateways[0].advertise") +
                          "the gateway serves TLS, so engines must be sent to an https:// URL; "
                          "write advertise: https://..."));
}

}  // namespace
}  // namespace icewarden
