// The webhook routes over the HTTP API (Api::Handle, no sockets), fed the payloads a real
// Alertmanager 0.25 posted (tests/compat/alertmanager/): firing proposes or suspects,
// resolved withdraws or lifts, a replay changes nothing, and bad input on every route is a
// JSON error with the right 4xx that changes nothing.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "orchestrator/api/api.h"
#include "orchestrator/webhooks/webhooks.h"
#include "state/json_text.h"
#include "tests/fakes/store_digest.h"
#include "tests/unit/orchestrator/failover_service_fixture.h"

namespace icewarden::testing {
namespace {

using nlohmann::json;

std::string Fixture(const std::string& name) {
  std::ifstream in(SourceDir() + "/tests/compat/alertmanager/" + name, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  EXPECT_FALSE(s.str().empty()) << name;
  return s.str();
}

std::string Base64(const std::string& in) {
  static const char* k = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  std::size_t i = 0;
  for (; i + 2 < in.size(); i += 3) {
    unsigned v =
        (unsigned char)in[i] << 16 | (unsigned char)in[i + 1] << 8 | (unsigned char)in[i + 2];
    for (int s = 18; s >= 0; s -= 6) out += k[(v >> s) & 63];
  }
  if (i + 1 == in.size()) {
    unsigned v = (unsigned char)in[i] << 16;
    out += std::string{k[(v >> 18) & 63], k[(v >> 12) & 63], '=', '='};
  } else if (i + 2 == in.size()) {
    unsigned v = (unsigned char)in[i] << 16 | (unsigned char)in[i + 1] << 8;
    out += std::string{k[(v >> 18) & 63], k[(v >> 12) & 63], k[(v >> 6) & 63], '='};
  }
  return out;
}

class WebhooksApiTest : public FailoverServiceTest {
 protected:
  void SetUp() override {
    Build();
    clock_->Set(1767607200000);  // 2026-01-05T10:00:00Z
    config_.webhooks.alertmanager = {
        WebhookReceiverConfig{"am", Secret("am-token"), "", Secret()},
        WebhookReceiverConfig{"am-basic", Secret(), "alertmanager", Secret("pw:with:colons")}};
    config_.webhooks.generic = {
        GenericWebhookConfig{"ci", Secret("s3cret"), std::chrono::minutes(5)}};
    WebhookRuleConfig propose;
    propose.name = "down-propose";
    propose.match = {{"alertname", "IcebergCatalogDown"}, {"severity", "critical"}};
    propose.effect = "propose_failover";
    propose.to = kEu;
    WebhookRuleConfig suspect;
    suspect.name = "down-suspect";
    suspect.match = {{"alertname", "IcebergCatalogDown"}};
    suspect.effect = "mark_suspect";
    config_.webhooks.rules = {propose, suspect};

    ApiConfig api;
    api.tokens = {ApiToken{"olivia", Role::kOperator, Secret("tok-olivia")},
                  ApiToken{"viewer", Role::kViewer, Secret("tok-viewer")}};
    api_ = std::make_unique<Api>(api, *store_, *clock_, nullptr);
    api_->SetFailoverService(service_.get());
    WebhookReceiverDeps d;
    d.config = &config_;
    d.store = store_.get();
    d.failovers = service_.get();
    d.clock = clock_;
    // What serve does through the HealthTracker, straight on the store.
    d.region_event = [this](const std::string& region, const HealthInput& in,
                            const std::string& actor) -> Result<HealthDecision> {
      auto r = store_->GetRegion(region);
      if (!r.ok()) return r.status();
      if (!r->has_value()) return Status::NotFound(region);
      HealthDecision decision = ApplyHealthEvent(**r, in, {});
      if (Status s = orchestrator_->RecordRegionHealth(decision, actor); !s.ok()) return s;
      return decision;
    };
    receiver_ = std::make_unique<WebhookReceiver>(d);
    api_->SetWebhookReceiver(receiver_.get());
  }

  ApiResponse Post(const std::string& path, const std::string& body,
                   const std::string& authorization = "Bearer am-token",
                   std::map<std::string, std::string> headers = {}) {
    ApiRequest req;
    req.method = "POST";
    req.target = path;
    req.body = body;
    req.remote = "127.0.0.1:9093";
    req.headers = std::move(headers);
    if (!authorization.empty()) req.headers["authorization"] = authorization;
    return api_->Handle(req);
  }

  ApiResponse Alertmanager(const std::string& body,
                           const std::string& authorization = "Bearer am-token") {
    return Post("/api/v1/webhooks/alertmanager", body, authorization);
  }

  std::map<std::string, std::string> Signed(const std::string& body, std::int64_t ts,
                                            const std::string& secret = "s3cret") {
    return {{"x-icewarden-timestamp", std::to_string(ts)},
            {"x-icewarden-signature",
             "sha256=" + HmacSha256Hex(secret, std::to_string(ts) + "." + body)}};
  }

  // The real firing payload with other labels (a severity the propose rule does not match).
  static std::string WithSeverity(const std::string& payload, const std::string& severity) {
    json doc = json::parse(payload);
    for (auto& a : doc["alerts"]) a["labels"]["severity"] = severity;
    return doc.dump();
  }

  std::vector<Failover> Failovers() { return *store_->ListFailovers(0); }
  std::string Digest() { return StoreDigest(*store_, true); }

  std::unique_ptr<Api> api_;
  std::unique_ptr<WebhookReceiver> receiver_;
};

TEST_F(WebhooksApiTest, AFiringAlertProposesQuotingItAndTheResolvedOneWithdrawsIt) {
  ApiResponse fired = Alertmanager(Fixture("am-0.25-firing.json"));
  ASSERT_EQ(fired.status, 200) << fired.body;
  json body = json::parse(fired.body);
  EXPECT_EQ(body["alerts"][0]["result"], "proposed") << fired.body;
  auto list = Failovers();
  ASSERT_EQ(list.size(), 1u);
  const Failover f = list.front();
  EXPECT_EQ(f.phase, FailoverPhase::kProposed);
  EXPECT_EQ(f.proposed_by, "webhook:alertmanager");
  EXPECT_EQ(f.from, kUs);
  EXPECT_EQ(f.to, kEu);
  EXPECT_EQ(f.scope, "owner:us-east-1");
  EXPECT_NE(f.reason.find("IcebergCatalogDown"), std::string::npos) << f.reason;
  EXPECT_NE(f.reason.find("catalog us-east-1 does not answer"), std::string::npos) << f.reason;
  EXPECT_NE(f.reason.find("http://127.0.0.1:9090/graph?g0.expr=probe_success%3D%3D0"),
            std::string::npos)
      << f.reason;

  ApiResponse resolved = Alertmanager(Fixture("am-0.25-resolved.json"));
  ASSERT_EQ(resolved.status, 200) << resolved.body;
  EXPECT_EQ(json::parse(resolved.body)["alerts"][0]["result"], "withdrawn") << resolved.body;
  const Failover after = **store_->GetFailover(f.id);
  EXPECT_EQ(after.phase, FailoverPhase::kAborted);
  EXPECT_NE(after.last_reason.find("resolved"), std::string::npos) << after.last_reason;
  auto audit = store_->ListAudit({0, 0, f.id});
  ASSERT_TRUE(audit.ok());
  bool abort_audited = false;
  for (const AuditEvent& e : *audit)
    if (e.action.find("abort") != std::string::npos && e.actor == "webhook:alertmanager")
      abort_audited = true;
  EXPECT_TRUE(abort_audited) << "the withdrawal is in the audit log, by the webhook";
}

TEST_F(WebhooksApiTest, AReplayChangesNothing) {
  for (const char* name : {"am-0.25-firing.json", "am-0.25-resolved.json"}) {
    ASSERT_EQ(Alertmanager(Fixture(name)).status, 200);
    const std::string before = Digest();
    ApiResponse again = Alertmanager(Fixture(name));
    ASSERT_EQ(again.status, 200) << again.body;
    EXPECT_EQ(json::parse(again.body)["alerts"][0]["result"], "duplicate") << again.body;
    EXPECT_EQ(Digest(), before) << name << " replayed changed the store";
  }
  EXPECT_EQ(Failovers().size(), 1u);
}

// A re-delivery is answered from the receiver's memory of recent deliveries, and after a
// restart (nothing remembered) from the store: the same answer, the same proposal, no change.
TEST_F(WebhooksApiTest, AReplayAfterARestartIsADuplicateFromTheStore) {
  ApiResponse fired = Alertmanager(Fixture("am-0.25-firing.json"));
  ASSERT_EQ(fired.status, 200) << fired.body;
  const std::string id = Failovers().front().id;
  ApiResponse remembered = Alertmanager(Fixture("am-0.25-firing.json"));
  const std::string before = Digest();
  WebhookReceiverDeps d;
  d.config = &config_;
  d.store = store_.get();
  d.failovers = service_.get();
  d.clock = clock_;
  receiver_ = std::make_unique<WebhookReceiver>(d);  // what a restarted serve has
  api_->SetWebhookReceiver(receiver_.get());
  ApiResponse stored = Alertmanager(Fixture("am-0.25-firing.json"));
  for (const ApiResponse* r : {&remembered, &stored}) {
    ASSERT_EQ(r->status, 200) << r->body;
    const json row = json::parse(r->body)["alerts"][0];
    EXPECT_EQ(row["result"], "duplicate") << r->body;
    EXPECT_EQ(row["failover_id"], id) << r->body;
    EXPECT_NE(row["decision"].get<std::string>().find("already received: "), std::string::npos);
  }
  EXPECT_EQ(json::parse(remembered.body)["alerts"][0]["decision"],
            json::parse(stored.body)["alerts"][0]["decision"]);
  EXPECT_EQ(Digest(), before);
  EXPECT_EQ(Failovers().size(), 1u);
}

TEST_F(WebhooksApiTest, AnApprovedProposalIsNotWithdrawnByItsAlert) {
  ASSERT_EQ(Alertmanager(Fixture("am-0.25-firing.json")).status, 200);
  const std::string id = Failovers().front().id;
  ASSERT_TRUE(Approve(id).status.ok());
  ApiResponse resolved = Alertmanager(Fixture("am-0.25-resolved.json"));
  ASSERT_EQ(resolved.status, 200);
  EXPECT_EQ(json::parse(resolved.body)["alerts"][0]["result"], "left") << resolved.body;
  EXPECT_NE(Get(id).phase, FailoverPhase::kAborted)
      << "rule 4: a person decided; the webhook does not undo it";
}

TEST_F(WebhooksApiTest, SuspicionByAlertAndLiftedWhenItResolvesWithBasicAuth) {
  const std::string basic = "Basic " + Base64("alertmanager:pw:with:colons");
  ApiResponse fired = Alertmanager(WithSeverity(Fixture("am-0.25-firing.json"), "warning"), basic);
  ASSERT_EQ(fired.status, 200) << fired.body;
  EXPECT_EQ(json::parse(fired.body)["alerts"][0]["result"], "suspected") << fired.body;
  EXPECT_EQ((*store_->GetRegion(kUs))->health, RegionHealth::kDegraded);
  EXPECT_TRUE(Failovers().empty()) << "mark_suspect proposes nothing";
  ApiResponse resolved =
      Alertmanager(WithSeverity(Fixture("am-0.25-resolved.json"), "warning"), basic);
  ASSERT_EQ(resolved.status, 200) << resolved.body;
  EXPECT_EQ(json::parse(resolved.body)["alerts"][0]["result"], "lifted") << resolved.body;
  EXPECT_EQ((*store_->GetRegion(kUs))->health, RegionHealth::kHealthy);
}

// The region's health change is audited as the webhook that caused it, not as Alertmanager.
TEST_F(WebhooksApiTest, ASignedEventsSuspicionIsAuditedAsItsEndpoint) {
  const std::string fire =
      R"({"id":"evt-3","status":"firing","labels":{"alertname":"IcebergCatalogDown","region":"us-east-1"}})";
  ApiResponse fired =
      Post("/api/v1/webhooks/generic/ci", fire, "", Signed(fire, clock_->Now() / 1000));
  ASSERT_EQ(fired.status, 200) << fired.body;
  EXPECT_EQ(json::parse(fired.body)["alerts"][0]["result"], "suspected") << fired.body;
  auto audit = store_->ListAudit({0, 0, kUs});
  ASSERT_TRUE(audit.ok());
  std::vector<std::string> actors;
  for (const AuditEvent& e : *audit)
    if (e.action == "region.degraded") actors.push_back(e.actor);
  EXPECT_EQ(actors, std::vector<std::string>{"webhook:generic/ci"});
}

TEST_F(WebhooksApiTest, AnAlertNoRuleMatchesDoesNothingAndWritesNothing) {
  json doc = json::parse(Fixture("am-0.25-firing.json"));
  doc["alerts"][0]["labels"]["alertname"] = "DiskFull";
  const std::string before = Digest();
  ApiResponse res = Alertmanager(doc.dump());
  ASSERT_EQ(res.status, 200) << res.body;
  EXPECT_EQ(json::parse(res.body)["alerts"][0]["result"], "ignored");
  EXPECT_EQ(Digest(), before);
}

TEST_F(WebhooksApiTest, UnknownFieldsAreIgnoredAndTruncatedAlertsReported) {
  json doc = json::parse(Fixture("am-0.25-firing.json"));
  doc["newerField"] = {{"x", 1}};
  doc["alerts"][0]["silenceURL"] = "http://am/silence";
  doc["truncatedAlerts"] = 3;
  ApiResponse res = Alertmanager(doc.dump());
  ASSERT_EQ(res.status, 200) << res.body;
  EXPECT_EQ(json::parse(res.body)["truncated_alerts"], 3);
  EXPECT_EQ(Failovers().size(), 1u);
}

TEST_F(WebhooksApiTest, AStoreFailureBeforeAnythingIsRecordedIs5xxSoAlertmanagerRetries) {
  // A propose rule with no failover service: nothing can be recorded.
  WebhookReceiverDeps d;
  d.config = &config_;
  d.store = store_.get();
  d.clock = clock_;
  WebhookReceiver no_failovers(d);
  api_->SetWebhookReceiver(&no_failovers);
  const std::string before = Digest();
  ApiResponse res = Alertmanager(Fixture("am-0.25-firing.json"));
  EXPECT_EQ(res.status, 503) << res.body;
  EXPECT_NE(res.body.find("nothing was recorded"), std::string::npos) << res.body;
  EXPECT_EQ(Digest(), before);
  api_->SetWebhookReceiver(receiver_.get());
  EXPECT_EQ(Alertmanager(Fixture("am-0.25-firing.json")).status, 200) << "the retry succeeds";
}

TEST_F(WebhooksApiTest, AnOperatorTokenMayPostAlertsAViewerTokenMayNot) {
  EXPECT_EQ(Alertmanager(Fixture("am-0.25-firing.json"), "Bearer tok-olivia").status, 200);
  ApiResponse viewer = Alertmanager(Fixture("am-0.25-resolved.json"), "Bearer tok-viewer");
  EXPECT_EQ(viewer.status, 403);
  EXPECT_NE(viewer.body.find("may not post alerts"), std::string::npos) << viewer.body;
}

TEST_F(WebhooksApiTest, GenericSignedEventProposesAndItsResolvedEventWithdraws) {
  const std::int64_t now_s = clock_->Now() / 1000;
  const std::string fire =
      R"({"id":"evt-1","status":"firing","labels":{"alertname":"IcebergCatalogDown","region":"us-east-1","severity":"critical"},"annotations":{"summary":"down"},"url":"https://ci/run/1"})";
  ApiResponse fired = Post("/api/v1/webhooks/generic/ci", fire, "", Signed(fire, now_s));
  ASSERT_EQ(fired.status, 200) << fired.body;
  ASSERT_EQ(Failovers().size(), 1u);
  EXPECT_EQ(Failovers().front().proposed_by, "webhook:generic/ci");
  const std::string resolve =
      R"({"id":"evt-1","status":"resolved","labels":{"alertname":"IcebergCatalogDown","region":"us-east-1","severity":"critical"}})";
  ApiResponse resolved =
      Post("/api/v1/webhooks/generic/ci", resolve, "", Signed(resolve, now_s + 1));
  ASSERT_EQ(resolved.status, 200) << resolved.body;
  EXPECT_EQ(Failovers().front().phase, FailoverPhase::kAborted);
}

// A signed event whose proposal the guards refuse is still recorded: replaying its request
// must not ask the guards again (they might pass by then); a fresh signature does.
TEST_F(WebhooksApiTest, AReplayedSignedEventIsRefusedEvenWhenItsProposalWasRefused) {
  const std::int64_t now_s = clock_->Now() / 1000;
  auto event = [](const std::string& id) {
    return R"({"id":")" + id +
           R"(","status":"firing","labels":{"alertname":"IcebergCatalogDown","region":"us-east-1","severity":"critical"}})";
  };
  const std::string first = event("evt-1"), second = event("evt-2");
  ASSERT_EQ(Post("/api/v1/webhooks/generic/ci", first, "", Signed(first, now_s)).status, 200);
  ASSERT_EQ(Failovers().size(), 1u);
  // The same scope again: the no_overlap guard refuses it; the reply says so.
  ApiResponse refused = Post("/api/v1/webhooks/generic/ci", second, "", Signed(second, now_s));
  ASSERT_EQ(refused.status, 200) << refused.body;
  EXPECT_EQ(json::parse(refused.body)["alerts"][0]["result"], "refused") << refused.body;
  EXPECT_EQ(Failovers().size(), 1u);
  const std::string before = Digest();
  ApiResponse replay = Post("/api/v1/webhooks/generic/ci", second, "", Signed(second, now_s));
  EXPECT_EQ(replay.status, 409) << replay.body;
  EXPECT_EQ(Digest(), before);
}

TEST_F(WebhooksApiTest, BadInputIsAJsonErrorAndChangesNothing) {
  const std::string firing = Fixture("am-0.25-firing.json");
  json missing_group = json::parse(firing);
  missing_group.erase("groupKey");
  json missing_fp = json::parse(firing);
  missing_fp["alerts"][0].erase("fingerprint");
  json missing_alerts = json::parse(firing);
  missing_alerts.erase("alerts");
  json v5 = json::parse(firing);
  v5["version"] = "5";
  json number_label = json::parse(firing);
  number_label["alerts"][0]["labels"]["region"] = 1;
  json negative_truncated = json::parse(firing);
  negative_truncated["truncatedAlerts"] = -1;
  json alerts_object = json::parse(firing);
  alerts_object["alerts"] = json::object();
  json pending = json::parse(firing);
  pending["alerts"][0]["status"] = "pending";
  // Webhook bodies have their own bound, above the API's (an Alertmanager group arrives whole).
  const std::string big(kApiMaxWebhookBodyBytes + 1, ' ');
  const std::string over_api_limit(kApiMaxBodyBytes + 1, ' ');
  const std::int64_t now_s = clock_->Now() / 1000;
  const std::string event =
      R"({"id":"evt-9","status":"firing","labels":{"alertname":"IcebergCatalogDown","region":"us-east-1"}})";
  // A first, accepted delivery whose replay is refused.
  ASSERT_EQ(Post("/api/v1/webhooks/generic/ci", event, "", Signed(event, now_s)).status, 200);
  auto bad_sig = Signed(event, now_s);
  bad_sig["x-icewarden-signature"] = "sha256=" + std::string(64, '0');
  auto other_key = Signed(event, now_s, "not-the-secret");
  auto stale = Signed(event, now_s - 301);
  auto future = Signed(event, now_s + 301);
  struct Case {
    std::string path, body, authorization;
    std::map<std::string, std::string> headers;
    int status;
    std::string says;
  };
  const std::string am = "/api/v1/webhooks/alertmanager";
  const std::string ci = "/api/v1/webhooks/generic/ci";
  const std::vector<Case> cases = {
      {am, "{not json", "Bearer am-token", {}, 400, "not valid JSON"},
      {am, "[1]", "Bearer am-token", {}, 400, "JSON object"},
      {am, "", "Bearer am-token", {}, 400, "body is empty"},
      {am, v5.dump(), "Bearer am-token", {}, 400, "unsupported payload version '5'"},
      {am,
       Fixture("upstream-exec-success.json"),
       "Bearer am-token",
       {},
       400,
       "unsupported payload version '1'"},
      {am, missing_group.dump(), "Bearer am-token", {}, 400, "groupKey is missing"},
      {am, missing_fp.dump(), "Bearer am-token", {}, 400, "alerts[0].fingerprint is missing"},
      {am, missing_alerts.dump(), "Bearer am-token", {}, 400, "alerts is missing"},
      {am,
       number_label.dump(),
       "Bearer am-token",
       {},
       400,
       "alerts[0].labels.region must be a string"},
      {am,
       negative_truncated.dump(),
       "Bearer am-token",
       {},
       400,
       "truncatedAlerts must be a whole number >= 0"},
      {am, alerts_object.dump(), "Bearer am-token", {}, 400, "alerts must be an array"},
      {am,
       pending.dump(),
       "Bearer am-token",
       {},
       400,
       "alerts[0].status must be firing or resolved, got 'pending'"},
      {am, big, "Bearer am-token", {}, 413, "max_alerts"},
      {am, over_api_limit, "Bearer am-token", {}, 400, "not valid JSON"},
      {am, firing, "Bearer wrong-token", {}, 401, "invalid webhook credentials"},
      {am, firing, "Basic " + Base64("alertmanager:wrong"), {}, 401, "invalid webhook credentials"},
      {am, firing, "", {}, 401, "missing credentials"},
      {am, firing, "Bearer tok-viewer", {}, 403, "may not post alerts"},
      {ci, event, "", Signed(event, now_s), 409, "accepted before"},
      {ci, event, "", bad_sig, 401, "does not match"},
      {ci, event, "", other_key, 401, "does not match"},
      {ci, event, "", stale, 401, "accepts at most 300 s"},
      {ci, event, "", future, 401, "accepts at most 300 s"},
      {ci, event, "", {}, 401, "missing X-Icewarden-Timestamp"},
      {ci, "{oops", "", Signed("{oops", now_s + 2), 400, "not valid JSON"},
      {ci, R"({"id":"e","labels":{}})", "", Signed(R"({"id":"e","labels":{}})", now_s + 3), 400,
       "status is missing"},
      {ci, big, "", Signed(big, now_s), 413, "limit is"},
      {"/api/v1/webhooks/generic/nope", event, "", Signed(event, now_s), 404,
       "no generic webhook named 'nope'"},
  };
  const std::string before = Digest();
  for (const Case& c : cases) {
    ApiResponse res = Post(c.path, c.body, c.authorization, c.headers);
    SCOPED_TRACE(c.path + " expecting " + c.says);
    EXPECT_EQ(res.status, c.status) << res.body;
    json body = json::parse(res.body, nullptr, false);
    ASSERT_TRUE(body.is_object()) << res.body;
    ASSERT_TRUE(body.contains("error")) << res.body;
    EXPECT_NE(body["error"]["message"].get<std::string>().find(c.says), std::string::npos)
        << res.body;
    EXPECT_EQ(Digest(), before) << "changed the store";
  }
}

// `icewarden pause`: while a pause covers the alert's route or regions, the webhook's
// proposal is refused saying who paused, why and until when, and nothing is recorded, so the
// alert Alertmanager re-sends after the resume proposes. An operator may still propose.
TEST_F(WebhooksApiTest, APauseRefusesAWebhooksProposalUntilResumedButNotAnOperators) {
  ApiResponse paused = Post("/api/v1/pauses",
                            R"({"scope": "region:us-east-1", "reason": "db maintenance",)"
                            R"( "for": "2h"})",
                            "Bearer tok-olivia");
  ASSERT_EQ(paused.status, 201) << paused.body;
  EXPECT_EQ(json::parse(paused.body)["pause"]["expected_end"], "2026-01-05T12:00:00.000Z");

  const std::string before = Digest();
  ApiResponse fired = Alertmanager(Fixture("am-0.25-firing.json"));
  ASSERT_EQ(fired.status, 200) << fired.body;
  const json row = json::parse(fired.body)["alerts"][0];
  EXPECT_EQ(row["result"], "refused") << fired.body;
  const std::string why = row["decision"];
  for (const char* part :
       {"automation is paused for region:us-east-1 by olivia since 2026-01-05T10:00:00.000Z",
        "expected until 2026-01-05T12:00:00.000Z", "db maintenance",
        "`icewarden resume --scope region:us-east-1` lifts it"})
    EXPECT_NE(why.find(part), std::string::npos) << part << " in: " << why;
  EXPECT_EQ(Digest(), before) << "a paused proposal writes nothing";
  EXPECT_TRUE(Failovers().empty());
  // Observation is not paused: an alert the suspect rule matches still marks the region (a
  // different alert: its own fingerprint, so the critical one is not its duplicate).
  json warning = json::parse(WithSeverity(Fixture("am-0.25-firing.json"), "warning"));
  warning["alerts"][0]["fingerprint"] = "0123456789abcdef";
  ApiResponse suspected = Alertmanager(warning.dump());
  ASSERT_EQ(suspected.status, 200) << suspected.body;
  EXPECT_EQ(json::parse(suspected.body)["alerts"][0]["result"], "suspected") << suspected.body;

  // Past its --for the pause is overdue, not lifted: it still refuses, and says so.
  clock_->Set(1767607200000 + 3 * 3600 * 1000);
  fired = Alertmanager(Fixture("am-0.25-firing.json"));
  EXPECT_NE(
      json::parse(fired.body)["alerts"][0]["decision"].get<std::string>().find("overdue by 60 min"),
      std::string::npos)
      << fired.body;
  ApiRequest metrics;
  metrics.method = "GET";
  metrics.target = "/metrics";
  const std::string page = api_->Handle(metrics).body;
  EXPECT_NE(page.find("icewarden_automation_paused{scope=\"region:us-east-1\"} 1\n"),
            std::string::npos)
      << page;
  EXPECT_NE(page.find("icewarden_automation_pause_overdue_seconds{scope=\"region:us-east-1\"} "
                      "3600\n"),
            std::string::npos)
      << page;

  // People still act by hand.
  const std::string by_hand = Propose();
  EXPECT_FALSE(by_hand.empty()) << "an operator's proposal is not paused";
  ASSERT_EQ(Failovers().size(), 1u);
  ASSERT_TRUE(
      service_->Abort(Person("olivia", ActorKind::kOperator), by_hand, "not now").status.ok());

  ApiResponse resumed =
      Post("/api/v1/pauses/resume", R"({"scope": "region:us-east-1", "reason": "done"})",
           "Bearer tok-olivia");
  ASSERT_EQ(resumed.status, 200) << resumed.body;
  EXPECT_EQ(json::parse(resumed.body)["resumed"]["by"], "olivia");
  fired = Alertmanager(Fixture("am-0.25-firing.json"));
  EXPECT_EQ(json::parse(fired.body)["alerts"][0]["result"], "proposed") << fired.body;
}

TEST_F(WebhooksApiTest, PauseRoutesRefuseBadInputWithTheRightStatusAndWriteNothing) {
  const std::string before = Digest();
  struct Case {
    std::string path, body, auth;
    int status;
    std::string says;
  };
  const std::vector<Case> cases = {
      {"/api/v1/pauses", R"({"reason": "x", "scope": "region:mars"})", "Bearer tok-olivia", 400,
       "no region named 'mars'"},
      {"/api/v1/pauses", R"({"reason": "x", "scope": "cluster"})", "Bearer tok-olivia", 400,
       "a scope is all, region:NAME, route:NAME"},
      {"/api/v1/pauses", R"({"scope": "all"})", "Bearer tok-olivia", 400, "reason"},
      {"/api/v1/pauses", R"({"reason": "x", "for": "2 hours"})", "Bearer tok-olivia", 400,
       "e.g. \"2h\""},
      {"/api/v1/pauses", R"({"reason": "x", "for": "90d"})", "Bearer tok-olivia", 400,
       "at most 30d"},
      {"/api/v1/pauses", R"({"reason": "x", "until": "later"})", "Bearer tok-olivia", 400, "until"},
      {"/api/v1/pauses", R"({"reason": "x"})", "Bearer tok-viewer", 403, "pause_automation"},
      {"/api/v1/pauses", R"({"reason": "x"})", "", 401, ""},
      {"/api/v1/pauses/resume", R"({"reason": "x", "scope": "all"})", "Bearer tok-olivia", 404,
       "'all' is not paused; nothing is"},
      {"/api/v1/pauses/resume", R"({"scope": "all"})", "Bearer tok-olivia", 400, "reason"},
  };
  for (const Case& c : cases) {
    ApiResponse r = Post(c.path, c.body, c.auth);
    EXPECT_EQ(r.status, c.status) << c.body << " -> " << r.body;
    const json body = json::parse(r.body, nullptr, false);
    ASSERT_TRUE(body.is_object() && body.contains("error")) << r.body;
    EXPECT_NE(body["error"]["message"].get<std::string>().find(c.says), std::string::npos)
        << c.body << " -> " << r.body;
  }
  EXPECT_EQ(Digest(), before);
  ApiRequest list;
  list.method = "GET";
  list.target = "/api/v1/pauses";
  list.headers["authorization"] = "Bearer tok-viewer";
  ApiResponse listed = api_->Handle(list);
  ASSERT_EQ(listed.status, 200) << listed.body;
  EXPECT_EQ(json::parse(listed.body)["pauses"], json::array());
}

}  // namespace
}  // namespace icewarden::testing
