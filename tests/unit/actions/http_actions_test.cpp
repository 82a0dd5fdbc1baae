// http.request, fence.http, alert.webhook and alert.alertmanager against a recording
// cpp-httplib server on 127.0.0.1: what goes on the wire, and how replies, timeouts and
// refusals become results.
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <thread>

#include "actions/alert_actions.h"
#include "tests/fakes/recording_http_server.h"
#include "tests/unit/actions/action_test_support.h"

namespace icewarden::testing {
namespace {

using namespace std::chrono_literals;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;
using json = nlohmann::json;
using Outcome = ActionResult::Outcome;

std::string HexHmacSha256(const std::string& key, const std::string& data) {
  unsigned char mac[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
       reinterpret_cast<const unsigned char*>(data.data()), data.size(), mac, &len);
  std::string hex;
  char buf[3];
  for (unsigned i = 0; i < len; ++i) {
    snprintf(buf, sizeof buf, "%02x", mac[i]);
    hex += buf;
  }
  return hex;
}

// A port nothing listens on.
int ClosedPort() {
  RecordingHttpServer gone;
  return gone.port();
}

class HttpActionsTest : public ::testing::Test {
 protected:
  void SetUp() override { RegisterTestedFamilies(registry_, TestActionEnv(clock_)); }
  Action& Kind(const std::string& kind) { return *registry_.FindMutable(kind); }
  ActionResult Run(const std::string& kind, const json& params,
                   std::chrono::milliseconds timeout = 5s, const Cancellation* cancel = nullptr) {
    EXPECT_TRUE(Kind(kind).Validate(params).empty()) << params.dump();
    return Kind(kind).Run(params, TestContext(timeout, cancel));
  }

  std::shared_ptr<FakeClock> clock_ = std::make_shared<FakeClock>(1'780'000'000'000);
  ActionRegistry registry_;
  RecordingHttpServer server_;
};

TEST_F(HttpActionsTest, HttpRequestSendsMethodHeadersJsonBodyAndIdempotencyKey) {
  auto r = Run("http.request", {{"url", server_.Url("/hooks/promote?region=us-west")},
                                {"headers", {{"Authorization", "Bearer t0ken"}}},
                                {"body", {{"region", "us-west"}}}});
  EXPECT_EQ(r.outcome, Outcome::kSucceeded) << r.reason;
  EXPECT_EQ(r.reason, "HTTP POST " + server_.Url("/hooks/promote") + " returned 200");
  ASSERT_EQ(server_.RequestCount(), 1u);
  const RecordedRequest got = server_.Requests()[0];
  EXPECT_EQ(got.method, "POST");
  EXPECT_EQ(got.path, "/hooks/promote");
  EXPECT_EQ(got.query, "region=us-west");
  EXPECT_EQ(got.Header("Authorization"), "Bearer t0ken");
  EXPECT_EQ(got.Header("Idempotency-Key"), "fo-42/notify");
  EXPECT_EQ(got.Header("Content-Type"), "application/json");
  EXPECT_EQ(json::parse(got.body), json({{"region", "us-west"}}));
  EXPECT_THAT(r.reason + r.detail_json, Not(HasSubstr("t0ken")));
  EXPECT_EQ(json::parse(r.detail_json)["status"], 200);
}

TEST_F(HttpActionsTest, HttpRequestStringBodyIsSentAsText) {
  auto r =
      Run("http.request", {{"url", server_.Url("/x")}, {"method", "PUT"}, {"body", "plain words"}});
  EXPECT_TRUE(r.ok()) << r.reason;
  EXPECT_EQ(server_.Requests()[0].method, "PUT");
  EXPECT_EQ(server_.Requests()[0].body, "plain words");
  EXPECT_EQ(server_.Requests()[0].Header("Content-Type"), "text/plain; charset=utf-8");
}

TEST_F(HttpActionsTest, UnexpectedStatusFailsWithTheStatusInTheReason) {
  server_.Respond(409, R"({"error":"conflict"})");
  auto r = Run("http.request", {{"url", server_.Url("/x")}});
  EXPECT_EQ(r.outcome, Outcome::kFailed);
  EXPECT_EQ(r.reason, "HTTP POST " + server_.Url("/x") + " returned 409, expected 2xx");
  EXPECT_EQ(json::parse(r.detail_json)["body_excerpt"], R"({"error":"conflict"})");
}

TEST_F(HttpActionsTest, ExpectStatusListIsHonoured) {
  server_.Respond(404);
  auto r = Run("http.request", {{"url", server_.Url("/x")},
                                {"method", "DELETE"},
                                {"expect_status", json::array({204, 404})}});
  EXPECT_TRUE(r.ok()) << r.reason;
  server_.Respond(200);
  r = Run("http.request", {{"url", server_.Url("/x")}, {"expect_status", 201}});
  EXPECT_EQ(r.outcome, Outcome::kFailed);
  EXPECT_THAT(r.reason, HasSubstr("returned 200, expected 201"));
}

TEST_F(HttpActionsTest, ServerErrorOnAPostIsUnknownButOnAGetIsFailed) {
  server_.Respond(502);
  EXPECT_EQ(Run("http.request", {{"url", server_.Url("/x")}}).outcome, Outcome::kUnknown);
  EXPECT_EQ(Run("http.request", {{"url", server_.Url("/x")}, {"method", "GET"}}).outcome,
            Outcome::kFailed);
}

TEST_F(HttpActionsTest, TimeoutAfterSendingAPostIsUnknownAndReturnsByTheDeadline) {
  server_.Respond(200, "{}", 1500ms);
  const auto started = std::chrono::steady_clock::now();
  auto r = Run("http.request", {{"url", server_.Url("/slow")}}, 300ms);
  EXPECT_LT(std::chrono::steady_clock::now() - started, 1000ms);
  EXPECT_EQ(r.outcome, Outcome::kUnknown) << r.reason;
  EXPECT_EQ(r.reason, "HTTP POST " + server_.Url("/slow") +
                          ": deadline passed while waiting for a response; the server may have "
                          "acted on it");
  EXPECT_EQ(json::parse(r.detail_json)["delivery"], "maybe_sent");
  // A GET that times out had no effect to be unsure about.
  EXPECT_EQ(Run("http.request", {{"url", server_.Url("/slow")}, {"method", "GET"}}, 300ms).outcome,
            Outcome::kFailed);
}

TEST_F(HttpActionsTest, CancellationEndsTheRequestPromptly) {
  server_.Respond(200, "{}", 1500ms);
  Cancellation cancel;
  std::thread canceller([&] {
    std::this_thread::sleep_for(100ms);
    cancel.Cancel();
  });
  const auto started = std::chrono::steady_clock::now();
  auto r = Run("fence.http", {{"url", server_.Url("/revoke")}}, 10s, &cancel);
  canceller.join();
  EXPECT_LT(std::chrono::steady_clock::now() - started, 1000ms);
  EXPECT_EQ(r.outcome, Outcome::kUnknown);
  EXPECT_THAT(r.reason, HasSubstr("cancelled while waiting for a response"));
}

TEST_F(HttpActionsTest, RefusedConnectionFailsBecauseNothingWasSent) {
  auto r =
      Run("http.request", {{"url", "http://127.0.0.1:" + std::to_string(ClosedPort()) + "/x"}});
  EXPECT_EQ(r.outcome, Outcome::kFailed);
  EXPECT_THAT(r.reason, HasSubstr("failed: could not connect"));
  EXPECT_EQ(json::parse(r.detail_json)["delivery"], "not_sent");
}

TEST_F(HttpActionsTest, FenceRecordsStatusAndABoundedBodyExcerptButNoSecrets) {
  server_.Respond(200, std::string(2000, 'x'));
  auto r = Run("fence.http", {{"url", server_.Url("/revoke?token=s3cret")},
                              {"headers", {{"X-Api-Key", "s3cret"}}},
                              {"body", {{"region", "us-east"}}}});
  EXPECT_TRUE(r.ok()) << r.reason;
  EXPECT_EQ(r.reason, "fence POST " + server_.Url("/revoke") + " returned 200");
  json detail = json::parse(r.detail_json);
  EXPECT_EQ(detail["status"], 200);
  EXPECT_EQ(detail["body_excerpt"], std::string(512, 'x') + "…");
  EXPECT_THAT(r.reason + r.detail_json, Not(HasSubstr("s3cret")));
  EXPECT_EQ(server_.Requests()[0].Header("Idempotency-Key"), "fo-42/notify");
}

TEST_F(HttpActionsTest, SignatureMatchesAKnownHmacSha256Vector) {
  // RFC 4231, test case 2.
  EXPECT_EQ(WebhookSignature("Jefe", "what do ya want for nothing?"),
            "sha256=5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
}

TEST_F(HttpActionsTest, GenericWebhookBodyIsSignedWithHmacSha256) {
  auto r = Run("alert.webhook", {{"url", server_.Url("/alert")},
                                 {"summary", "failing over db"},
                                 {"severity", "warning"},
                                 {"details", {{"rpo_seconds", 4}}},
                                 {"hmac_secret", "hook-s3cret"}});
  ASSERT_TRUE(r.ok()) << r.reason;
  EXPECT_EQ(r.reason, "generic alert POST http://127.0.0.1:" + std::to_string(server_.port()) +
                          " returned 200");
  const RecordedRequest got = server_.Requests()[0];
  EXPECT_EQ(json::parse(got.body), json({{"failover_id", "fo-42"},
                                         {"step_id", "notify"},
                                         {"from", "us-east"},
                                         {"to", "us-west"},
                                         {"scope", "db.*"},
                                         {"summary", "failing over db"},
                                         {"severity", "warning"},
                                         {"details", {{"rpo_seconds", 4}}}}));
  EXPECT_EQ(got.Header("X-Icewarden-Signature"),
            "sha256=" + HexHmacSha256("hook-s3cret", got.body));
  EXPECT_EQ(got.Header("Idempotency-Key"), "fo-42/notify");
  EXPECT_THAT(r.reason + r.detail_json, Not(HasSubstr("hook-s3cret")));
}

TEST_F(HttpActionsTest, UnsignedWebhookHasNoSignatureAndADefaultSummary) {
  ASSERT_TRUE(Run("alert.webhook", {{"url", server_.Url("/alert")}}).ok());
  const RecordedRequest got = server_.Requests()[0];
  EXPECT_EQ(got.Header("X-Icewarden-Signature"), "");
  json body = json::parse(got.body);
  EXPECT_EQ(body["summary"], "icewarden failover fo-42: db.* from us-east to us-west");
  EXPECT_EQ(body["severity"], "critical");
}

TEST_F(HttpActionsTest, SlackWebhookHasTextAndBlocks) {
  ASSERT_TRUE(Run("alert.webhook", {{"url", server_.Url("/services/T0/B0/XYZ")},
                                    {"format", "slack"},
                                    {"summary", "failing over db"},
                                    {"details", {{"rpo", "4s"}}}})
                  .ok());
  json body = json::parse(server_.Requests()[0].body);
  EXPECT_EQ(body["text"], "[critical] failing over db");
  ASSERT_TRUE(body["blocks"].is_array());
  ASSERT_EQ(body["blocks"].size(), 3u);
  EXPECT_EQ(body["blocks"][0]["type"], "section");
  EXPECT_EQ(body["blocks"][0]["text"]["text"], "*[critical] failing over db*");
  EXPECT_EQ(body["blocks"][1]["fields"][0]["text"], "*Failover*\n`fo-42`");
  EXPECT_EQ(body["blocks"][1]["fields"][2]["text"], "*From → to*\nus-east → us-west");
  EXPECT_EQ(body["blocks"][2]["type"], "context");
  EXPECT_EQ(body["blocks"][2]["elements"][0]["text"], "rpo: 4s");
}

TEST_F(HttpActionsTest, PagerDutyWebhookIsAnEventsV2TriggerDedupedByTheIdempotencyKey) {
  server_.Respond(202, R"({"status":"success","dedup_key":"fo-42/notify"})");
  auto r = Run("alert.webhook", {{"url", server_.Url("/v2/enqueue")},
                                 {"format", "pagerduty"},
                                 {"routing_key", "R0UT1NG"},
                                 {"severity", "error"},
                                 {"summary", "failing over db"},
                                 {"details", {{"rpo", "4s"}}}});
  ASSERT_TRUE(r.ok()) << r.reason;
  EXPECT_EQ(json::parse(server_.Requests()[0].body), json({{"routing_key", "R0UT1NG"},
                                                           {"event_action", "trigger"},
                                                           {"dedup_key", "fo-42/notify"},
                                                           {"payload",
                                                            {{"summary", "failing over db"},
                                                             {"source", "icewarden"},
                                                             {"severity", "error"},
                                                             {"custom_details",
                                                              {{"rpo", "4s"},
                                                               {"failover_id", "fo-42"},
                                                               {"step_id", "notify"},
                                                               {"from", "us-east"},
                                                               {"to", "us-west"},
                                                               {"scope", "db.*"}}}}}}));
  EXPECT_THAT(r.reason + r.detail_json, Not(HasSubstr("R0UT1NG")));
  EXPECT_THAT(r.reason + r.detail_json, Not(HasSubstr("/v2/enqueue")));
}

TEST_F(HttpActionsTest, AlertmanagerPostsOnePostableAlert) {
  auto r = Run("alert.alertmanager", {{"url", server_.Url("/")},
                                      {"labels", {{"severity", "page"}}},
                                      {"annotations", {{"summary", "failing over"}}},
                                      {"ends_in", "1h"}});
  ASSERT_TRUE(r.ok()) << r.reason;
  const RecordedRequest got = server_.Requests()[0];
  EXPECT_EQ(got.method, "POST");
  EXPECT_EQ(got.path, "/api/v2/alerts");
  EXPECT_EQ(
      json::parse(got.body),
      json::array(
          {{{"labels",
             {{"alertname", "IcewardenFailover"}, {"severity", "page"}, {"failover_id", "fo-42"}}},
            {"annotations", {{"summary", "failing over"}}},
            {"startsAt", FormatUnixMillis(1'780'000'000'000)},
            {"endsAt", FormatUnixMillis(1'780'000'000'000 + 3'600'000)}}}));
}

TEST_F(HttpActionsTest, AlertmanagerRejectionFails) {
  server_.Respond(400, R"("invalid label set")");
  auto r = Run("alert.alertmanager", {{"url", server_.Url()}});
  EXPECT_EQ(r.outcome, Outcome::kFailed);
  EXPECT_THAT(r.reason, StartsWith("Alertmanager alert IcewardenFailover POST " +
                                   server_.Url("/api/v2/alerts") + " returned 400"));
}

}  // namespace
}  // namespace icewarden::testing
