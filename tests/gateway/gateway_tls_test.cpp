// A gateway with `tls:` (gw-us-tls, gateway_fixture.h): engines reach it over https:// only,
// the config endpoint sends them back over https://, commits land through it, and the
// orchestrator's gateway.fence asks it for closures trusting the gateway's tls.ca_file.

#include <gtest/gtest.h>
#include <httplib.h>

#include <nlohmann/json.hpp>

#include "actions/action.h"
#include "orchestrator/gateway/gateway.h"
#include "tests/gateway/gateway_fixture.h"

namespace icewarden::lab::testing {
namespace {

class GatewayTlsTest : public GatewayTest {
 protected:
  void SetUp() override {
    if (!icewarden::testing::HaveOpenSslCli()) GTEST_SKIP() << "openssl CLI is not installed";
    GatewayTest::SetUp();
  }
};

TEST_F(GatewayTlsTest, EnginesReachItOverHttpsAndAreSentBackOverIt) {
  const std::string gw = StartGateway("gw-us-tls");
  ASSERT_EQ(gw.rfind("https://127.0.0.1:", 0), 0u) << gw;
  auto config = To(gw)->Get("/v1/config?warehouse=lab");
  ASSERT_TRUE(config) << httplib::to_string(config.error());
  ASSERT_EQ(config->status, 200) << config->body;
  EXPECT_EQ(json::parse(config->body)["overrides"]["uri"], gw);

  const std::size_t before = Snapshots(kUs, "sales", "orders");
  auto committed = AppendVia(gw, "sales", "orders");
  ASSERT_TRUE(committed) << httplib::to_string(committed.error());
  EXPECT_EQ(committed->status, 200) << committed->body;
  EXPECT_EQ(Snapshots(kUs, "sales", "orders"), before + 1);
}

TEST_F(GatewayTlsTest, PlainHttpAndUntrustingClientsGetNoAnswer) {
  const std::string gw = StartGateway("gw-us-tls");
  ASSERT_FALSE(gw.empty());
  const std::string plain = "http://" + gw.substr(std::string("https://").size());
  auto cleartext = To(plain)->Get("/v1/config?warehouse=lab");
  EXPECT_FALSE(cleartext) << "plain HTTP was answered " << cleartext->status;

  httplib::Client system_cas(gw);  // the system's CAs do not know the test's CA
  system_cas.set_connection_timeout(2);
  auto untrusted = system_cas.Get("/v1/config?warehouse=lab");
  ASSERT_FALSE(untrusted);
  EXPECT_EQ(untrusted.error(), httplib::Error::SSLServerVerification);

  // The gateway still serves a client that trusts it after those failed handshakes.
  auto trusted = To(gw)->Get("/v1/config?warehouse=lab");
  ASSERT_TRUE(trusted);
  EXPECT_EQ(trusted->status, 200);
}

TEST_F(GatewayTlsTest, GatewayFenceConfirmsTheClosureOverHttps) {
  const std::string gw = StartGateway("gw-us-tls");
  ASSERT_FALSE(gw.empty());
  PutFailover("fo-tls", FailoverPhase::kFencing);
  ActionContext ctx;
  ctx.failover_id = "fo-tls";
  ctx.deadline = std::chrono::steady_clock::now() + 10s;

  auto trusting = MakeGatewayFenceAction(std::vector<GatewayEndpoint>{{"gw-us-tls", gw, ca_.cert}});
  ActionResult closed = trusting->Run(nlohmann::json::object(), ctx);
  EXPECT_TRUE(closed.ok()) << closed.reason;

  // Without the gateway's CA the step cannot be told anything, so it confirms nothing.
  ctx.deadline = std::chrono::steady_clock::now() + 1s;
  auto untrusting = MakeGatewayFenceAction(std::vector<GatewayEndpoint>{{"gw-us-tls", gw, ""}});
  ActionResult refused = untrusting->Run(nlohmann::json::object(), ctx);
  EXPECT_FALSE(refused.ok());
  EXPECT_NE(refused.reason.find("gw-us-tls"), std::string::npos) << refused.reason;
}

}  // namespace
}  // namespace icewarden::lab::testing
