// The drill routes over the HTTP API (Api::Handle, no sockets): run, report, list, note, and bad
// input on every route, each a JSON error with the right status that changes nothing.
#include <gtest/gtest.h>

#include "orchestrator/api/api.h"
#include "tests/fakes/store_digest.h"
#include "tests/unit/orchestrator/drill_fixture.h"

namespace icewarden::testing {
namespace {

using nlohmann::json;

class ApiDrillsTest : public DrillTest {
 protected:
  void SetUp() override {
    BuildDrills();
    ApiConfig api;
    for (auto [name, role] : {std::pair{"viewer", Role::kViewer},
                              {"olivia", Role::kOperator},
                              {"alice", Role::kApprover}})
      api.tokens.push_back(ApiToken{name, role, Secret(std::string("tok-") + name)});
    api_ = std::make_unique<Api>(api, *store_, *clock_, nullptr);
    api_->SetFailoverService(service_.get());
    api_->SetDrillService(drill_service_.get());
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

  // The state store's digest and every drill run, step and note.
  std::string Digest() {
    std::string out = StoreDigest(*store_, true);
    auto runs = drills_->ListDrillRuns("", 0);
    for (const DrillRun& r : *runs) {
      out += r.id + ":" + DrillPhaseName(r.phase) + ":" + std::to_string(r.version) + ";";
      out += std::to_string(drills_->ListDrillSteps(r.id)->size()) + "/" +
             std::to_string(drills_->ListDrillNotes(r.id)->size()) + ";";
    }
    return out;
  }

  std::unique_ptr<Api> api_;
};

TEST_F(ApiDrillsTest, RunReadTheReportListAndNote) {
  ApiResponse started =
      Call("POST", "/api/v1/drills/weekly/runs", R"({"mode":"shadow"})", "olivia");
  ASSERT_EQ(started.status, 201) << started.body;
  const std::string id = json::parse(started.body)["run"]["id"];
  ApiResponse report = Call("GET", "/api/v1/drills/runs/" + id, "", "viewer");
  ASSERT_EQ(report.status, 200) << report.body;
  EXPECT_EQ(json::parse(report.body)["verdict"]["result"], "passed");
  ApiResponse noted =
      Call("POST", "/api/v1/drills/runs/" + id + "/notes", R"({"text":"ran fine"})", "alice");
  EXPECT_EQ(noted.status, 201) << noted.body;
  ApiResponse list = Call("GET", "/api/v1/drills?limit=5", "", "viewer");
  ASSERT_EQ(list.status, 200);
  json body = json::parse(list.body);
  EXPECT_EQ(body["drills"][0]["name"], "weekly");
  EXPECT_EQ(body["drills"][0]["last_run"]["id"], id);
  EXPECT_EQ(body["runs"].size(), 1u);
  // The configured mode when the body says none.
  ApiResponse plain = Call("POST", "/api/v1/drills/weekly/runs", "", "olivia");
  EXPECT_EQ(plain.status, 201);
  EXPECT_EQ(json::parse(plain.body)["run"]["mode"], "shadow");
  ApiResponse metrics = Call("GET", "/metrics", "", "");
  EXPECT_NE(metrics.body.find("icewarden_drill_last_success_timestamp_seconds{drill=\"weekly\"}"),
            std::string::npos);
}

TEST_F(ApiDrillsTest, BadInputIsAJsonErrorAndChangesNothing) {
  ApiResponse started = Call("POST", "/api/v1/drills/weekly/runs", R"({"mode":"plan"})", "olivia");
  ASSERT_EQ(started.status, 201);
  const std::string id = json::parse(started.body)["run"]["id"];
  struct Case {
    std::string method, path, body, who;
    int status;
    std::string says;
  };
  const std::vector<Case> cases = {
      {"POST", "/api/v1/drills/weekly/runs", "{not json", "olivia", 400, "not valid JSON"},
      {"POST", "/api/v1/drills/weekly/runs", "[1]", "olivia", 400, "JSON object"},
      {"POST", "/api/v1/drills/weekly/runs", R"({"mode":"chaos"})", "olivia", 400,
       "mode must be plan, shadow or live"},
      {"POST", "/api/v1/drills/weekly/runs", R"({"mode":1})", "olivia", 400, "mode"},
      {"POST", "/api/v1/drills/weekly/runs", R"({"mode":"plan","when":"now"})", "olivia", 400,
       "unknown field 'when'"},
      {"POST", "/api/v1/drills/nope/runs", R"({"mode":"plan"})", "olivia", 404,
       "no drill named 'nope'; drills are weekly"},
      {"POST", "/api/v1/drills/weekly/runs", R"({"mode":"plan"})", "viewer", 403, "run_drill"},
      {"POST", "/api/v1/drills/weekly/runs", R"({"mode":"plan"})", "alice", 403, "run_drill"},
      {"POST", "/api/v1/drills/weekly/runs", R"({"mode":"plan"})", "", 401, "bearer token"},
      {"POST", "/api/v1/drills/weekly/runs", std::string(kApiMaxBodyBytes + 1, ' '), "olivia", 413,
       "limit"},
      {"GET", "/api/v1/drills/runs/dr-nope", "", "viewer", 404, "dr-nope"},
      {"POST", "/api/v1/drills/runs/" + id, "{}", "olivia", 405, "use GET"},
      {"POST", "/api/v1/drills/runs/" + id + "/notes", R"({"text":""})", "olivia", 400,
       "text is required"},
      {"POST", "/api/v1/drills/runs/" + id + "/notes", R"({"note":"x"})", "olivia", 400,
       "unknown field 'note'"},
      {"POST", "/api/v1/drills/runs/" + id + "/notes", R"({"text":"x"})", "viewer", 403,
       "note_drill"},
      {"POST", "/api/v1/drills/runs/dr-nope/notes", R"({"text":"x"})", "olivia", 404, "dr-nope"},
      {"POST", "/api/v1/drills/runs/" + id + "/notes",
       json{{"text", std::string(5000, 'x')}}.dump(), "olivia", 400, "4096"},
      {"GET", "/api/v1/drills?limit=0", "", "viewer", 400, "limit"},
  };
  const std::string before = Digest();
  for (const Case& c : cases) {
    ApiResponse res = Call(c.method, c.path, c.body, c.who);
    EXPECT_EQ(res.status, c.status)
        << c.method << " " << c.path << " " << c.body.substr(0, 80) << ": " << res.body;
    json body = json::parse(res.body, nullptr, false);
    ASSERT_TRUE(body.is_object() && body.contains("error")) << res.body;
    EXPECT_NE(body["error"]["message"].get<std::string>().find(c.says), std::string::npos)
        << c.path << ": " << res.body;
    EXPECT_EQ(Digest(), before) << c.method << " " << c.path << " changed the store";
  }
}

}  // namespace
}  // namespace icewarden::testing
