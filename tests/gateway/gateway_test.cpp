// The real `icewarden gateway` process in front of the lab's two catalogs (gateway_fixture.h).

#include <gtest/gtest.h>
#include <httplib.h>

#include <csignal>
#include <thread>

#include "tests/gateway/gateway_fixture.h"

namespace icewarden::lab::testing {
namespace {

TEST_F(GatewayTest, TheConfigSendsEnginesBackToTheGatewayUnderItsPrefix) {
  const std::string gw = StartGateway("gw-us");
  auto r = To(gw)->Get("/v1/config?warehouse=lab");
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  json config = json::parse(r->body);
  EXPECT_EQ(config["overrides"]["uri"], gw);
  EXPECT_EQ(config["overrides"]["prefix"], "lab");
  EXPECT_EQ(config["overrides"]["namespace-separator"], "%1F")
      << "what the gateway parses, whatever a region advertises";
  EXPECT_EQ(config["idempotency-key-lifetime"], "PT30M") << "the region's, passed on";
  EXPECT_EQ(r->get_header_value("X-Icewarden-Region"), kUs);
}

TEST_F(GatewayTest, ReadsComeFromTheRegionAndSayWhichAnswered) {
  const std::string gw = StartGateway("gw-eu-only");
  auto r = To(gw)->Get("/v1/lab/namespaces");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->get_header_value("X-Icewarden-Region"), kEu);
  EXPECT_EQ(json::parse(r->body), GetJson(kEu, "/v1/lab/namespaces"));
}

TEST_F(GatewayTest, ACommitLandsInTheOwnerOnly) {
  const std::string gw = StartGateway("gw-us");
  lab_->PauseReplication();
  const std::size_t us = Snapshots(kUs, "sales", "orders");
  const std::size_t eu = Snapshots(kEu, "sales", "orders");
  auto r = AppendVia(gw, "sales", "orders");
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  EXPECT_EQ(r->get_header_value("X-Icewarden-Region"), kUs);
  EXPECT_EQ(r->get_header_value("X-Icewarden-Epoch"), "1");
  EXPECT_EQ(Snapshots(kUs, "sales", "orders"), us + 1);
  EXPECT_EQ(Snapshots(kEu, "sales", "orders"), eu) << "nothing was sent to the replica";

  // eu.orders is eu-central-1's: the same gateway sends its commit there.
  auto e = AppendVia(gw, "eu", "orders");
  ASSERT_TRUE(e);
  ASSERT_EQ(e->status, 200) << e->body;
  EXPECT_EQ(e->get_header_value("X-Icewarden-Region"), kEu);
}

TEST_F(GatewayTest, AnOwnerTheGatewayMayNotReachIsRefusedWith409NamingIt) {
  const std::string gw = StartGateway("gw-eu-only");
  lab_->PauseReplication();
  const std::size_t before = Snapshots(kUs, "sales", "orders");
  auto r = AppendVia(gw, "sales", "orders");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 409) << r->body;
  json error = Error(r);
  EXPECT_EQ(error["code"], 409);
  EXPECT_NE(error["type"].get<std::string>().find("owner=us-east-1"), std::string::npos);
  EXPECT_NE(error["type"].get<std::string>().find("epoch=1"), std::string::npos);
  EXPECT_NE(error["message"].get<std::string>().find("us-east-1"), std::string::npos);
  EXPECT_EQ(Snapshots(kUs, "sales", "orders"), before);
  EXPECT_EQ(Snapshots(kEu, "sales", "orders"), before) << "nor committed in the replica";

  // Audited once, however often it is refused within the minute.
  AppendVia(gw, "sales", "orders");
  ASSERT_TRUE(Eventually([&] {
    auto events = store_->ListAudit({0, 1000, std::string("sales.orders")});
    return events.ok() && !events->empty() && events->back().action == "gateway.refused";
  }));
  auto events = store_->ListAudit({0, 1000, std::string("sales.orders")});
  int refusals = 0;
  for (const auto& e : *events) refusals += e.action == "gateway.refused";
  EXPECT_EQ(refusals, 1);
}

TEST_F(GatewayTest, AFailoverClosesTheTableThenTheTransferReopensItAtTheNewOwner) {
  const std::string gw = StartGateway("gw-us");
  lab_->PauseReplication();
  PutFailover("fo-1", FailoverPhase::kApproved);
  auto before = AppendVia(gw, "sales", "orders");
  ASSERT_TRUE(before);
  EXPECT_EQ(before->status, 200) << "approved does not close yet: " << before->body;

  PutFailover("fo-1", FailoverPhase::kFencing);
  // The gateway polls every 10 ms: it refuses well within the 100 ms the issue asks.
  std::optional<httplib::Result> refused;
  ASSERT_TRUE(Eventually(
      [&] {
        refused.emplace(AppendVia(gw, "sales", "orders"));
        return *refused && (*refused)->status == 503;
      },
      2s));
  EXPECT_EQ((*refused)->get_header_value("Retry-After"), "1");
  EXPECT_NE(Error(*refused)["message"].get<std::string>().find("fo-1"), std::string::npos);
  auto closure = To(gw)->Get("/icewarden/v1/closures/fo-1");
  ASSERT_TRUE(closure);
  json c = json::parse(closure->body);
  EXPECT_EQ(c["confirmed"], true) << c.dump();
  EXPECT_EQ(c["in_flight"], 0);
  // Tables outside the scope are still open.
  EXPECT_EQ(AppendVia(gw, "eu", "orders")->status, 200);

  // Replication would have copied us-east-1's last commit; the test copies it by hand.
  lab_->ResumeReplication();
  lab_->ReplicateNow();
  lab_->PauseReplication();
  PutFailover("fo-1", FailoverPhase::kPromoting);
  EXPECT_EQ(AppendVia(gw, "sales", "orders")->status, 503) << "not moved yet";
  Move("sales.orders", kEu, "fo-1");
  const std::size_t us = Snapshots(kUs, "sales", "orders");
  std::optional<httplib::Result> moved;
  ASSERT_TRUE(Eventually(
      [&] {
        moved.emplace(AppendVia(gw, "sales", "orders"));
        return *moved && (*moved)->status == 200;
      },
      2s))
      << (*moved ? (*moved)->body : std::string("no answer"));
  ASSERT_TRUE(*moved);
  EXPECT_EQ((*moved)->status, 200) << (*moved)->body;
  EXPECT_EQ((*moved)->get_header_value("X-Icewarden-Region"), kEu);
  EXPECT_EQ((*moved)->get_header_value("X-Icewarden-Epoch"), "2");
  EXPECT_EQ(Snapshots(kUs, "sales", "orders"), us) << "nothing reached the old owner";
  // clickstream.events is in the scope but not moved yet: still closed.
  EXPECT_EQ(AppendVia(gw, "clickstream", "events")->status, 503);
}

TEST_F(GatewayTest, AFencedOwnerIsRefusedWithRetryAfter) {
  const std::string gw = StartGateway("gw-us");
  auto region = store_->GetRegion(kUs);
  ASSERT_TRUE(region.ok());
  Region us = *region ? **region : Region{};
  us.name = kUs;
  us.fenced = true;
  ASSERT_TRUE(store_->PutRegion(us, Why("region.fence")).ok());
  std::optional<httplib::Result> r;
  ASSERT_TRUE(Eventually(
      [&] {
        r.emplace(AppendVia(gw, "sales", "orders"));
        return *r && (*r)->status == 503;
      },
      2s));
  EXPECT_EQ((*r)->get_header_value("Retry-After"), "1");
  EXPECT_NE(Error(*r)["message"].get<std::string>().find("fenced"), std::string::npos);
}

TEST_F(GatewayTest, BadInputIsRefusedInTheSpecsErrorModelAndNothingIsForwarded) {
  const std::string gw = StartGateway("gw-us");
  struct Case {
    std::string method, target, body;
    int status;
  };
  const std::vector<Case> cases = {
      {"POST", "/v1/lab/namespaces/sales/tables", "{not json", 400},
      {"POST", "/v1/lab/namespaces/sales/tables", R"({"name":"../etc"})", 400},
      {"GET", "/v1/lab/namespaces/%2E%2E/tables/orders", "", 400},
      {"POST", "/v1/lab/namespaces/sales/tables/a%2Fb", "{}", 400},
      {"GET", "/v1/lab/namespaces/sales%1F..%1Fx/tables/t", "", 400},
      {"GET", "/v1/other/namespaces", "", 404},
      {"GET", "/v1/lab/nothing-here", "", 404},
      {"PUT", "/v1/lab/namespaces/sales/tables/orders", "{}", 405},
      {"POST", "/v1/lab/namespaces/sales/tables/orders", std::string(70000, 'x'), 413},
  };
  for (const Case& c : cases) {
    httplib::Request req;
    req.method = c.method;
    req.path = c.target;
    req.body = c.body;
    req.set_header("Content-Type", "application/json");
    auto r = To(gw)->send(req);
    ASSERT_TRUE(r) << c.method << " " << c.target;
    EXPECT_EQ(r->status, c.status) << c.method << " " << c.target << ": " << r->body;
    json error = Error(r);
    ASSERT_TRUE(error.is_object()) << c.target << ": " << r->body;
    EXPECT_EQ(error["code"], c.status);
    EXPECT_TRUE(error["type"].is_string());
    EXPECT_TRUE(error["message"].is_string());
  }
  auto metrics = To(gw)->Get("/metrics");
  ASSERT_TRUE(metrics);
  EXPECT_EQ(metrics->body.find("icewarden_gateway_forward_duration_seconds_count"),
            std::string::npos)
      << "no request reached a catalog:\n"
      << metrics->body;
}

// `icewarden --version` and the gateway's /metrics name the same build: the version and the
// git revision it was built from (this test tree is a checkout, so the revision is known).
TEST_F(GatewayTest, VersionAndMetricsNameTheBuildAndItsRevision) {
  icewarden::testing::CommandResult version =
      icewarden::testing::RunCommand({IcewardenBinary(), "--version"}, {}, 10s);
  ASSERT_EQ(version.exit_code, 0) << version.err;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(version.out, m,
                                std::regex(R"(^icewarden (\d+\.\d+\.\d+) \(revision ([^)]+)\))")))
      << version.out;
  EXPECT_NE(m[2].str(), "unknown") << "built from a git checkout";
  const std::string gw = StartGateway("gw-us");
  auto metrics = To(gw)->Get("/metrics");
  ASSERT_TRUE(metrics);
  EXPECT_NE(metrics->body.find("icewarden_build_info{version=\"" + m[1].str() + "\",revision=\"" +
                               m[2].str() + "\"} 1\n"),
            std::string::npos)
      << metrics->body;
}

// The gateway dies while the catalog works on a commit: the engine gets no answer, which it
// must read as "unknown" (the catalog may have applied it, and here it did). Sent again with
// the same Idempotency-Key through a new gateway, the catalog gives its first answer and the
// commit is not applied twice.
TEST_F(GatewayTest, AGatewayKilledMidCommitLeavesARetryWithTheSameKeyTheFirstAnswer) {
  std::string gw = StartGateway("gw-us");
  lab_->PauseReplication();
  const std::size_t before = Snapshots(kUs, "sales", "orders");
  const std::string body =
      AppendCommit(Metadata(kUs, "sales", "orders"), "gateway-kill", SystemNowMs()).dump();
  const httplib::Headers key{{"Idempotency-Key", "0190b6e8-3c1e-7a3d-9b7e-5f0c2d4a8e11"}};
  ASSERT_TRUE(lab_->PatchFaults(kUs, {{"commit_latency_ms", 1500}}).ok());
  std::optional<httplib::Result> lost;
  std::thread engine([&] {
    lost.emplace(To(gw)->Post(TablePath("sales", "orders"), key, body, "application/json"));
  });
  const bool at_catalog = Eventually(
      [&] { return lab_->State()["regions"][kUs]["requests"]["commits_in_progress"] == 1; }, 5s);
  gateways_.back()->Signal(SIGKILL);
  gateways_.back()->Wait(5s);
  engine.join();
  ASSERT_TRUE(at_catalog) << "the commit never reached the catalog";
  ASSERT_TRUE(lost.has_value());
  EXPECT_FALSE(*lost) << "an answer came from a killed gateway: " << (*lost)->status;
  ASSERT_TRUE(Eventually([&] { return Snapshots(kUs, "sales", "orders") == before + 1; }, 5s))
      << "the catalog applied the commit the engine never heard about";

  ASSERT_TRUE(lab_->ClearFaults(kUs).ok());
  gw = StartGateway("gw-us");
  auto retried = To(gw)->Post(TablePath("sales", "orders"), key, body, "application/json");
  ASSERT_TRUE(retried);
  EXPECT_EQ(retried->status, 200) << retried->body;
  EXPECT_EQ(json::parse(retried->body)["metadata-location"],
            MetadataLocation(kUs, "sales", "orders"));
  EXPECT_EQ(Snapshots(kUs, "sales", "orders"), before + 1) << "applied once";
  // Without the key the same commit is a new one, and its requirement fails: the key mattered.
  auto unkeyed = To(gw)->Post(TablePath("sales", "orders"), body, "application/json");
  ASSERT_TRUE(unkeyed);
  EXPECT_EQ(unkeyed->status, 409) << unkeyed->body;
}

// A commit the catalog took but did not answer in time is unknown (504
// CommitStateUnknownException); one that could not be sent at all is safe to retry (503 with
// Retry-After). Engines retry the second and reload after the first.
TEST_F(GatewayTest, UnknownOnlyWhenTheCommitMayHaveReachedTheCatalog) {
  const std::string gw = StartGateway("gw-us-impatient");
  lab_->PauseReplication();
  const std::size_t before = Snapshots(kUs, "sales", "orders");
  ASSERT_TRUE(lab_->PatchFaults(kUs, {{"commit_latency_ms", 1000}}).ok());
  auto slow = AppendVia(gw, "sales", "orders");
  ASSERT_TRUE(slow);
  EXPECT_EQ(slow->status, 504) << slow->body;
  EXPECT_EQ(Error(slow)["type"], "CommitStateUnknownException");
  EXPECT_TRUE(Eventually([&] { return Snapshots(kUs, "sales", "orders") == before + 1; }, 5s))
      << "and it did happen";

  ASSERT_TRUE(lab_->ClearFaults(kUs).ok());
  const json metadata = Metadata(kUs, "sales", "orders");
  ASSERT_TRUE(lab_->StopRegion(kUs).ok());
  auto unsent = To(gw)->Post(TablePath("sales", "orders"),
                             AppendCommit(metadata, "gateway-test", SystemNowMs()).dump(),
                             "application/json");
  ASSERT_TRUE(unsent);
  EXPECT_EQ(unsent->status, 503) << unsent->body;
  EXPECT_EQ(unsent->get_header_value("Retry-After"), "1");
  ASSERT_TRUE(lab_->StartRegion(kUs).ok());
  EXPECT_EQ(Snapshots(kUs, "sales", "orders"), before + 1) << "nothing was applied";
}

}  // namespace
}  // namespace icewarden::lab::testing
