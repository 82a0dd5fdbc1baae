// The failover commands over the HTTP API (Api::Handle, no sockets): the happy path, and bad
// input on every route, each a JSON error with the right status that changes nothing.
#include <gtest/gtest.h>

#include "orchestrator/api/api.h"
#include "state/json_text.h"
#include "tests/fakes/store_digest.h"
#include "tests/unit/orchestrator/failover_service_fixture.h"

namespace icewarden::testing {
namespace {

using nlohmann::json;

class ApiFailoverCommandsTest : public FailoverServiceTest {
 protected:
  void SetUp() override {
    Build();
    ApiConfig api;
    for (auto [name, role] : {std::pair{"viewer", Role::kViewer},
                              {"olivia", Role::kOperator},
                              {"alice", Role::kApprover},
                              {"root", Role::kAdmin}})
      api.tokens.push_back(ApiToken{name, role, Secret(std::string("tok-") + name)});
    api_ = std::make_unique<Api>(api, *store_, *clock_, nullptr);
    api_->SetFailoverService(service_.get());
  }

  ApiResponse Call(const std::string& method, const std::string& path, const std::string& body,
                   const std::string& who) {
    ApiRequest req;
    req.method = method;
    req.target = path;
    req.body = body;
    req.remote = "127.0.0.1:4242";
    if (!who.empty()) req.headers["authorization"] = "Bearer tok-" + who;
    return api_->Handle(req);
  }

  // Everything the store holds that a refused request must leave alone.
  std::string Digest(bool with_audit) { return StoreDigest(*store_, with_audit); }

  std::string ProposeViaApi() {
    ApiResponse res =
        Call("POST", "/api/v1/failovers",
             R"({"to":"eu-central-1","scope":"owner:us-east-1","reason":"down"})", "olivia");
    EXPECT_EQ(res.status, 201) << res.body;
    return json::parse(res.body)["failover"]["id"];
  }

  std::unique_ptr<Api> api_;
};

TEST_F(ApiFailoverCommandsTest, ProposeApproveAndReadTheReport) {
  runner_->Start();
  const std::string id = ProposeViaApi();
  ApiResponse plain = Call("GET", "/api/v1/failovers/" + id, "", "alice");
  ASSERT_EQ(plain.status, 200);
  EXPECT_FALSE(json::parse(plain.body).contains("plan_now")) << "only asked for with ?plan=true";
  EXPECT_EQ(Call("GET", "/api/v1/failovers/" + id + "?plan=yes", "", "alice").status, 400);
  ApiResponse shown = Call("GET", "/api/v1/failovers/" + id + "?plan=true", "", "alice");
  ASSERT_EQ(shown.status, 200);
  const std::string hash = json::parse(shown.body)["plan_now"]["plan_hash"];
  EXPECT_EQ(hash, PlanHash(id));
  ApiResponse approved = Call("POST", "/api/v1/failovers/" + id + "/approve",
                              json{{"plan_hash", hash}, {"reason", "ok"}}.dump(), "alice");
  ASSERT_EQ(approved.status, 200) << approved.body;
  ASSERT_TRUE(WaitFor(id, FailoverPhase::kCompleted));
  ApiResponse report = Call("GET", "/api/v1/failovers/" + id + "/report", "", "viewer");
  ASSERT_EQ(report.status, 200);
  EXPECT_EQ(json::parse(report.body)["failover"]["phase"], "completed");
  ApiResponse ack =
      Call("POST", "/api/v1/failovers/" + id + "/ack", R"({"comment":"reviewed"})", "olivia");
  EXPECT_EQ(ack.status, 200) << ack.body;
}

TEST_F(ApiFailoverCommandsTest, AProposalMayNameItsRoute) {
  ApiResponse res = Call(
      "POST", "/api/v1/failovers",
      R"({"to":"eu-central-1","scope":"owner:us-east-1","reason":"x","route":"us-to-eu","dry_run":true})",
      "olivia");
  ASSERT_EQ(res.status, 200) << res.body;
  EXPECT_EQ(json::parse(res.body)["plan"]["route"], "us-to-eu") << res.body;
}

TEST_F(ApiFailoverCommandsTest, BadInputIsAJsonErrorAndChangesNothing) {
  const std::string id = ProposeViaApi();
  const std::string approve = "/api/v1/failovers/" + id + "/approve";
  struct Case {
    std::string method, path, body, who;
    int status;
    std::string says;
  };
  const std::vector<Case> cases = {
      {"POST", "/api/v1/failovers", "{not json", "olivia", 400, "not valid JSON"},
      {"POST", "/api/v1/failovers", "[1]", "olivia", 400, "JSON object"},
      {"POST", "/api/v1/failovers",
       R"({"to":"eu-central-1","scope":"owner:us-east-1","reason":"x","colour":1})", "olivia", 400,
       "unknown field 'colour'"},
      {"POST", "/api/v1/failovers", R"({"to":"eu-central-1","scope":"owner:us-east-1"})", "olivia",
       400, "needs a reason"},
      {"POST", "/api/v1/failovers", R"({"to":"mars-1","scope":"owner:us-east-1","reason":"x"})",
       "olivia", 400, "no region named 'mars-1'"},
      {"POST", "/api/v1/failovers",
       R"({"to":"eu-central-1","scope":"owner:us-east-1","reason":"x"})", "alice", 403,
       "propose_failover"},
      {"POST", "/api/v1/failovers",
       R"({"to":"eu-central-1","scope":"owner:us-east-1","reason":"x"})", "viewer", 403,
       "propose_failover"},
      {"POST", "/api/v1/failovers",
       R"({"to":"eu-central-1","scope":"owner:us-east-1","reason":"x"})", "", 401, "bearer token"},
      {"POST", approve, "{", "alice", 400, "not valid JSON"},
      {"POST", approve, R"({"reason":"ok"})", "alice", 400, "plan_hash is required"},
      {"POST", approve, R"({"plan_hash":"x","why":"ok"})", "alice", 400, "unknown field 'why'"},
      {"POST", approve, R"({"plan_hash":"x"})", "olivia", 403, "approve_failover"},
      {"POST", approve, json{{"plan_hash", std::string(200, 'a')}}.dump(), "alice", 400,
       "sha256:<64 hex digits>"},
      {"POST", "/api/v1/failovers/fo-nope/approve", R"({"plan_hash":"x"})", "alice", 404,
       "fo-nope"},
      {"POST", approve, R"({"plan_hash":"x","cooldown_override":"because"})", "alice", 403,
       "admin"},
      {"POST", "/api/v1/failovers/" + id + "/fencing-confirmation", R"({})", "alice", 400,
       "reason is required"},
      {"POST", "/api/v1/failovers/" + id + "/fencing-confirmation", R"({"reason":"off"})", "olivia",
       403, "confirm_fencing"},
      {"POST", "/api/v1/failovers/" + id + "/abort", R"({"reason":""})", "olivia", 400,
       "reason is required"},
      {"POST", "/api/v1/failovers/" + id + "/abort", R"({"reason":"x"})", "alice", 403,
       "abort_failover"},
      {"POST", "/api/v1/failovers/fo-nope/abort", R"({"reason":"x"})", "olivia", 404, "fo-nope"},
      {"POST", "/api/v1/failovers/" + id + "/ack", R"({"reason":"x"})", "olivia", 400,
       "unknown field 'reason'"},
      {"POST", "/api/v1/failovers/" + id + "/report", "{}", "olivia", 405, "use GET"},
      {"GET", "/api/v1/failovers/fo-nope/report", "", "viewer", 404, "fo-nope"},
      {"POST", "/api/v1/failovers", std::string(kApiMaxBodyBytes + 1, ' '), "olivia", 413, "limit"},
      {"POST", "/api/v1/failovers",
       R"({"to":"eu-central-1","scope":"owner:us-east-1","reason":"x","route":"eu-to-us"})",
       "olivia", 400, "route: eu-to-us is a failover from eu-central-1 to us-east-1"},
      {"POST", "/api/v1/failovers",
       json{{"to", "eu-central-1"},
            {"scope", "owner:us-east-1"},
            {"reason", "x"},
            {"route", std::string(5000, 'r')}}
           .dump(),
       "olivia", 400, "no failover route named '" + std::string(128, 'r') + "'"},
      {"POST", "/api/v1/failovers",
       R"({"kind":"failback","scope":"owner:us-east-1","reason":"x",)"
       R"("route":"us-to-eu"})",
       "olivia", 400, "a failback takes no route"},
  };
  const std::string before = Digest(true);
  for (const Case& c : cases) {
    ApiResponse res = Call(c.method, c.path, c.body, c.who);
    EXPECT_EQ(res.status, c.status)
        << c.method << " " << c.path << " " << c.body.substr(0, 80) << ": " << res.body;
    json body = json::parse(res.body, nullptr, false);
    ASSERT_TRUE(body.is_object() && body.contains("error")) << res.body;
    EXPECT_NE(body["error"]["message"].get<std::string>().find(c.says), std::string::npos)
        << c.path << ": " << res.body;
    EXPECT_EQ(Digest(true), before) << c.method << " " << c.path << " changed the store";
  }
}

TEST_F(ApiFailoverCommandsTest, WrongPhaseIsA409NamingTheEventsItTakes) {
  const std::string id = ProposeViaApi();
  const std::string before = Digest(false);
  ApiResponse res = Call("POST", "/api/v1/failovers/" + id + "/fencing-confirmation",
                         R"({"reason":"powered off"})", "alice");
  EXPECT_EQ(res.status, 409) << res.body;
  json body = json::parse(res.body);
  EXPECT_EQ(body["phase"], "proposed");
  EXPECT_EQ(body["allowed_events"], json::array({"approve", "abort"}));
  EXPECT_EQ(Digest(false), before);
  ApiResponse ack =
      Call("POST", "/api/v1/failovers/" + id + "/ack", R"({"comment":"x"})", "olivia");
  EXPECT_EQ(ack.status, 409) << ack.body;
  EXPECT_EQ(Digest(false), before);
}

TEST_F(ApiFailoverCommandsTest, GuardRefusalListsTheGuards) {
  SetHealth(kEu, RegionHealth::kUnreachable);
  const std::string id = ProposeViaApi();
  ApiResponse res = Call("POST", "/api/v1/failovers/" + id + "/approve",
                         json{{"plan_hash", PlanHash(id)}}.dump(), "alice");
  EXPECT_EQ(res.status, 409);
  json body = json::parse(res.body);
  EXPECT_EQ(body["error"]["code"], "refused");
  bool named = false;
  for (const json& g : body["guards"])
    named = named || (g["guard"] == "target_healthy" && !g["ok"].get<bool>());
  EXPECT_TRUE(named) << res.body;
}

}  // namespace
}  // namespace icewarden::testing
