// The readiness preflights of dns.rfc2136 and verify.dns (actions/preflight.h) against a real
// BIND 9: a prerequisite-only UPDATE signed with our TSIG key is accepted and changes nothing
// (the zone's serial stays); a wrong secret, an unknown key and a zone the key may not update
// are each refused with the reason; a stopped server is a reason too.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <unistd.h>

#include "actions/action_kinds.h"
#include "actions/dns_client.h"
#include "actions/preflight.h"
#include "tests/integration/actions/bind_server.h"
#include "tests/unit/actions/action_test_support.h"

namespace icewarden::testing {
namespace {

using namespace std::chrono_literals;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using json = nlohmann::json;

class DnsReadinessTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (access(kNamedBinary, X_OK) != 0)
      GTEST_SKIP() << kNamedBinary << " is not installed (scripts/setup.sh installs bind9)";
    bind_ = std::make_unique<BindServer>("writer IN CNAME catalog-a.lab.test.\n");
    ASSERT_TRUE(bind_->WaitUntilServing(20s)) << "named did not answer on " << bind_->server();
    ASSERT_TRUE(registerDnsActions(registry_, TestActionEnv()).ok());
  }

  std::vector<std::string> Preflight(const std::string& kind, const json& params) {
    const Action* action = registry_.Find(kind);
    EXPECT_NE(action, nullptr);
    const ActionPreflight* preflight = action ? PreflightOf(*action) : nullptr;
    EXPECT_NE(preflight, nullptr) << kind << " has a preflight";
    if (preflight == nullptr) return {"no preflight"};
    ActionContext ctx;
    ctx.deadline = std::chrono::steady_clock::now() + 5s;
    return preflight->Preflight(params, ctx);
  }

  json Update(const BindKey& key, const std::string& zone = "lab.test") {
    return {
        {"server", bind_->server()},
        {"zone", zone},
        {"tsig_key_name", key.name},
        {"tsig_algorithm", key.algorithm},
        {"tsig_secret", key.secret},
        {"records",
         json::array({{{"name", "writer"}, {"type", "CNAME"}, {"value", "catalog-b.lab.test."}}})}};
  }

  std::string Serial() {
    auto soa = bind_->Dig("lab.test", "SOA");
    return soa.empty() ? "" : soa.front();
  }

  std::unique_ptr<BindServer> bind_;
  ActionRegistry registry_;
};

TEST_F(DnsReadinessTest, OurKeyIsAcceptedAndNothingChanges) {
  const std::string serial = Serial();
  ASSERT_FALSE(serial.empty());
  EXPECT_THAT(Preflight("dns.rfc2136", Update(kKey256)), ElementsAre());
  EXPECT_THAT(Preflight("dns.rfc2136", Update(kKey512)), ElementsAre());
  EXPECT_EQ(Serial(), serial) << "a prerequisite-only UPDATE must not bump the serial";
  EXPECT_THAT(bind_->Dig("writer.lab.test", "CNAME"), ElementsAre("catalog-a.lab.test."));
  EXPECT_THAT(Preflight("verify.dns", {{"server", bind_->server()},
                                       {"name", "writer.lab.test"},
                                       {"type", "CNAME"},
                                       {"expect", "catalog-b.lab.test."}}),
              ElementsAre())
      << "verify.dns checks that the server answers, not what it answers before the failover";
}

TEST_F(DnsReadinessTest, AWrongSecretIsRefusedWithTheTsigError) {
  BindKey wrong = kKey256;
  wrong.secret = "d3Jvbmctc2VjcmV0LXdyb25nLXNlY3JldC13cm9uZy0=";
  auto reasons = Preflight("dns.rfc2136", Update(wrong));
  ASSERT_EQ(reasons.size(), 1u);
  EXPECT_EQ(reasons[0], "DNS server " + bind_->server() +
                            " does not accept TSIG key icewarden-256 (hmac-sha256) for zone "
                            "lab.test.: NOTAUTH (TSIG BADSIG)");
}

TEST_F(DnsReadinessTest, AnUnknownKeyIsRefused) {
  BindKey unknown{"nobody", "hmac-sha256", kKey256.secret};
  auto reasons = Preflight("dns.rfc2136", Update(unknown));
  ASSERT_EQ(reasons.size(), 1u);
  EXPECT_THAT(reasons[0], HasSubstr("does not accept TSIG key nobody (hmac-sha256)"));
  EXPECT_THAT(reasons[0], HasSubstr("BADKEY"));
}

TEST_F(DnsReadinessTest, AZoneTheServerDoesNotServeIsAReason) {
  auto reasons = Preflight("dns.rfc2136", Update(kKey256, "other.test"));
  ASSERT_EQ(reasons.size(), 1u);
  EXPECT_THAT(reasons[0], HasSubstr("zone other.test."));
}

TEST_F(DnsReadinessTest, AStoppedServerIsAReason) {
  const std::string server = bind_->server();
  json params = Update(kKey256);
  bind_.reset();  // named stops; nothing listens on its port
  auto reasons = Preflight("dns.rfc2136", params);
  ASSERT_EQ(reasons.size(), 1u);
  EXPECT_THAT(reasons[0], HasSubstr("DNS server " + server + " did not answer"));
  auto query = Preflight("verify.dns", {{"server", server},
                                        {"name", "writer.lab.test"},
                                        {"type", "CNAME"},
                                        {"expect", "catalog-b.lab.test."}});
  ASSERT_EQ(query.size(), 1u);
  EXPECT_THAT(query[0], HasSubstr("DNS server " + server + " does not answer"));
}

}  // namespace
}  // namespace icewarden::testing
