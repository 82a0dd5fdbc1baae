// TLS from the config, end to end: a region's `tls:` settings are loaded from a YAML file,
// turned into catalog options by CatalogOptionsFor (what serve's probes and lag monitor and
// the actions' CatalogSession all use), and a catalog_config probe (or an action's session)
// talks over the real Beast transport to an HTTPS catalog on 127.0.0.1 (cpp-httplib's
// SSLServer) whose certificates are made for the test by a throwaway CA.
//
// A certificate that does not verify fails the probe, so the region is not healthy; but the
// server did answer the handshake, so the probe reports `answered` and the failure is never
// silence (DESIGN.md rule 7, beast_transport.cpp's HandshakeReply): a wrong ca_file in our
// config must not become evidence that the region is down.
#include <utility>  // before Asio (Boost 1.74 + C++20)

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>
#include <filesystem>
#include <fstream>
#include <optional>

#include "actions/catalog_session.h"
#include "health/asio_timers.h"
#include "health/beast_transport.h"
#include "health/catalog_client.h"
#include "health/probe_kinds.h"
#include "orchestrator/config/catalog_options.h"
#include "orchestrator/config/config.h"
#include "tests/fakes/fake_clock.h"
#include "tests/fakes/test_paths.h"
#include "tests/fakes/test_pki.h"

namespace icewarden {
namespace {

using namespace std::chrono_literals;
using ::testing::HasSubstr;

using testing::HttpsCatalog;

class CatalogTlsTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (!testing::HaveOpenSslCli()) return;
    dir_ = testing::MakeTempDir("catalog-tls");
    std::string e;
    ASSERT_TRUE(testing::MakeTestCa(dir_, "ca", &ca_, &e)) << e;
    ASSERT_TRUE(testing::MakeTestCa(dir_, "wrong-ca", &wrong_ca_, &e)) << e;
    ASSERT_TRUE(testing::MakeTestLeaf(dir_, "loopback", ca_, "IP:127.0.0.1,DNS:localhost",
                                      "serverAuth", &loopback_, &e))
        << e;
    ASSERT_TRUE(testing::MakeTestLeaf(dir_, "named", ca_, "DNS:catalog.internal", "serverAuth",
                                      &named_, &e))
        << e;
    ASSERT_TRUE(
        testing::MakeTestLeaf(dir_, "client", ca_, "DNS:icewarden", "clientAuth", &client_, &e))
        << e;
  }
  static void TearDownTestSuite() {
    if (!dir_.empty()) std::filesystem::remove_all(dir_);
  }
  void SetUp() override {
    if (!testing::HaveOpenSslCli()) GTEST_SKIP() << "openssl CLI is not installed";
  }

  // The region us-east-1 at `uri` with `tls_lines` under tls:, loaded from a file as serve
  // loads it (every secret and file required).
  static RegionConfig Region(const std::string& uri, const std::string& tls_lines) {
    const std::string path = dir_ + "/icewarden.yaml";
    std::ofstream(path) << "regions:\n  - name: us-east-1\n    catalog_uri: " << uri
                        << "\n    tls:\n"
                        << tls_lines << "ownership:\n  default_owner: us-east-1\n";
    ConfigLoad load = LoadConfig(path, ProcessEnv, SecretCheck::kRequire);
    EXPECT_TRUE(load.errors.empty()) << load.errors[0].ToString();
    if (!load.config) return {};
    return load.config->regions[0];
  }

  // One catalog_config probe with the region's catalog options, over the real transport.
  static ProbeResult Probe(const RegionConfig& region) {
    boost::asio::io_context io;
    testing::FakeClock clock;
    auto timers = MakeAsioTimers(io);
    auto tcp = MakeAsioTcpConnector(io);
    CatalogClientOptions options = CatalogOptionsFor(region);
    options.retry.max_503_retries = 0;
    auto transport = MakeBeastTransport(io, options.tls);
    CatalogClient client(options, CatalogClientEnv{*transport, clock, [] { return 7ULL; }});
    ProbeRegistry registry;
    EXPECT_TRUE(registerBuiltinProbes(registry).ok());
    ProbeSpec spec;
    spec.kind = "catalog_config";
    spec.region = region.name;
    auto probe = registry.Create(spec, ProbeContext{*timers, clock, client, *transport, tcp.get()});
    EXPECT_TRUE(probe.ok()) << probe.status().ToString();
    if (!probe.ok()) return {};
    std::optional<ProbeResult> got;
    (*probe)->Check(5s, [&](ProbeResult r) { got = std::move(r); });
    for (auto until = std::chrono::steady_clock::now() + 10s;
         !got && std::chrono::steady_clock::now() < until;) {
      io.run_for(20ms);
      io.restart();
    }
    EXPECT_TRUE(got.has_value()) << "no probe result within 10 s";
    return got.value_or(ProbeResult{});
  }

  static std::string dir_;
  static testing::TestCa ca_, wrong_ca_;
  static testing::TestLeaf loopback_, named_, client_;
};

std::string CatalogTlsTest::dir_;
testing::TestCa CatalogTlsTest::ca_, CatalogTlsTest::wrong_ca_;
testing::TestLeaf CatalogTlsTest::loopback_, CatalogTlsTest::named_, CatalogTlsTest::client_;

TEST_F(CatalogTlsTest, TheRightCaFileVerifiesTheCatalog) {
  HttpsCatalog catalog(loopback_);
  ASSERT_TRUE(catalog.valid());
  ProbeResult r = Probe(Region(catalog.Uri(), "      ca_file: ca.crt\n"));
  EXPECT_TRUE(r.ok) << r.detail;
  EXPECT_EQ(catalog.requests(), 1);
}

TEST_F(CatalogTlsTest, AWrongCaFailsTheProbeWithTheVerifyReasonButIsNotSilence) {
  HttpsCatalog catalog(loopback_);
  ASSERT_TRUE(catalog.valid());
  ProbeResult r = Probe(Region(catalog.Uri(), "      ca_file: wrong-ca.crt\n"));
  EXPECT_FALSE(r.ok);
  EXPECT_THAT(r.detail, HasSubstr("certificate verify failed"));
  EXPECT_THAT(r.detail, HasSubstr("unable to get local issuer certificate"));
  // The server presented a certificate: it is up, so this is no evidence of an outage.
  EXPECT_TRUE(r.answered) << r.detail;
  EXPECT_FALSE(r.unparsed);
  EXPECT_EQ(catalog.requests(), 0) << "no request may be sent over an unverified connection";
}

TEST_F(CatalogTlsTest, ACertificateForAnotherNameIsRefused) {
  HttpsCatalog catalog(named_);  // catalog.internal, reached as 127.0.0.1
  ASSERT_TRUE(catalog.valid());
  ProbeResult r = Probe(Region(catalog.Uri(), "      ca_file: ca.crt\n"));
  EXPECT_FALSE(r.ok);
  EXPECT_THAT(r.detail, HasSubstr("IP address mismatch"));
  EXPECT_THAT(r.detail, HasSubstr("verifying 127.0.0.1"));
  EXPECT_EQ(catalog.requests(), 0);
}

TEST_F(CatalogTlsTest, AServerNameOverrideVerifiesTheCertificateForThatName) {
  HttpsCatalog catalog(named_);
  ASSERT_TRUE(catalog.valid());
  ProbeResult r = Probe(Region(catalog.Uri(),
                               "      ca_file: ca.crt\n"
                               "      server_name: catalog.internal\n"));
  EXPECT_TRUE(r.ok) << r.detail;
  EXPECT_EQ(catalog.requests(), 1);
  // And a wrong override is a mismatch like any other.
  ProbeResult wrong = Probe(Region(catalog.Uri(),
                                   "      ca_file: ca.crt\n"
                                   "      server_name: catalog.example.com\n"));
  EXPECT_FALSE(wrong.ok);
  EXPECT_THAT(wrong.detail, HasSubstr("hostname mismatch"));
}

TEST_F(CatalogTlsTest, MutualTlsWithoutAClientCertificateIsRefusedByTheServer) {
  HttpsCatalog catalog(loopback_, ca_.cert);
  ASSERT_TRUE(catalog.valid());
  ProbeResult r = Probe(Region(catalog.Uri(), "      ca_file: ca.crt\n"));
  EXPECT_FALSE(r.ok);
  EXPECT_THAT(r.detail, HasSubstr("certificate required"));
  // The refusal is a TLS alert from the server: an answer, not silence.
  EXPECT_TRUE(r.answered) << r.detail;
  EXPECT_EQ(catalog.requests(), 0);
}

TEST_F(CatalogTlsTest, MutualTlsWithTheClientCertificateSucceeds) {
  HttpsCatalog catalog(loopback_, ca_.cert);
  ASSERT_TRUE(catalog.valid());
  ProbeResult r = Probe(Region(catalog.Uri(),
                               "      ca_file: ca.crt\n"
                               "      cert_file: client.crt\n"
                               "      key_file: client.key\n"));
  EXPECT_TRUE(r.ok) << r.detail;
  EXPECT_EQ(catalog.requests(), 1);
}

TEST_F(CatalogTlsTest, AnActionsCatalogSessionUsesTheRegionsTls) {
  HttpsCatalog catalog(loopback_, ca_.cert);
  ASSERT_TRUE(catalog.valid());
  RegionConfig region = Region(catalog.Uri(),
                               "      ca_file: ca.crt\n"
                               "      cert_file: client.crt\n"
                               "      key_file: client.key\n");
  ActionEnv env;
  env.clock = SystemClock();
  env.catalog = [&](const std::string& name) -> std::optional<CatalogClientOptions> {
    if (name != region.name) return std::nullopt;
    return CatalogOptionsFor(region);
  };
  CatalogSession session(env);
  auto client = session.Client("us-east-1");
  ASSERT_TRUE(client.ok()) << client.status().ToString();
  ActionContext ctx;
  ctx.deadline = std::chrono::steady_clock::now() + 10s;
  auto config = GetConfigNow(session, **client, ctx);
  ASSERT_TRUE(config.has_value());
  EXPECT_TRUE(config->ok()) << config->status().ToString();
  EXPECT_EQ(catalog.requests(), 1);
}

TEST_F(CatalogTlsTest, SkippingVerificationAcceptsAnUntrustedCertificateAndIsWarnedAbout) {
  HttpsCatalog catalog(named_);  // neither a trusted CA nor the right name
  ASSERT_TRUE(catalog.valid());
  RegionConfig region = Region(catalog.Uri(), "      insecure_skip_verify: true\n");
  ProbeResult r = Probe(region);
  EXPECT_TRUE(r.ok) << r.detail;
  EXPECT_EQ(catalog.requests(), 1);
  Config config;
  config.regions.push_back(region);
  auto warnings = InsecureTlsWarnings(config);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_THAT(warnings[0], HasSubstr("region us-east-1: tls.insecure_skip_verify is set"));
}

}  // namespace
}  // namespace icewarden
