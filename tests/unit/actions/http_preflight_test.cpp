// The readiness preflights of the HTTP kinds (actions/preflight.h): alert.webhook, fence.http
// and http.request send one GET (never the step's POST and body) and count any answer but
// 401/403 and 5xx as "the endpoint answers"; a webhook's path, which may be its secret, is
// never shown.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "actions/action_kinds.h"
#include "actions/preflight.h"
#include "tests/fakes/recording_http_server.h"
#include "tests/unit/actions/action_test_support.h"

namespace icewarden::testing {
namespace {

using namespace std::chrono_literals;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;
using json = nlohmann::json;

class HttpPreflightTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(registerHttpActions(registry_, TestActionEnv()).ok());
    ASSERT_TRUE(registerAlertActions(registry_, TestActionEnv()).ok());
  }

  std::vector<std::string> Preflight(const std::string& kind, const json& params) {
    const ActionPreflight* preflight = PreflightOf(*registry_.Find(kind));
    EXPECT_NE(preflight, nullptr) << kind;
    if (preflight == nullptr) return {"no preflight"};
    ActionContext ctx;
    ctx.deadline = std::chrono::steady_clock::now() + 3s;
    return preflight->Preflight(params, ctx);
  }

  ActionRegistry registry_;
  RecordingHttpServer server_;
};

TEST_F(HttpPreflightTest, AFenceEndpointThatAnswersIsReadyAndGetsOnlyAGet) {
  server_.Respond(405, "method not allowed");  // a POST-only endpoint still answers
  EXPECT_THAT(Preflight("fence.http", {{"url", server_.Url("/fence/us-east-1")},
                                       {"method", "POST"},
                                       {"headers", {{"Authorization", "Bearer k"}}},
                                       {"body", {{"region", "us-east-1"}}}}),
              ElementsAre());
  ASSERT_EQ(server_.RequestCount(), 1u);
  const RecordedRequest q = server_.Requests()[0];
  EXPECT_EQ(q.method, "GET");
  EXPECT_EQ(q.path, "/fence/us-east-1");
  EXPECT_EQ(q.body, "");
  EXPECT_EQ(q.Header("Authorization"), "Bearer k") << "our credentials are what is checked";
}

TEST_F(HttpPreflightTest, RefusedCredentialsAndServerErrorsAreReasons) {
  server_.Respond(401, "{}");
  auto refused = Preflight("fence.http", {{"url", server_.Url("/fence")}});
  ASSERT_EQ(refused.size(), 1u);
  EXPECT_THAT(refused[0], HasSubstr("fence endpoint " + server_.Url("/fence") +
                                    " refuses our credentials: GET answered 401"));
  server_.Respond(503, "{}");
  auto broken = Preflight("http.request", {{"url", server_.Url("/hook")}});
  ASSERT_EQ(broken.size(), 1u);
  EXPECT_THAT(broken[0], HasSubstr("answers with a server error: GET answered 503"));
}

TEST_F(HttpPreflightTest, AnUnreachableWebhookIsAReasonThatHidesItsPath) {
  std::string url;
  {
    RecordingHttpServer gone;
    url = gone.Url("/services/T000/B000/s3cr3t");
  }  // nothing listens there any more
  auto reasons = Preflight("alert.webhook", {{"url", url}, {"format", "slack"}});
  ASSERT_EQ(reasons.size(), 1u);
  EXPECT_THAT(reasons[0], HasSubstr("slack alert webhook http://127.0.0.1:"));
  EXPECT_THAT(reasons[0], HasSubstr(" does not answer: "));
  EXPECT_THAT(reasons[0], Not(HasSubstr("s3cr3t")));
}

TEST_F(HttpPreflightTest, AlertmanagerIsAskedForItsStatus) {
  server_.Respond(200, R"({"cluster":{"status":"disabled"}})");
  EXPECT_THAT(Preflight("alert.alertmanager", {{"url", server_.Url("/")}}), ElementsAre());
  ASSERT_EQ(server_.RequestCount(), 1u);
  EXPECT_EQ(server_.Requests()[0].method, "GET");
  EXPECT_EQ(server_.Requests()[0].path, "/api/v2/status");
  server_.Respond(404, "{}");
  auto reasons = Preflight("alert.alertmanager", {{"url", server_.Url("")}});
  EXPECT_THAT(reasons, ElementsAre("Alertmanager at " + server_.Url("") +
                                   " answers GET /api/v2/status with 404"));
}

}  // namespace
}  // namespace icewarden::testing
