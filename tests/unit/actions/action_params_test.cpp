// Validate and Plan of the http, alert, dns and control action kinds, and their
// registration: every problem is reported with the exact JSON path a runbook author sees.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/unit/actions/action_test_support.h"

namespace icewarden::testing {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;
using json = nlohmann::json;

class ActionParamsTest : public ::testing::Test {
 protected:
  void SetUp() override { RegisterTestedFamilies(registry_, TestActionEnv()); }

  const Action& Kind(const std::string& kind) {
    const Action* a = registry_.Find(kind);
    EXPECT_NE(a, nullptr) << kind;
    return *a;
  }
  std::vector<std::string> Paths(const std::string& kind, const json& params) {
    return ErrorPaths(Kind(kind).Validate(params));
  }
  std::vector<std::string> Lines(const std::string& kind, const json& params) {
    return ErrorLines(Kind(kind).Validate(params));
  }

  ActionRegistry registry_;
};

json DnsBase() {
  return {{"server", "127.0.0.1:5300"},
          {"zone", "lab.test"},
          {"tsig_key_name", "icewarden-key"},
          {"tsig_secret", "c2VjcmV0LXNlY3JldC1zZWNyZXQ="},
          {"records",
           json::array({{{"name", "www"}, {"type", "CNAME"}, {"value", "catalog-b.lab.test"}}})}};
}

TEST_F(ActionParamsTest, RegistersEachFamilyOnceAndRefusesASecondRegistration) {
  EXPECT_THAT(registry_.Kinds(), ElementsAre("alert.alertmanager", "alert.webhook", "dns.rfc2136",
                                             "fence.http", "http.request", "verify.dns", "wait"));
  EXPECT_FALSE(registerHttpActions(registry_, TestActionEnv()).ok());
  EXPECT_FALSE(registerDnsActions(registry_, TestActionEnv()).ok());
}

TEST_F(ActionParamsTest, IdempotencyAndCompensationPerKind) {
  EXPECT_FALSE(Kind("http.request").idempotent());  // POST by default
  EXPECT_TRUE(Kind("fence.http").idempotent());
  EXPECT_TRUE(Kind("alert.webhook").idempotent());
  EXPECT_TRUE(Kind("alert.alertmanager").idempotent());
  EXPECT_TRUE(Kind("dns.rfc2136").idempotent());
  EXPECT_TRUE(Kind("verify.dns").idempotent());
  EXPECT_TRUE(Kind("wait").idempotent());
  EXPECT_TRUE(Kind("dns.rfc2136").has_compensation());
  EXPECT_FALSE(Kind("http.request").has_compensation());
}

TEST_F(ActionParamsTest, HttpRequestReportsEveryBadParamWithItsPath) {
  EXPECT_THAT(Lines("http.request", json::object()), ElementsAre("url: missing required param"));
  EXPECT_THAT(Lines("http.request", json::array()),
              ElementsAre(": expected a mapping, got a list"));
  EXPECT_THAT(
      Paths("http.request", {{"method", "FETCH"},
                             {"url", 5},
                             {"headers", {{"A", 1}, {"B", "ok"}}},
                             {"body", 3},
                             {"expect_status", json::array({200, "x", 700})}}),
      ElementsAre("method", "url", "headers.A", "body", "expect_status[1]", "expect_status[2]"));
  EXPECT_THAT(Lines("http.request", {{"url", "ftp://x/y"}}),
              ElementsAre("url: expected an http:// or https:// URL, got scheme 'ftp'"));
  EXPECT_THAT(
      Lines("http.request", {{"url", "http://a"}, {"bodyy", "x"}}),
      ElementsAre("bodyy: unknown param; known: method, url, headers, body, expect_status"));
  EXPECT_THAT(Lines("http.request", {{"url", "http://a"}, {"method", "GET"}, {"body", "x"}}),
              ElementsAre("body: a GET request cannot have a body"));
  EXPECT_THAT(Lines("http.request", {{"url", "https://user:pw@a/"}}),
              ElementsAre("url: credentials in the URL are not supported; put them in headers"));
  EXPECT_TRUE(Kind("http.request")
                  .Validate({{"url", "https://a:8443/x?y=1"},
                             {"method", "PUT"},
                             {"body", {{"k", "v"}}},
                             {"expect_status", 204}})
                  .empty());
}

TEST_F(ActionParamsTest, FenceHttpSharesTheHttpParams) {
  EXPECT_THAT(Paths("fence.http", {{"url", "http://a"}, {"expect_status", "2xx"}}),
              ElementsAre("expect_status"));
  EXPECT_THAT(Lines("fence.http", json::object()), ElementsAre("url: missing required param"));
}

TEST_F(ActionParamsTest, AlertWebhookChecksFormatDependentParams) {
  EXPECT_THAT(Lines("alert.webhook", {{"url", "http://a"}, {"format", "pagerduty"}}),
              ElementsAre("routing_key: missing required param"));
  EXPECT_THAT(Lines("alert.webhook", {{"url", "http://a"}, {"routing_key", "k"}}),
              ElementsAre("routing_key: only used with format: pagerduty"));
  EXPECT_THAT(Paths("alert.webhook", {{"url", "http://a"},
                                      {"format", "teams"},
                                      {"severity", "fatal"},
                                      {"details", "x"},
                                      {"hmac_secret", ""},
                                      {"headers", {{"X", true}}}}),
              ElementsAre("format", "severity", "details", "headers.X", "hmac_secret"));
}

TEST_F(ActionParamsTest, AlertmanagerChecksLabelsAndDurations) {
  EXPECT_THAT(Lines("alert.alertmanager", {{"url", "http://a"}, {"labels", {{"bad-name", "x"}}}}),
              ElementsAre("labels.bad-name: not a valid Prometheus label name (letters, digits and "
                          "_, not starting with a digit)"));
  EXPECT_THAT(Paths("alert.alertmanager",
                    {{"labels", {{"team", 3}}}, {"annotations", "x"}, {"ends_in", "soon"}}),
              ElementsAre("url", "labels.team", "annotations", "ends_in"));
}

TEST_F(ActionParamsTest, WaitNeedsADurationOrACondition) {
  EXPECT_THAT(Lines("wait", json::object()), ElementsAre("duration: missing required param"));
  EXPECT_THAT(Lines("wait", {{"duration", "5 minutes"}}),
              ElementsAre("duration: expected a duration such as 250ms, 30s, 2m or 1h30m, at "
                          "most 720h, got '5 minutes'"));
  EXPECT_THAT(
      Paths("wait", {{"until", {{"url", "x"}, {"expect_status", 99}}}, {"poll_interval", 0}}),
      ElementsAre("until.url", "until.expect_status", "poll_interval"));
  EXPECT_THAT(Lines("wait", {{"duration", "1s"}, {"poll_interval", "1s"}}),
              ElementsAre("poll_interval: only used with until"));
  EXPECT_TRUE(Kind("wait").Validate({{"duration", 30}}).empty());
}

TEST_F(ActionParamsTest, DurationsAndPollIntervalsAreBounded) {
  // Deadlines are "now + d" on the steady clock: a duration near 2^63 ns wrapped and made a
  // long wait succeed at once. Thirty days is the most any param may name.
  EXPECT_TRUE(Kind("wait").Validate({{"duration", "720h"}}).empty());
  EXPECT_THAT(Lines("wait", {{"duration", "721h"}}),
              ElementsAre("duration: expected a duration such as 250ms, 30s, 2m or 1h30m, at "
                          "most 720h, got '721h'"));
  EXPECT_THAT(Lines("wait", {{"duration", "999999999d999999999d"}}), ::testing::SizeIs(1));
  EXPECT_THAT(Lines("wait", {{"duration", 1'000'000'000'000LL}}),
              ElementsAre("duration: expected seconds, at most 720h, got 1000000000000"));
  EXPECT_THAT(
      Lines("wait", {{"until", {{"url", "http://127.0.0.1:1/"}}}, {"poll_interval", "1ms"}}),
      ElementsAre("poll_interval: must be at least 50ms"));
}

TEST_F(ActionParamsTest, VerifyDnsChecksServerNameTypeAndValues) {
  EXPECT_THAT(
      Paths("verify.dns",
            {{"server", "dns.example.com"}, {"name", "www..x"}, {"type", "MX"}, {"expect", 3}}),
      ElementsAre("server", "name", "type", "expect"));
  EXPECT_THAT(Lines("verify.dns", {{"server", "127.0.0.1:53"},
                                   {"name", "a.b"},
                                   {"type", "A"},
                                   {"expect", json::array({"10.0.0.1", "nope"})}}),
              ElementsAre("expect[1]: expected an IPv4 address, got 'nope'"));
  EXPECT_THAT(
      Lines("verify.dns",
            {{"server", "127.0.0.1:0"}, {"name", "a.b"}, {"type", "A"}, {"expect", "10.0.0.1"}}),
      ElementsAre("server: port must be a number from 1 to 65535"));
}

TEST_F(ActionParamsTest, DnsRfc2136ReportsMissingParams) {
  EXPECT_THAT(Paths("dns.rfc2136", json::object()),
              ElementsAre("server", "zone", "tsig_key_name", "tsig_secret", "records"));
  EXPECT_TRUE(Kind("dns.rfc2136").Validate(DnsBase()).empty());
}

TEST_F(ActionParamsTest, DnsRfc2136ReportsEachRecordProblemAtItsIndex) {
  json p = DnsBase();
  p["records"] = json::array({
      {{"name", "www"}, {"type", "MX"}, {"value", "x"}},
      {{"type", "A"}, {"value", "1.2.3.4"}},
      {{"name", "a"}, {"type", "A"}, {"value", "999.1.1.1"}, {"ttl", "60"}},
      {{"name", "b.other."}, {"type", "TXT"}, {"value", "x"}},
      {{"name", "c"}, {"type", "CNAME"}, {"op", "remove"}},
      "www",
  });
  EXPECT_THAT(Lines("dns.rfc2136", p),
              ElementsAre("records[0].type: expected one of CNAME, A, AAAA, TXT, got 'MX'",
                          "records[1].name: missing required param",
                          "records[2].value: expected an IPv4 address, got '999.1.1.1'",
                          "records[2].ttl: expected an integer, got a string",
                          "records[3].name: b.other. is outside zone lab.test.",
                          "records[4].op: expected one of add, replace, delete, got 'remove'",
                          "records[4].value: missing required param",
                          "records[5]: expected a mapping, got a string"));
}

TEST_F(ActionParamsTest, DnsRfc2136FenceRecordIsAValidNameInTheZoneThatNoRecordChanges) {
  json p = DnsBase();
  p["fence_record"] = "_icewarden.writer";
  EXPECT_TRUE(Kind("dns.rfc2136").Validate(p).empty());
  p["fence_record"] = "fence.other.";
  EXPECT_THAT(Lines("dns.rfc2136", p),
              ElementsAre("fence_record: fence.other. is outside zone lab.test."));
  p["fence_record"] = "bad..name";
  EXPECT_THAT(Lines("dns.rfc2136", p),
              ElementsAre("fence_record: not a valid DNS name: 'bad..name'"));
  p["fence_record"] = "_fence";
  p["records"] = json::array({{{"name", "_fence"}, {"type", "TXT"}, {"value", "x"}}});
  EXPECT_THAT(Lines("dns.rfc2136", p),
              ElementsAre("records[0]: changes the fence record _fence.lab.test., which the step "
                          "itself sets"));
}

TEST_F(ActionParamsTest, DnsRfc2136RefusesConflictingChangesToOneRRset) {
  json p = DnsBase();
  p["records"] = json::array({{{"name", "www"}, {"type", "CNAME"}, {"value", "a.lab.test."}},
                              {{"name", "www.lab.test."}, {"type", "CNAME"}, {"op", "delete"}}});
  EXPECT_THAT(Lines("dns.rfc2136", p),
              ElementsAre("records[1]: conflicts with records[0], which changes the same RRset "
                          "(www.lab.test. CNAME) differently"));
  p["records"] =
      json::array({{{"name", "www"}, {"type", "CNAME"}, {"value", "a.lab.test."}},
                   {{"name", "www"}, {"type", "CNAME"}, {"value", "b.lab.test."}, {"op", "add"}}});
  EXPECT_THAT(Paths("dns.rfc2136", p), ElementsAre("records[1].value"));
  p["records"] = json::array({{{"name", "a"}, {"type", "A"}, {"value", "10.0.0.1"}},
                              {{"name", "a"}, {"type", "A"}, {"value", "10.0.0.2"}, {"ttl", 30}}});
  EXPECT_THAT(Paths("dns.rfc2136", p), ElementsAre("records[1].ttl"));
}

TEST_F(ActionParamsTest, DnsRfc2136NeverEchoesTheSecret) {
  json p = DnsBase();
  p["tsig_secret"] = "not base64 s3cr3t!";
  p["tsig_algorithm"] = "hmac-md5";
  auto errors = Kind("dns.rfc2136").Validate(p);
  EXPECT_THAT(ErrorPaths(errors), ElementsAre("tsig_algorithm", "tsig_secret"));
  for (const auto& e : errors) EXPECT_THAT(e.message, Not(HasSubstr("s3cr3t")));
}

TEST_F(ActionParamsTest, PlanLinesSayExactlyWhatRunWouldDo) {
  EXPECT_EQ(Kind("http.request")
                .Plan({{"url", "https://fence.example/revoke?region=us-east"},
                       {"headers", {{"Authorization", "Bearer ***"}}},
                       {"body", {{"region", "us-east"}}}}),
            "HTTP: POST https://fence.example/revoke?region=us-east (JSON body, 20 bytes; headers "
            "Authorization), expecting 2xx; not idempotent");
  EXPECT_EQ(Kind("http.request")
                .Plan({{"url", "http://a/x"},
                       {"method", "DELETE"},
                       {"expect_status", json::array({200, 204, 404})}}),
            "HTTP: DELETE http://a/x, expecting 200, 204 or 404; idempotent by HTTP semantics");
  EXPECT_EQ(Kind("fence.http").Plan({{"url", "http://fence/revoke"}, {"method", "PUT"}}),
            "fence: PUT http://fence/revoke, expecting 2xx");
  EXPECT_EQ(Kind("alert.webhook")
                .Plan({{"url", "https://hooks.slack.com/services/T0/B0/secret"},
                       {"format", "slack"},
                       {"summary", "failing over db"},
                       {"hmac_secret", "***"}}),
            "send a critical slack alert to https://hooks.slack.com:443: \"failing over db\", "
            "signed with HMAC-SHA256");
  EXPECT_EQ(Kind("alert.alertmanager")
                .Plan({{"url", "http://127.0.0.1:9093/"},
                       {"labels", {{"team", "data"}}},
                       {"ends_in", "90m"}}),
            "raise Alertmanager alert {alertname=\"IcewardenFailover\", team=\"data\", "
            "failover_id} at http://127.0.0.1:9093/api/v2/alerts, resolving after 90m");
  EXPECT_EQ(Kind("wait").Plan({{"duration", "1500ms"}}), "wait 1500ms");
  EXPECT_EQ(
      Kind("wait").Plan(
          {{"until", {{"url", "http://a/ready"}}}, {"poll_interval", "2s"}, {"duration", "5m"}}),
      "wait until GET http://a/ready returns 2xx, polling every 2s, for at most 5m");
  EXPECT_EQ(Kind("verify.dns")
                .Plan({{"server", "127.0.0.1:5300"},
                       {"name", "WWW.lab.test"},
                       {"type", "A"},
                       {"expect", json::array({"10.0.0.2", "10.0.0.1"})}}),
            "check that 127.0.0.1:5300 answers www.lab.test. A with exactly 10.0.0.1, 10.0.0.2");
  json p = DnsBase();
  p["records"].push_back({{"name", "old"}, {"type", "A"}, {"op", "delete"}});
  p["records"].push_back({{"name", "_owner.lab.test."},
                          {"type", "TXT"},
                          {"value", "us-west"},
                          {"op", "add"},
                          {"ttl", 30}});
  EXPECT_EQ(
      Kind("dns.rfc2136").Plan(p),
      "RFC 2136 UPDATE of zone lab.test. at 127.0.0.1:5300 signed with TSIG key "
      "icewarden-key (hmac-sha256): replace www.lab.test. CNAME catalog-b.lab.test. ttl 60; "
      "delete old.lab.test. A; add _owner.lab.test. TXT us-west ttl 30; then query to verify");
  EXPECT_THAT(Kind("dns.rfc2136").Plan(p), Not(HasSubstr(p["tsig_secret"].get<std::string>())));
}

}  // namespace
}  // namespace icewarden::testing
