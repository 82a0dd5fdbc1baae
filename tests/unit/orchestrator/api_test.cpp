#include "orchestrator/api/api.h"
#include "orchestrator/build_info.h"

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "tests/fakes/fake_clock.h"
#include "tests/fakes/fake_store.h"
#include "tests/fakes/test_paths.h"

namespace icewarden {
namespace {

using nlohmann::json;
using testing::FakeClock;
using testing::FakeStore;

ApiToken Token(std::string name, Role role, std::string secret) {
  return ApiToken{std::move(name), role, Secret(std::move(secret))};
}

AuditEvent ApiWhy(std::string action, std::string target) {
  AuditEvent e;
  e.actor = "test";
  e.source = "internal";
  e.action = std::move(action);
  e.target = std::move(target);
  e.reason = "seeded by the test";
  return e;
}

class ApiTest : public ::testing::Test {
 protected:
  ApiTest() : store_(clock_), api_(Config(), store_, clock_, [this] { return ready_.load(); }) {}

  static ApiConfig Config() {
    ApiConfig c;
    c.tokens = {Token("vera", Role::kViewer, "viewer-secret"),
                Token("otto", Role::kOperator, "operator-secret"),
                Token("anna", Role::kApprover, "approver-secret"),
                Token("root", Role::kAdmin, "admin-secret")};
    return c;
  }

  ApiResponse Get(const std::string& target, const std::string& token = "viewer-secret") {
    ApiRequest req;
    req.method = "GET";
    req.target = target;
    if (!token.empty()) req.headers["authorization"] = "Bearer " + token;
    req.remote = "127.0.0.1:5555";
    return api_.Handle(req);
  }

  static json Body(const ApiResponse& res) { return json::parse(res.body); }

  static std::string ErrorCode(const ApiResponse& res) {
    return Body(res)["error"]["code"].get<std::string>();
  }

  static std::string ErrorMessage(const ApiResponse& res) {
    return Body(res)["error"]["message"].get<std::string>();
  }

  static std::string Header(const ApiResponse& res, const std::string& name) {
    for (const auto& [n, v] : res.headers)
      if (n == name) return v;
    return "";
  }

  void SeedRegions() {
    Region east{"us-east-1",   RegionHealth::kHealthy, false, false, 0, 4,
                "probes pass", 1'780'000'000'123};
    Region west{"eu-west-1", RegionHealth::kUnreachable, true, true, 3, 0, "catalog timeout", 0};
    ASSERT_TRUE(store_.PutRegion(east, ApiWhy("region.health", "us-east-1")).ok());
    ASSERT_TRUE(store_.PutRegion(west, ApiWhy("region.health", "eu-west-1")).ok());
  }

  void Claim(const std::string& dotted, const std::string& owner) {
    OwnershipChange c{*TableIdent::Parse(dotted), 0, owner, ""};
    ASSERT_TRUE(store_.CompareAndSetOwnership({&c, 1}, ApiWhy("ownership.set", dotted)).ok());
  }

  void SeedFailovers() {
    Failover a;
    a.id = "fo-1";
    a.scope = "owner:eu-west-1";
    a.from = "eu-west-1";
    a.to = "us-east-1";
    a.runbook = "default";
    a.proposed_by = "otto";
    a.reason = "eu-west-1 catalog down";
    a.phase = FailoverPhase::kFencing;
    a.approvals = {Approval{"anna", "looks right", 1'780'000'001'000}};
    a.fencing = FencingConfirmation{FencingKind::kOperator, "otto", "storage writes revoked",
                                    1'780'000'002'000};
    ASSERT_TRUE(store_.CreateFailover(a, ApiWhy("failover.propose", "fo-1")).ok());
    Failover b = a;
    b.id = "fo-2";
    b.phase = FailoverPhase::kCompleted;
    b.approvals.clear();
    b.fencing.reset();
    ASSERT_TRUE(store_.CreateFailover(b, ApiWhy("failover.propose", "fo-2")).ok());
    StepRecord s;
    s.failover_id = "fo-1";
    s.step_id = "dns";
    s.section = "promote";
    s.action = "dns.rfc2136";
    s.state = StepState::kSucceeded;
    s.attempt = 1;
    s.reason = "record updated";
    s.result_json = R"({"serial":7})";
    s.started_at = 1'780'000'003'000;
    s.finished_at = 1'780'000'003'500;
    ASSERT_TRUE(store_.PutStep(s).ok());
  }

  FakeClock clock_;
  FakeStore store_;
  std::atomic<bool> ready_{true};
  Api api_;
};

// ---- Public routes ----

TEST_F(ApiTest, HealthzNeedsNoTokenAndIsAlwaysOk) {
  ready_ = false;
  ApiResponse res = Get("/healthz", "");
  EXPECT_EQ(res.status, 200);
  EXPECT_EQ(res.content_type, "application/json");
  EXPECT_EQ(Body(res), json({{"status", "ok"}}));
}

TEST_F(ApiTest, ReadyzFollowsTheReadinessFunction) {
  EXPECT_EQ(Get("/readyz", "").status, 200);
  ready_ = false;
  ApiResponse res = Get("/readyz", "");
  EXPECT_EQ(res.status, 503);
  EXPECT_EQ(Body(res)["status"], "not_ready");
}

TEST_F(ApiTest, EmptyReadinessFunctionMeansReady) {
  Api api(Config(), store_, clock_, nullptr);
  EXPECT_EQ(api.Handle(ApiRequest{"GET", "/readyz", {}, "", ""}).status, 200);
}

// ---- Authentication and authorization ----

TEST_F(ApiTest, MissingTokenIs401WithBearerChallenge) {
  ApiResponse res = Get("/api/v1/regions", "");
  EXPECT_EQ(res.status, 401);
  EXPECT_EQ(ErrorCode(res), "unauthorized");
  EXPECT_EQ(Header(res, "WWW-Authenticate"), "Bearer realm=\"icewarden\"");
}

TEST_F(ApiTest, WrongTokenIs401InvalidToken) {
  for (const std::string token : {"nope", "viewer-secre", "viewer-secretX", "VIEWER-SECRET"}) {
    ApiResponse res = Get("/api/v1/regions", token);
    EXPECT_EQ(res.status, 401) << token;
    EXPECT_NE(Header(res, "WWW-Authenticate").find("invalid_token"), std::string::npos);
  }
}

TEST_F(ApiTest, NonBearerAuthorizationIs401) {
  ApiRequest req{"GET", "/api/v1/regions", {{"authorization", "Basic dmlld2VyOng="}}, "", ""};
  EXPECT_EQ(api_.Handle(req).status, 401);
}

TEST_F(ApiTest, ViewerMayNotReadTheAuditLog) {
  ApiResponse res = Get("/api/v1/audit", "viewer-secret");
  EXPECT_EQ(res.status, 403);
  EXPECT_EQ(ErrorCode(res), "forbidden");
  EXPECT_NE(ErrorMessage(res).find("operator, approver or admin"), std::string::npos)
      << ErrorMessage(res);
}

TEST_F(ApiTest, OperatorApproverAndAdminMayReadTheAuditLog) {
  for (const std::string token : {"operator-secret", "approver-secret", "admin-secret"})
    EXPECT_EQ(Get("/api/v1/audit", token).status, 200) << token;
}

// ---- Routing ----

TEST_F(ApiTest, UnknownRouteIs404) {
  ApiResponse res = Get("/api/v1/nothing");
  EXPECT_EQ(res.status, 404);
  EXPECT_EQ(ErrorCode(res), "not_found");
  EXPECT_EQ(Get("/api/v1/regions/").status, 404);
  EXPECT_EQ(Get("/api/v1/failovers/a/b").status, 404);
}

TEST_F(ApiTest, A404NamesEveryRouteOfTheRouter) {
  const std::string message = ErrorMessage(Get("/api/v1/nothing"));
  for (const ApiRouteInfo& r : Api::RouteTable())
    EXPECT_NE(message.find(std::string(r.pattern)), std::string::npos) << r.pattern;
  EXPECT_NE(message.find("docs/openapi.yaml"), std::string::npos) << message;
}

TEST_F(ApiTest, WrongMethodIs405WithAllow) {
  ApiRequest req{"POST", "/api/v1/regions", {{"authorization", "Bearer admin-secret"}}, "{}", ""};
  ApiResponse res = api_.Handle(req);
  EXPECT_EQ(res.status, 405);
  EXPECT_EQ(ErrorCode(res), "method_not_allowed");
  EXPECT_EQ(Header(res, "Allow"), "GET");
}

TEST_F(ApiTest, OversizedBodyIs413) {
  ApiRequest req{"GET", "/healthz", {}, std::string(kApiMaxBodyBytes + 1, 'x'), ""};
  ApiResponse res = api_.Handle(req);
  EXPECT_EQ(res.status, 413);
  EXPECT_EQ(ErrorCode(res), "payload_too_large");
}

TEST_F(ApiTest, OverlongTargetIs414) {
  EXPECT_EQ(Get("/api/v1/regions?owner=" + std::string(kApiMaxTargetBytes, 'a')).status, 414);
}

TEST_F(ApiTest, UnknownQueryParameterIs400NamingIt) {
  ApiResponse res = Get("/api/v1/ownership?limt=5");
  EXPECT_EQ(res.status, 400);
  EXPECT_EQ(ErrorCode(res), "bad_request");
  EXPECT_NE(ErrorMessage(res).find("'limt'"), std::string::npos) << ErrorMessage(res);
  EXPECT_NE(ErrorMessage(res).find("owner, namespace, state, after, limit"), std::string::npos);
  EXPECT_EQ(Get("/api/v1/regions?x=1").status, 400);
  EXPECT_EQ(Get("/metrics?x=1", "").status, 400);
}

TEST_F(ApiTest, BadLimitIs400SayingTheRange) {
  for (const std::string bad : {"0", "-1", "abc", "10001", "5x", ""}) {
    ApiResponse res = Get("/api/v1/ownership?limit=" + bad);
    EXPECT_EQ(res.status, 400) << bad;
    EXPECT_NE(ErrorMessage(res).find("limit must be an integer from 1 to 10000"), std::string::npos)
        << ErrorMessage(res);
  }
  EXPECT_EQ(Get("/api/v1/failovers?limit=1001").status, 400);
  EXPECT_EQ(Get("/api/v1/audit?after_seq=-3", "admin-secret").status, 400);
}

TEST_F(ApiTest, RepeatedOrMalformedParameterIs400) {
  EXPECT_EQ(Get("/api/v1/ownership?limit=1&limit=2").status, 400);
  EXPECT_EQ(Get("/api/v1/ownership?owner=%zz").status, 400);
}

TEST_F(ApiTest, StoreFailureIs500WithTheStoreMessage) {
  store_.FailWith(Status::IOError("disk I/O error"));
  ApiResponse res = Get("/api/v1/regions");
  EXPECT_EQ(res.status, 500);
  EXPECT_EQ(ErrorCode(res), "store_error");
  EXPECT_NE(ErrorMessage(res).find("io_error: disk I/O error"), std::string::npos);
}

// ---- Regions ----

TEST_F(ApiTest, RegionsListsEveryRegionWithStateAndCounters) {
  SeedRegions();
  ApiResponse res = Get("/api/v1/regions");
  ASSERT_EQ(res.status, 200) << res.body;
  json regions = Body(res)["regions"];
  ASSERT_EQ(regions.size(), 2u);
  const json& west = regions[0];  // ordered by name
  EXPECT_EQ(west["name"], "eu-west-1");
  EXPECT_EQ(west["health"], "unreachable");
  EXPECT_EQ(west["fenced"], true);
  EXPECT_EQ(west["maintenance"], true);
  EXPECT_EQ(west["reason"], "catalog timeout");
  EXPECT_EQ(west["consecutive_failures"], 3);
  EXPECT_TRUE(west["since"].is_null());
  const json& east = regions[1];
  EXPECT_EQ(east["health"], "healthy");
  EXPECT_EQ(east["since"], "2026-05-28T20:26:40.123Z");
  EXPECT_EQ(east["since_unix_ms"], 1'780'000'000'123);
  EXPECT_EQ(east["consecutive_successes"], 4);
}

// ---- Ownership ----

TEST_F(ApiTest, OwnershipRowsCarryTableNamespaceOwnerAndEpoch) {
  Claim("sales.eu.orders", "eu-west-1");
  ApiResponse res = Get("/api/v1/ownership");
  ASSERT_EQ(res.status, 200) << res.body;
  json body = Body(res);
  ASSERT_EQ(body["tables"].size(), 1u);
  const json& row = body["tables"][0];
  EXPECT_EQ(row["table"], "sales.eu.orders");
  EXPECT_EQ(row["namespace"], json({"sales", "eu"}));
  EXPECT_EQ(row["name"], "orders");
  EXPECT_EQ(row["owner"], "eu-west-1");
  EXPECT_EQ(row["epoch"], 1);
  EXPECT_EQ(row["updated_at_unix_ms"], clock_.Now());
  EXPECT_TRUE(row["failover_id"].is_null());
  EXPECT_TRUE(body["next_after"].is_null());
}

TEST_F(ApiTest, OwnershipPagesWithNextAfter) {
  for (const char* t : {"a.t1", "a.t2", "a.t3", "b.t1", "b.t2"}) Claim(t, "us-east-1");
  std::vector<std::string> seen;
  std::string target = "/api/v1/ownership?limit=2";
  for (int page = 0; page < 10; ++page) {
    ApiResponse res = Get(target);
    ASSERT_EQ(res.status, 200) << res.body;
    json body = Body(res);
    for (const json& row : body["tables"]) seen.push_back(row["table"]);
    if (body["next_after"].is_null()) break;
    EXPECT_EQ(body["tables"].size(), 2u);
    EXPECT_EQ(body["next_after"], seen.back());
    target = "/api/v1/ownership?limit=2&after=" + body["next_after"].get<std::string>();
  }
  EXPECT_EQ(seen, (std::vector<std::string>{"a.t1", "a.t2", "a.t3", "b.t1", "b.t2"}));
}

TEST_F(ApiTest, OwnershipExactlyOneFullPageHasNoNextAfter) {
  for (const char* t : {"a.t1", "a.t2"}) Claim(t, "us-east-1");
  json body = Body(Get("/api/v1/ownership?limit=2"));
  EXPECT_EQ(body["tables"].size(), 2u);
  EXPECT_TRUE(body["next_after"].is_null());
}

TEST_F(ApiTest, OwnershipFiltersByOwner) {
  Claim("a.t1", "us-east-1");
  Claim("a.t2", "eu-west-1");
  Claim("a.t3", "us-east-1");
  json body = Body(Get("/api/v1/ownership?owner=eu-west-1"));
  ASSERT_EQ(body["tables"].size(), 1u);
  EXPECT_EQ(body["tables"][0]["table"], "a.t2");
}

TEST_F(ApiTest, OwnershipBadAfterIs400) {
  ApiResponse res = Get("/api/v1/ownership?after=orders");
  EXPECT_EQ(res.status, 400);
  EXPECT_NE(ErrorMessage(res).find("after"), std::string::npos);
  EXPECT_EQ(Get("/api/v1/ownership?owner=").status, 400);
}

// ---- Failovers ----

TEST_F(ApiTest, FailoversAreNewestFirstAndLimited) {
  SeedFailovers();
  json all = Body(Get("/api/v1/failovers"))["failovers"];
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[0]["id"], "fo-2");
  EXPECT_EQ(all[1]["id"], "fo-1");
  EXPECT_EQ(all[1]["phase"], "fencing");
  EXPECT_FALSE(all[1].contains("steps"));
  json one = Body(Get("/api/v1/failovers?limit=1"))["failovers"];
  ASSERT_EQ(one.size(), 1u);
  EXPECT_EQ(one[0]["id"], "fo-2");
  // What the dashboard's overview reads after every change: only those not ended.
  json active = Body(Get("/api/v1/failovers?active=true"))["failovers"];
  ASSERT_EQ(active.size(), 1u);
  EXPECT_EQ(active[0]["id"], "fo-1");
  EXPECT_EQ(Body(Get("/api/v1/failovers?active=false"))["failovers"].size(), 2u);
  EXPECT_EQ(Get("/api/v1/failovers?active=yes").status, 400);
}

TEST_F(ApiTest, FailoverDetailHasApprovalsFencingAndStepJournal) {
  SeedFailovers();
  ApiResponse res = Get("/api/v1/failovers/fo-1");
  ASSERT_EQ(res.status, 200) << res.body;
  json f = Body(res);
  EXPECT_EQ(f["id"], "fo-1");
  EXPECT_EQ(f["from"], "eu-west-1");
  EXPECT_EQ(f["to"], "us-east-1");
  EXPECT_EQ(f["version"], 1);
  ASSERT_EQ(f["approvals"].size(), 1u);
  EXPECT_EQ(f["approvals"][0]["by"], "anna");
  EXPECT_EQ(f["fencing"]["kind"], "operator");
  EXPECT_EQ(f["fencing"]["reason"], "storage writes revoked");
  EXPECT_TRUE(f["accept_data_loss"].is_null());
  ASSERT_EQ(f["steps"].size(), 1u);
  EXPECT_EQ(f["steps"][0]["step_id"], "dns");
  EXPECT_EQ(f["steps"][0]["state"], "succeeded");
  EXPECT_EQ(f["steps"][0]["result"], json({{"serial", 7}}));
  EXPECT_TRUE(Body(Get("/api/v1/failovers/fo-2"))["fencing"].is_null());
}

TEST_F(ApiTest, UnknownFailoverIdIs404) {
  ApiResponse res = Get("/api/v1/failovers/fo-404");
  EXPECT_EQ(res.status, 404);
  EXPECT_EQ(ErrorCode(res), "not_found");
  EXPECT_NE(ErrorMessage(res).find("fo-404"), std::string::npos);
}

// ---- Audit ----

TEST_F(ApiTest, AuditPagesByAfterSeqAndFiltersByTarget) {
  SeedRegions();    // seq 1, 2
  SeedFailovers();  // seq 3 (fo-1), 4 (fo-2)
  json page = Body(Get("/api/v1/audit?limit=3", "operator-secret"));
  ASSERT_EQ(page["events"].size(), 3u);
  EXPECT_EQ(page["events"][0]["seq"], 1);
  EXPECT_EQ(page["events"][0]["action"], "region.health");
  EXPECT_EQ(page["events"][0]["detail"], json::object());
  EXPECT_EQ(page["next_after_seq"], 3);
  json rest = Body(Get("/api/v1/audit?after_seq=3", "operator-secret"));
  ASSERT_EQ(rest["events"].size(), 1u);
  EXPECT_EQ(rest["events"][0]["target"], "fo-2");
  EXPECT_TRUE(rest["next_after_seq"].is_null());
  json fo1 = Body(Get("/api/v1/audit?target=fo-1", "admin-secret"));
  ASSERT_EQ(fo1["events"].size(), 1u);
  EXPECT_EQ(fo1["events"][0]["action"], "failover.propose");
  EXPECT_EQ(fo1["events"][0]["at_unix_ms"], clock_.Now());
}

// ---- Metrics ----

TEST_F(ApiTest, MetricsNeedNoTokenAndDescribeRegionsOwnershipFailoversAndRequests) {
  SeedRegions();
  SeedFailovers();
  Claim("a.t1", "us-east-1");
  Claim("a.t2", "us-east-1");
  Claim("b.t1", "eu-west-1");
  Get("/api/v1/regions", "");  // one 401
  ApiResponse res = Get("/metrics", "");
  ASSERT_EQ(res.status, 200);
  EXPECT_EQ(res.content_type, "text/plain; version=0.0.4; charset=utf-8");
  const std::string& m = res.body;
  for (const std::string& line : std::vector<std::string>{
           "# TYPE icewarden_region_health gauge\n",
           "icewarden_region_health{region=\"eu-west-1\",state=\"unreachable\"} 1\n",
           "icewarden_region_health{region=\"eu-west-1\",state=\"healthy\"} 0\n",
           "icewarden_region_health{region=\"us-east-1\",state=\"healthy\"} 1\n",
           "icewarden_region_fenced{region=\"eu-west-1\"} 1\n",
           "icewarden_region_fenced{region=\"us-east-1\"} 0\n",
           "icewarden_region_maintenance{region=\"eu-west-1\"} 1\n",
           "icewarden_tables_owned{region=\"us-east-1\"} 2\n",
           "icewarden_tables_owned{region=\"eu-west-1\"} 1\n",
           "icewarden_failovers{phase=\"fencing\"} 1\n",
           "icewarden_failovers{phase=\"proposed\"} 0\n",
           "# TYPE icewarden_http_requests_total counter\n",
           "icewarden_http_requests_total{code=\"401\"} 1\n",
           std::string("icewarden_build_info{version=\"") + BuildVersion() + "\",revision=\"" +
               BuildRevision() + "\"} 1\n",
           "icewarden_state_store_up 1\n",
       }) {
    EXPECT_NE(m.find(line), std::string::npos) << "missing: " << line << "\nin:\n" << m;
  }
  EXPECT_EQ(m.find("phase=\"completed\""), std::string::npos) << "terminal phases are not active";
  EXPECT_NE(Get("/metrics", "").body.find("icewarden_http_requests_total{code=\"200\"} 1\n"),
            std::string::npos);
}

TEST_F(ApiTest, MetricsSurviveAStoreFailure) {
  store_.FailWith(Status::IOError("disk I/O error"));
  ApiResponse res = Get("/metrics", "");
  EXPECT_EQ(res.status, 200);
  EXPECT_NE(res.body.find("icewarden_state_store_up 0\n"), std::string::npos);
}

TEST_F(ApiTest, MetricsPassPromtoolCheck) {
  const std::string promtool = "/usr/bin/promtool";
  if (!std::filesystem::exists(promtool)) GTEST_SKIP() << promtool << " is not installed";
  SeedRegions();
  SeedFailovers();
  Claim("a.t1", "us-east-1");
  Region odd{"we\"ird\\region", RegionHealth::kDegraded, false, false, 0, 0, "", 0};
  ASSERT_TRUE(store_.PutRegion(odd, ApiWhy("region.health", "odd")).ok());
  Get("/api/v1/nothing");
  const std::string dir = testing::MakeTempDir("api-metrics");
  const std::string file = dir + "/metrics.txt";
  const std::string out = dir + "/promtool.out";
  std::ofstream(file) << Get("/metrics", "").body;
  const std::string cmd = promtool + " check metrics < " + file + " > " + out + " 2>&1";
  const int rc = std::system(cmd.c_str());
  std::stringstream report;
  report << std::ifstream(out).rdbuf();
  EXPECT_TRUE(WIFEXITED(rc) && WEXITSTATUS(rc) == 0) << report.str();
  EXPECT_EQ(report.str(), "") << "promtool lint findings";
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace icewarden
