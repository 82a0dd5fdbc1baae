// Standing failover readiness (orchestrator/readiness/readiness.h): one test per reason a route
// is not ready, against fakes (an HTTP server standing in for Alertmanager and for the target's
// catalog), and what the API, the plans and /metrics show of it. Real BIND and the real lab are
// in tests/dns/dns_readiness_test.cpp and tests/e2e/readiness_e2e_test.cpp.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "actions/alert_actions.h"
#include "actions/catalog_checks.h"
#include "orchestrator/api/api.h"
#include "orchestrator/api/metrics_exposition.h"
#include "orchestrator/config/catalog_options.h"
#include "orchestrator/readiness/readiness.h"
#include "tests/fakes/recording_http_server.h"
#include "tests/fakes/store_digest.h"
#include "tests/unit/orchestrator/config_test_support.h"
#include "tests/unit/orchestrator/failover_service_fixture.h"

namespace icewarden::testing {
namespace {

using nlohmann::json;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

class ReadinessTest : public FailoverServiceTest {
 protected:
  void SetUp() override {
    alertmanager_ = std::make_unique<RecordingHttpServer>();
    catalog_.Respond(200, R"({"defaults":{},"overrides":{}})");
    // The real kinds whose preflights are under test; the rest of the runbook is fakes.
    ActionEnv env;
    env.clock = clock_;
    env.catalog = [this](const std::string& region) -> std::optional<CatalogClientOptions> {
      const RegionConfig* rc = config_.FindRegion(region);
      if (rc == nullptr) return std::nullopt;
      return CatalogOptionsFor(*rc);
    };
    ASSERT_TRUE(registry_.Register(MakeAlertmanagerAction(env)).ok());
    ASSERT_TRUE(registry_.Register(MakeOwnershipTransferAction(env)).ok());
    promote_ = "  - {id: page, action: alert.alertmanager, params: {url: \"" +
               alertmanager_->Url("") +
               "\"}}\n"
               "  - {id: move, action: ownership.transfer, params: {}}\n"
               "  - {id: sign, action: fake.idem, params: {token: \"${env.READINESS_TOKEN}\"}}\n"
               "  - {id: key, action: fake.idem, params: {key: \"${file:secret.key}\"}}\n";
    Build();
    // The target's catalog is the fake; us-east-1 stays unanswerable (it is the one failing).
    for (RegionConfig& r : config_.regions)
      if (r.name == kEu) r.catalog_uri = "http://127.0.0.1:" + std::to_string(catalog_.port());
    std::ofstream(dir_ + "/secret.key") << "s3cret\n";
    env_["READINESS_TOKEN"] = "t0ken";
    RebuildService();
  }

  // A FailoverService like the fixture's, whose ${env.NAME} reads env_.
  void RebuildService() {
    FailoverServiceDeps d;
    d.config = &config_;
    d.routes = &routes_;
    d.store = store_.get();
    d.orchestrator = orchestrator_.get();
    d.live = &live_;
    d.clock = clock_;
    d.actions = &registry_;
    d.env = [this](const std::string& name) -> std::optional<std::string> {
      auto it = env_.find(name);
      if (it == env_.end()) return std::nullopt;
      return it->second;
    };
    service_ = std::make_unique<FailoverService>(d);
  }

  ReadinessDeps Deps() {
    ReadinessDeps d;
    d.config = &config_;
    d.routes = &routes_;
    d.failovers = service_.get();
    d.actions = &registry_;
    d.clock = clock_;
    return d;
  }

  RouteReadiness Check(const std::string& route = "us-to-eu") {
    ReadinessEvaluator evaluator(Deps());
    return evaluator.Evaluate(*routes_.Named(route));
  }

  std::map<std::string, std::string> env_;
  std::unique_ptr<RecordingHttpServer> alertmanager_;
  RecordingHttpServer catalog_;
};

TEST_F(ReadinessTest, ReadyWhenGuardsSecretsAndPreflightsPassAndNothingChanges) {
  const std::string before = StoreDigest(*store_, true);
  RouteReadiness r = Check();
  EXPECT_TRUE(r.ready) << ::testing::PrintToString(r.reasons);
  EXPECT_THAT(r.reasons, ElementsAre());
  EXPECT_EQ(r.scope, "owner:us-east-1");
  std::map<std::string, ReadinessCheck> by_step;
  for (const ReadinessCheck& c : r.checks)
    if (c.kind == "preflight") by_step[c.name] = c;
  EXPECT_TRUE(by_step["page"].ok && by_step["page"].checked);
  EXPECT_TRUE(by_step["move"].ok && by_step["move"].checked);
  // A kind without a preflight is said to be unchecked, not silently passed.
  EXPECT_FALSE(by_step["quiet"].checked);
  EXPECT_THAT(by_step["quiet"].reason, HasSubstr("has no preflight"));

  // No side effect: nothing stored, and the endpoints saw reads only.
  EXPECT_EQ(StoreDigest(*store_, true), before);
  for (const RecordedRequest& q : alertmanager_->Requests()) {
    EXPECT_EQ(q.method, "GET");
    EXPECT_EQ(q.path, "/api/v2/status");
  }
  EXPECT_EQ(alertmanager_->RequestCount(), 1u);
  ASSERT_GE(catalog_.RequestCount(), 1u);
  for (const RecordedRequest& q : catalog_.Requests()) {
    EXPECT_EQ(q.method, "GET");
    EXPECT_EQ(q.path, "/v1/config");
  }
  EXPECT_TRUE(log_->Runs().empty()) << "no step ran";
}

TEST_F(ReadinessTest, AMissingEnvironmentVariableNamesTheStepAndTheVariable) {
  env_.erase("READINESS_TOKEN");
  RebuildService();
  RouteReadiness r = Check();
  EXPECT_FALSE(r.ready);
  EXPECT_THAT(r.reasons,
              ElementsAre("templates sign (fake.idem): params.token: ${env.READINESS_TOKEN}: "
                          "environment variable is not set"));
}

TEST_F(ReadinessTest, AMissingSecretFileNamesTheStepAndTheFile) {
  std::filesystem::remove(dir_ + "/secret.key");
  RouteReadiness r = Check();
  EXPECT_FALSE(r.ready);
  ASSERT_EQ(r.reasons.size(), 1u) << ::testing::PrintToString(r.reasons);
  EXPECT_THAT(r.reasons[0], HasSubstr("templates key (fake.idem): params.key: ${file:secret.key}: "
                                      "cannot read " +
                                      dir_ + "/secret.key"));
}

TEST_F(ReadinessTest, AnUnhealthyTargetFailsItsGuard) {
  SetHealth(kEu, RegionHealth::kUnreachable);
  RouteReadiness r = Check();
  EXPECT_FALSE(r.ready);
  ASSERT_FALSE(r.reasons.empty());
  EXPECT_THAT(r.reasons[0], HasSubstr("guard target_healthy: "));
  EXPECT_THAT(r.reasons[0], HasSubstr("eu-central-1"));
}

TEST_F(ReadinessTest, AnUnreachableAlertTargetIsAReason) {
  const std::string url = alertmanager_->Url("");
  alertmanager_.reset();  // nothing listens on its port any more
  RouteReadiness r = Check();
  EXPECT_FALSE(r.ready);
  std::string base = url;
  while (!base.empty() && base.back() == '/') base.pop_back();
  ASSERT_EQ(r.reasons.size(), 1u) << ::testing::PrintToString(r.reasons);
  EXPECT_THAT(r.reasons[0], HasSubstr("preflight page (alert.alertmanager): Alertmanager at " +
                                      base + " does not answer: "));
}

TEST_F(ReadinessTest, ACatalogRefusingOurCredentialsIsAReason) {
  catalog_.Respond(401, R"({"error":{"message":"bad token","type":"NotAuthorized","code":401}})");
  RouteReadiness r = Check();
  EXPECT_FALSE(r.ready);
  ASSERT_EQ(r.reasons.size(), 1u) << ::testing::PrintToString(r.reasons);
  EXPECT_THAT(r.reasons[0],
              HasSubstr("preflight move (ownership.transfer): catalog of eu-central-1 does not "
                        "accept our credentials"));
  EXPECT_THAT(r.reasons[0], HasSubstr("401"));
}

TEST_F(ReadinessTest, EveryReasonIsReportedNotOnlyTheFirst) {
  env_.clear();
  RebuildService();
  SetHealth(kEu, RegionHealth::kUnreachable);
  catalog_.Respond(403, "{}");
  RouteReadiness r = Check();
  EXPECT_FALSE(r.ready);
  EXPECT_EQ(r.reasons.size(), 3u) << ::testing::PrintToString(r.reasons);
}

TEST_F(ReadinessTest, ApiServesTheBoardAndEveryPlanShowsItsRoutesReadiness) {
  ApiConfig config;
  config.tokens.push_back(ApiToken{"viewer", Role::kViewer, Secret("tok-viewer")});
  config.tokens.push_back(ApiToken{"olivia", Role::kOperator, Secret("tok-olivia")});
  Api api(config, *store_, *clock_, nullptr);
  api.SetFailoverService(service_.get());
  ReadinessBoard board;
  api.SetReadiness(&board);
  auto call = [&](const std::string& method, const std::string& path, const std::string& body,
                  const std::string& who) {
    ApiRequest req{method, path, {}, body, "127.0.0.1:1"};
    if (!who.empty()) req.headers["authorization"] = "Bearer tok-" + who;
    return api.Handle(req);
  };
  EXPECT_EQ(call("GET", "/api/v1/readiness", "", "").status, 401);
  ApiResponse before = call("GET", "/api/v1/readiness", "", "viewer");
  EXPECT_EQ(before.status, 503) << before.body;
  EXPECT_EQ(json::parse(before.body)["error"]["code"], "not_ready");

  SetHealth(kEu, RegionHealth::kUnreachable);
  board.Publish({Check("us-to-eu"), Check("eu-to-us")});
  ApiResponse got = call("GET", "/api/v1/readiness", "", "viewer");
  ASSERT_EQ(got.status, 200) << got.body;
  json j = json::parse(got.body);
  EXPECT_EQ(j["ready"], false);
  ASSERT_EQ(j["routes"].size(), 2u);
  EXPECT_EQ(j["routes"][0]["route"], "us-to-eu");
  EXPECT_EQ(j["routes"][0]["ready"], false);
  EXPECT_THAT(j["routes"][0]["reasons"][0].get<std::string>(), HasSubstr("guard target_healthy"));

  ApiResponse dry = call("POST", "/api/v1/failovers",
                         R"({"to":"eu-central-1","scope":"owner:us-east-1","reason":"down",)"
                         R"("dry_run":true})",
                         "olivia");
  ASSERT_EQ(dry.status, 200) << dry.body;
  json plan = json::parse(dry.body);
  EXPECT_EQ(plan["readiness"]["route"], "us-to-eu");
  // Beside a plan, the round's guard checks give way to the plan's own, evaluated now.
  for (const json& g : plan["guards"]) {
    if (g["guard"] == "target_healthy") {
      EXPECT_EQ(g["ok"], false) << g.dump();
    }
  }
  for (const json& reason : plan["readiness"]["reasons"])
    EXPECT_THAT(reason.get<std::string>(), Not(HasSubstr("guard "))) << plan["readiness"].dump();
  for (const json& c : plan["readiness"]["checks"]) EXPECT_NE(c["kind"], "guard") << c.dump();
  EXPECT_TRUE(plan["readiness"]["age_ms"].is_number());

  // Issue 31: the region recovers (as after `failover ack` lifts a cooldown) and the plan
  // asked for right away must not repeat the round's stale "NOT ready: guard ...".
  SetHealth(kEu, RegionHealth::kHealthy);
  json again = json::parse(call("POST", "/api/v1/failovers",
                                R"({"to":"eu-central-1","scope":"owner:us-east-1","reason":"down",)"
                                R"("dry_run":true})",
                                "olivia")
                               .body);
  for (const json& g : again["guards"]) {
    if (g["guard"] == "target_healthy") {
      EXPECT_EQ(g["ok"], true) << g.dump();
    }
  }
  EXPECT_EQ(again["readiness"]["reasons"].dump().find("target_healthy"), std::string::npos)
      << again["readiness"].dump();

  const std::string page = call("GET", "/metrics", "", "").body;
  EXPECT_THAT(page, HasSubstr("icewarden_failover_route_ready{route=\"us-to-eu\"} 0\n"));
}

TEST_F(ReadinessTest, TheLoopPublishesRoundsOnItsOwnThread) {
  ReadinessEvaluator evaluator(Deps());
  ReadinessBoard board;
  std::vector<std::string> lines, flipped;
  std::mutex mu;
  ReadinessLoop loop(
      evaluator, board, std::chrono::milliseconds(50),
      [&](const std::string& line) {
        std::lock_guard lock(mu);
        lines.push_back(line);
      },
      {},
      [&](const RouteReadiness& r) {
        std::lock_guard lock(mu);
        flipped.push_back(r.route);
      });
  loop.Start();
  for (int i = 0; i < 500 && !board.Latest(); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  loop.Stop();
  ASSERT_TRUE(board.Latest());
  EXPECT_EQ(board.Latest()->size(), 2u);
  ASSERT_TRUE(board.Route("us-to-eu"));
  EXPECT_TRUE(board.Route("us-to-eu")->ready);
  std::lock_guard lock(mu);
  ASSERT_FALSE(lines.empty());
  EXPECT_THAT(lines[0], HasSubstr("readiness: route us-to-eu is ready"));
  // eu-to-us moves to us-east-1, whose catalog nothing answers for: not ready from the first
  // round on, which is what is audited; us-to-eu stays ready and is not.
  EXPECT_EQ(std::count(flipped.begin(), flipped.end(), "eu-to-us"), 1);
  EXPECT_EQ(std::count(flipped.begin(), flipped.end(), "us-to-eu"), 0);
}

// ---- config ----

std::vector<std::string> ErrorsOf(const std::string& yaml) {
  std::vector<std::string> out;
  for (const auto& e : ParseConfig(yaml, "c.yaml", EnvOf({})).errors) out.push_back(e.ToString());
  return out;
}

TEST(ReadinessConfig, IntervalDefaultsToAMinuteAndIsBounded) {
  const std::string base =
      "regions: [{name: a, catalog_uri: \"http://a:1\"}]\nownership: {default_owner: a}\n";
  auto plain = ParseConfig(base, "c.yaml", EnvOf({}));
  ASSERT_TRUE(plain.config);
  EXPECT_EQ(plain.config->policies.readiness_interval, std::chrono::minutes(1));
  auto set = ParseConfig(base + "policies: {readiness_interval: 30s}\n", "c.yaml", EnvOf({}));
  ASSERT_TRUE(set.config);
  EXPECT_EQ(set.config->policies.readiness_interval, std::chrono::seconds(30));
  EXPECT_THAT(ErrorsOf(base + "policies:\n  readiness_interval: 100ms\n"),
              ElementsAre("c.yaml:4:23: policies.readiness_interval: must be from 1s to 24h, got "
                          "100ms"));
  EXPECT_THAT(ErrorsOf(base + "policies:\n  readiness_interval: soon\n"),
              ElementsAre(HasSubstr("c.yaml:4:23: policies.readiness_interval: ")));
}

}  // namespace
}  // namespace icewarden::testing
