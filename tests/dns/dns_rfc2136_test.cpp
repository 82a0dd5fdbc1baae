// dns.rfc2136 and verify.dns against a real BIND 9 started by the test: TSIG-signed
// updates with both algorithms, deletes, refusals, compensation, and answers read back
// with ldns (actions/dns_client.h), not through the action under test.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>

#include "actions/action_kinds.h"
#include "actions/dns_client.h"
#include "tests/integration/actions/bind_server.h"
#include "tests/unit/actions/action_test_support.h"

namespace icewarden::testing {
namespace {

using namespace std::chrono_literals;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;
using json = nlohmann::json;
using Outcome = ActionResult::Outcome;

// Each test works on its own names, so one server serves the whole suite.
constexpr const char* kZoneRecords = R"(catalog-a IN A 10.0.0.7
catalog-b IN A 10.0.0.8
svc1      IN CNAME catalog-a.lab.test.
svc2      IN CNAME catalog-a.lab.test.
svc3      IN CNAME catalog-a.lab.test.
svc4      IN CNAME catalog-a.lab.test.
svc5      IN CNAME catalog-a.lab.test.
svc6      IN CNAME catalog-a.lab.test.
fenced1   IN CNAME catalog-a.lab.test.
fenced2   IN CNAME catalog-a.lab.test.
fenced3   IN CNAME catalog-a.lab.test.
fenced4   IN CNAME catalog-a.lab.test.
fenced5   IN CNAME catalog-a.lab.test.
gone      IN A 10.0.0.9
gone      IN A 10.0.0.10
multi     IN A 10.2.0.1
multi     IN A 10.2.0.2
)";

class DnsRfc2136Test : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (access(kNamedBinary, X_OK) != 0) return;
    bind_ = new BindServer(kZoneRecords);
    serving_ = bind_->WaitUntilServing(20s);
  }
  static void TearDownTestSuite() {
    delete bind_;
    bind_ = nullptr;
  }
  void SetUp() override {
    if (!bind_)
      GTEST_SKIP() << kNamedBinary << " is not installed (scripts/setup.sh installs bind9)";
    ASSERT_TRUE(serving_) << "named did not answer on " << bind_->server();
    ActionRegistry* r = &registry_;
    ASSERT_TRUE(registerDnsActions(*r, TestActionEnv()).ok());
    update_ = registry_.FindMutable("dns.rfc2136");
    verify_ = registry_.FindMutable("verify.dns");
  }

  static json Update(const json& records, const BindKey& key = kKey256) {
    return {{"server", bind_->server()}, {"zone", "lab.test"},
            {"tsig_key_name", key.name}, {"tsig_algorithm", key.algorithm},
            {"tsig_secret", key.secret}, {"records", records}};
  }

  ActionResult Run(Action* a, const json& params) {
    EXPECT_TRUE(a->Validate(params).empty()) << params.dump();
    return a->Run(params, TestContext(10s));
  }

  // A fenced change of one CNAME.
  static json FencedCname(const std::string& name, const std::string& target,
                          const std::string& fence) {
    json params = Update(json::array({{{"name", name}, {"type", "CNAME"}, {"value", target}}}));
    params["fence_record"] = fence;
    return params;
  }

  // A step of `failover_id` as the executor runs it: captured before its first attempt.
  ActionContext Captured(const json& params, const std::string& failover_id) {
    ActionContext ctx = TestContext(10s);
    ctx.failover_id = failover_id;
    ctx.step_id = "point-writers";
    auto captured = update_->Capture(params, ctx);
    EXPECT_TRUE(captured.ok()) << captured.status().ToString();
    if (captured.ok()) ctx.before_json = *captured;
    return ctx;
  }

  // What the server answers, read with ldns.
  static std::vector<std::string> Values(const std::string& name, DnsType type) {
    DnsLookup got = QueryRRset(*ParseDnsServer(bind_->server(), nullptr), name, type, 2s);
    EXPECT_TRUE(got.ok) << got.error;
    return got.rrset.values;
  }

  static BindServer* bind_;
  static bool serving_;
  ActionRegistry registry_;
  Action* update_ = nullptr;
  Action* verify_ = nullptr;
};
BindServer* DnsRfc2136Test::bind_ = nullptr;
bool DnsRfc2136Test::serving_ = false;

TEST_F(DnsRfc2136Test, ReplacesACnameAndRecordsThePreviousOne) {
  auto r =
      Run(update_, Update(json::array(
                       {{{"name", "svc1"}, {"type", "CNAME"}, {"value", "catalog-b.lab.test"}}})));
  ASSERT_EQ(r.outcome, Outcome::kSucceeded) << r.reason;
  EXPECT_EQ(r.reason, "UPDATE of zone lab.test. at " + bind_->server() +
                          " applied: replace svc1.lab.test. CNAME catalog-b.lab.test. ttl 60");
  EXPECT_THAT(Values("svc1.lab.test.", DnsType::kCNAME), ElementsAre("catalog-b.lab.test."));
  json detail = json::parse(r.detail_json);
  EXPECT_EQ(detail["previous"], json::array({{{"name", "svc1.lab.test."},
                                              {"type", "CNAME"},
                                              {"ttl", 60},
                                              {"values", {"catalog-a.lab.test."}}}}));
  EXPECT_THAT(r.reason + r.detail_json, Not(HasSubstr(kKey256.secret)));
}

TEST_F(DnsRfc2136Test, AddsAAaaaAndTxtRecords) {
  auto r = Run(
      update_,
      Update(json::array({
          {{"name", "new1"}, {"type", "A"}, {"value", "10.1.0.1"}, {"op", "add"}},
          {{"name", "new1"}, {"type", "A"}, {"value", "10.1.0.2"}, {"op", "add"}},
          {{"name", "new1.lab.test."},
           {"type", "AAAA"},
           {"value", "2001:DB8::1"},
           {"op", "add"},
           {"ttl", 120}},
          {{"name", "new1"}, {"type", "TXT"}, {"value", "owner=us-west \"quoted\""}, {"op", "add"}},
      })));
  ASSERT_EQ(r.outcome, Outcome::kSucceeded) << r.reason;
  EXPECT_THAT(Values("new1.lab.test.", DnsType::kA), ElementsAre("10.1.0.1", "10.1.0.2"));
  EXPECT_THAT(Values("new1.lab.test.", DnsType::kAAAA), ElementsAre("2001:db8::1"));
  EXPECT_THAT(Values("new1.lab.test.", DnsType::kTXT), ElementsAre("owner=us-west \"quoted\""));
  // Adding what is already there changes nothing and still succeeds.
  r = Run(update_, Update(json::array(
                       {{{"name", "new1"}, {"type", "A"}, {"value", "10.1.0.1"}, {"op", "add"}}})));
  EXPECT_EQ(r.outcome, Outcome::kSucceeded) << r.reason;
  EXPECT_THAT(Values("new1.lab.test.", DnsType::kA), ElementsAre("10.1.0.1", "10.1.0.2"));
}

TEST_F(DnsRfc2136Test, DeletesAnRRsetAndOneRecordOfAnother) {
  auto r =
      Run(update_, Update(json::array({
                       {{"name", "gone"}, {"type", "A"}, {"op", "delete"}},
                       {{"name", "multi"}, {"type", "A"}, {"value", "10.2.0.1"}, {"op", "delete"}},
                   })));
  ASSERT_EQ(r.outcome, Outcome::kSucceeded) << r.reason;
  EXPECT_THAT(Values("gone.lab.test.", DnsType::kA), IsEmpty());
  EXPECT_THAT(Values("multi.lab.test.", DnsType::kA), ElementsAre("10.2.0.2"));
  // Deleting again is a no-op: the step is idempotent.
  r = Run(update_, Update(json::array({{{"name", "gone"}, {"type", "A"}, {"op", "delete"}}})));
  EXPECT_EQ(r.outcome, Outcome::kSucceeded) << r.reason;
}

TEST_F(DnsRfc2136Test, SignsWithHmacSha512) {
  auto r = Run(
      update_,
      Update(json::array({{{"name", "svc2"}, {"type", "CNAME"}, {"value", "catalog-b.lab.test."}}}),
             kKey512));
  ASSERT_EQ(r.outcome, Outcome::kSucceeded) << r.reason;
  EXPECT_THAT(Values("svc2.lab.test.", DnsType::kCNAME), ElementsAre("catalog-b.lab.test."));
}

TEST_F(DnsRfc2136Test, WrongSecretIsRefusedWithBadsigAndChangesNothing) {
  BindKey wrong = kKey256;
  wrong.secret = "d3Jvbmcta2V5LW1hdGVyaWFsLTAxMjM0NTY3ODlhYmM=";
  auto r = Run(
      update_,
      Update(json::array({{{"name", "svc3"}, {"type", "CNAME"}, {"value", "catalog-b.lab.test."}}}),
             wrong));
  EXPECT_EQ(r.outcome, Outcome::kFailed);
  EXPECT_EQ(r.reason, "UPDATE of zone lab.test. at " + bind_->server() +
                          " refused: NOTAUTH (TSIG BADSIG) (key icewarden-256, hmac-sha256)");
  EXPECT_THAT(r.reason + r.detail_json, Not(HasSubstr(wrong.secret)));
  EXPECT_THAT(Values("svc3.lab.test.", DnsType::kCNAME), ElementsAre("catalog-a.lab.test."));
}

TEST_F(DnsRfc2136Test, UnknownKeyIsRefusedWithBadkey) {
  BindKey unknown = kKey256;
  unknown.name = "nobody";
  auto r = Run(
      update_,
      Update(json::array({{{"name", "svc3"}, {"type", "CNAME"}, {"value", "catalog-b.lab.test."}}}),
             unknown));
  EXPECT_EQ(r.outcome, Outcome::kFailed);
  EXPECT_THAT(r.reason, HasSubstr("refused: NOTAUTH (TSIG BADKEY)"));
  EXPECT_THAT(Values("svc3.lab.test.", DnsType::kCNAME), ElementsAre("catalog-a.lab.test."));
}

TEST_F(DnsRfc2136Test, CompensateRestoresThePreviousCnameAndRemovesWhatWasAdded) {
  const json params = Update(json::array({
      {{"name", "svc4"}, {"type", "CNAME"}, {"value", "catalog-b.lab.test."}},
      {{"name", "added4"}, {"type", "TXT"}, {"value", "temporary"}, {"op", "add"}},
  }));
  auto r = Run(update_, params);
  ASSERT_EQ(r.outcome, Outcome::kSucceeded) << r.reason;
  ASSERT_THAT(Values("svc4.lab.test.", DnsType::kCNAME), ElementsAre("catalog-b.lab.test."));
  ASSERT_THAT(Values("added4.lab.test.", DnsType::kTXT), ElementsAre("temporary"));

  auto undo = update_->Compensate(params, json::parse(r.detail_json), TestContext(10s));
  ASSERT_EQ(undo.outcome, Outcome::kSucceeded) << undo.reason;
  EXPECT_EQ(undo.reason, "restoring UPDATE of zone lab.test. at " + bind_->server() +
                             " applied: replace svc4.lab.test. CNAME catalog-a.lab.test. ttl 60; "
                             "delete added4.lab.test. TXT");
  EXPECT_THAT(Values("svc4.lab.test.", DnsType::kCNAME), ElementsAre("catalog-a.lab.test."));
  EXPECT_THAT(Values("added4.lab.test.", DnsType::kTXT), IsEmpty());
}

TEST_F(DnsRfc2136Test, ARunRepeatedAfterACrashStillUndoesToTheStateBeforeTheStep) {
  // The executor's order: Capture before the first attempt (journaled), then Run with it. The
  // first Run applies the update and the process dies before its result is journaled; the
  // re-run finds the update already there, yet its "previous" is still catalog-a.
  const json params = Update(
      json::array({{{"name", "svc6"}, {"type", "CNAME"}, {"value", "catalog-b.lab.test."}}}));
  auto captured = update_->Capture(params, TestContext(10s));
  ASSERT_TRUE(captured.ok()) << captured.status().ToString();
  ActionContext ctx = TestContext(10s);
  ctx.before_json = *captured;
  ASSERT_EQ(update_->Run(params, ctx).outcome, Outcome::kSucceeded);
  ASSERT_THAT(Values("svc6.lab.test.", DnsType::kCNAME), ElementsAre("catalog-b.lab.test."));

  auto rerun = update_->Run(params, ctx);
  ASSERT_EQ(rerun.outcome, Outcome::kSucceeded) << rerun.reason;
  json previous = json::parse(rerun.detail_json)["previous"];
  ASSERT_EQ(previous.size(), 1u) << previous;
  EXPECT_EQ(previous[0]["values"], json::array({"catalog-a.lab.test."}));

  auto undo = update_->Compensate(params, json::parse(rerun.detail_json), TestContext(10s));
  ASSERT_EQ(undo.outcome, Outcome::kSucceeded) << undo.reason;
  EXPECT_THAT(Values("svc6.lab.test.", DnsType::kCNAME), ElementsAre("catalog-a.lab.test."));
}

// Issue 12's DNS fencing: with fence_record, BIND itself refuses an UPDATE from anyone who
// read the zone before another fenced change landed.
TEST_F(DnsRfc2136Test, AFencedUpdateRaisesTheFenceEpochInTheSameUpdate) {
  const json params = FencedCname("fenced1", "catalog-b.lab.test.", "_fence1");
  ActionContext first = Captured(params, "fo-1");
  auto r = update_->Run(params, first);
  ASSERT_EQ(r.outcome, Outcome::kSucceeded) << r.reason;
  EXPECT_THAT(Values("fenced1.lab.test.", DnsType::kCNAME), ElementsAre("catalog-b.lab.test."));
  EXPECT_THAT(Values("_fence1.lab.test.", DnsType::kTXT),
              ElementsAre("icewarden epoch=1 by=fo-1/point-writers"));

  // The next fenced change starts from there.
  const json back = FencedCname("fenced1", "catalog-a.lab.test.", "_fence1");
  ASSERT_EQ(update_->Run(back, Captured(back, "fo-2")).outcome, Outcome::kSucceeded);
  EXPECT_THAT(Values("_fence1.lab.test.", DnsType::kTXT),
              ElementsAre("icewarden epoch=2 by=fo-2/point-writers"));
  EXPECT_THAT(Values("fenced1.lab.test.", DnsType::kCNAME), ElementsAre("catalog-a.lab.test."));
}

TEST_F(DnsRfc2136Test, AStaleFencedUpdateIsRefusedByTheServerAndChangesNothing) {
  // The stale writer (a deposed leader) read the zone first; a newer one changed it since.
  const json stale_params = FencedCname("fenced2", "catalog-b.lab.test.", "_fence2");
  ActionContext stale = Captured(stale_params, "fo-old");
  const json newer = FencedCname("fenced2", "catalog-a.lab.test.", "_fence2");
  ASSERT_EQ(update_->Run(newer, Captured(newer, "fo-new")).outcome, Outcome::kSucceeded);
  ASSERT_THAT(Values("_fence2.lab.test.", DnsType::kTXT),
              ElementsAre("icewarden epoch=1 by=fo-new/point-writers"));

  auto refused = update_->Run(stale_params, stale);
  EXPECT_EQ(refused.outcome, Outcome::kFailed);
  EXPECT_THAT(refused.reason, HasSubstr("refused by the server (YXRRSET)"));
  EXPECT_THAT(refused.reason, HasSubstr("fence record _fence2.lab.test. TXT is icewarden epoch=1 "
                                        "by=fo-new/point-writers, not nothing as read before"));
  EXPECT_THAT(Values("fenced2.lab.test.", DnsType::kCNAME), ElementsAre("catalog-a.lab.test."));
  EXPECT_THAT(Values("_fence2.lab.test.", DnsType::kTXT),
              ElementsAre("icewarden epoch=1 by=fo-new/point-writers"));
}

TEST_F(DnsRfc2136Test, AFencedRetryAfterItLandedIsVerifiedAndCompensationIsFencedToo) {
  const json params = FencedCname("fenced3", "catalog-b.lab.test.", "_fence3");
  ActionContext ctx = Captured(params, "fo-3");
  ASSERT_EQ(update_->Run(params, ctx).outcome, Outcome::kSucceeded);
  // The answer was lost; the executor runs the step again with the same capture.
  auto retry = update_->Run(params, ctx);
  ASSERT_EQ(retry.outcome, Outcome::kSucceeded) << retry.reason;
  EXPECT_EQ(json::parse(retry.detail_json).value("landed_before", false), true);
  EXPECT_THAT(Values("_fence3.lab.test.", DnsType::kTXT),
              ElementsAre("icewarden epoch=1 by=fo-3/point-writers"));

  const json detail = json::parse(retry.detail_json);
  auto undo = update_->Compensate(params, detail, ctx);
  ASSERT_EQ(undo.outcome, Outcome::kSucceeded) << undo.reason;
  EXPECT_THAT(Values("fenced3.lab.test.", DnsType::kCNAME), ElementsAre("catalog-a.lab.test."));
  EXPECT_THAT(Values("_fence3.lab.test.", DnsType::kTXT),
              ElementsAre("icewarden epoch=2 by=fo-3/point-writers/compensate"));
  // Its retry is verified too; once another fenced change lands, the same retry is refused.
  ASSERT_EQ(update_->Compensate(params, detail, ctx).outcome, Outcome::kSucceeded);
  ASSERT_EQ(update_->Run(params, Captured(params, "fo-4")).outcome, Outcome::kSucceeded);
  auto stale_undo = update_->Compensate(params, detail, ctx);
  EXPECT_EQ(stale_undo.outcome, Outcome::kFailed) << stale_undo.reason;
  EXPECT_THAT(stale_undo.reason, HasSubstr("another writer changed the zone"));
  EXPECT_THAT(Values("fenced3.lab.test.", DnsType::kCNAME), ElementsAre("catalog-b.lab.test."));
  EXPECT_THAT(Values("_fence3.lab.test.", DnsType::kTXT),
              ElementsAre("icewarden epoch=3 by=fo-4/point-writers"));
}

TEST_F(DnsRfc2136Test, CompensatingAFencedUpdateThatNeverLandedChangesNothing) {
  // The run's UPDATE got no answer and was never applied: the fence still holds what the step
  // read, so there is nothing of the run's to undo, and nothing is sent.
  const json params = FencedCname("fenced4", "catalog-b.lab.test.", "_fence4");
  ActionContext ctx = Captured(params, "fo-5");
  const json captured = json::parse(ctx.before_json);
  json lost = {{"previous", captured["previous"]},
               {"fence",
                {{"name", "_fence4.lab.test."},
                 {"was", captured["fence"]["values"]},
                 {"now", "icewarden epoch=1 by=fo-5/point-writers"}}}};
  auto undo = update_->Compensate(params, lost, ctx);
  ASSERT_EQ(undo.outcome, Outcome::kSucceeded) << undo.reason;
  EXPECT_THAT(undo.reason, HasSubstr("nothing to restore: the fenced UPDATE never landed"));
  EXPECT_THAT(Values("fenced4.lab.test.", DnsType::kCNAME), ElementsAre("catalog-a.lab.test."));
  EXPECT_THAT(Values("_fence4.lab.test.", DnsType::kTXT), IsEmpty());

  lost["fence"].erase("now");  // a detail that cannot say what the run wrote
  auto malformed = update_->Compensate(params, lost, ctx);
  EXPECT_EQ(malformed.outcome, Outcome::kFailed);
  EXPECT_THAT(malformed.reason, HasSubstr("the run's detail has no fence values"));
  EXPECT_THAT(Values("_fence4.lab.test.", DnsType::kTXT), IsEmpty());
}

TEST_F(DnsRfc2136Test, AFenceRecordThatIsNotOursIsStillHeldExactlyAndRaisedFromOne) {
  // Someone else's TXT at the fence name, with an epoch that cannot be raised: the change
  // still requires exactly that value, and starts the count again.
  const json params = FencedCname("fenced5", "catalog-b.lab.test.", "_fence5");
  const json theirs = Update(json::array(
      {{{"name", "_fence5"}, {"type", "TXT"}, {"value", "epoch=18446744073709551615 by=them"}}}));
  ASSERT_EQ(Run(update_, theirs).outcome, Outcome::kSucceeded);
  auto r = update_->Run(params, Captured(params, "fo-6"));
  ASSERT_EQ(r.outcome, Outcome::kSucceeded) << r.reason;
  EXPECT_THAT(Values("_fence5.lab.test.", DnsType::kTXT),
              ElementsAre("icewarden epoch=1 by=fo-6/point-writers"));
}

TEST_F(DnsRfc2136Test, AnUpdateLargerThan512BytesGoesOverTcp) {
  // Thirty TXT values of 60 characters: an UPDATE of about 2.5 KB, which classic DNS over UDP
  // does not carry; a small one stays on UDP.
  json records = json::array();
  std::vector<std::string> values;
  for (int i = 0; i < 30; ++i) {
    std::string v = "value-" + std::to_string(100 + i) + std::string(50, 'x');
    values.push_back(v);
    records.push_back({{"name", "big"}, {"type", "TXT"}, {"value", v}, {"op", "add"}});
  }
  auto big = Run(update_, Update(records));
  ASSERT_EQ(big.outcome, Outcome::kSucceeded) << big.reason;
  EXPECT_EQ(json::parse(big.detail_json)["transport"], "tcp");
  std::sort(values.begin(), values.end());
  EXPECT_EQ(Values("big.lab.test.", DnsType::kTXT), values);

  auto small =
      Run(update_, Update(json::array({{{"name", "small"}, {"type", "TXT"}, {"value", "one"}}})));
  ASSERT_EQ(small.outcome, Outcome::kSucceeded) << small.reason;
  EXPECT_EQ(json::parse(small.detail_json)["transport"], "udp");
}

TEST_F(DnsRfc2136Test, CaptureOfAnUnreachableServerFailsAndChangesNothing) {
  json params =
      Update(json::array({{{"name", "svc5"}, {"type", "CNAME"}, {"value", "x.lab.test."}}}));
  params["server"] = "127.0.0.1:" + std::to_string(FreeTcpUdpPort());
  auto captured = update_->Capture(params, TestContext(800ms));
  ASSERT_FALSE(captured.ok());
  EXPECT_THAT(captured.status().message(),
              HasSubstr("could not read the current records before updating"));
}

TEST_F(DnsRfc2136Test, DeadServerFailsBeforeAnythingIsSent) {
  json params =
      Update(json::array({{{"name", "svc5"}, {"type", "CNAME"}, {"value", "x.lab.test."}}}));
  params["server"] = "127.0.0.1:" + std::to_string(FreeTcpUdpPort());
  const auto started = std::chrono::steady_clock::now();
  auto r = update_->Run(params, TestContext(800ms));
  EXPECT_LT(std::chrono::steady_clock::now() - started, 2s);
  EXPECT_EQ(r.outcome, Outcome::kFailed);
  EXPECT_THAT(r.reason, HasSubstr("could not read the current records before updating"));
}

TEST_F(DnsRfc2136Test, VerifyDnsPassesWhenTheAnswerMatches) {
  auto r = Run(verify_, {{"server", bind_->server()},
                         {"name", "svc5.lab.test"},
                         {"type", "CNAME"},
                         {"expect", "Catalog-A.lab.test"}});
  EXPECT_EQ(r.outcome, Outcome::kSucceeded) << r.reason;
  EXPECT_EQ(r.reason, "svc5.lab.test. CNAME is catalog-a.lab.test.");
  r = Run(verify_, {{"server", bind_->server()},
                    {"name", "svc5.lab.test"},
                    {"type", "A"},
                    {"expect", json::array({"10.0.0.7"})}});
  EXPECT_EQ(r.outcome, Outcome::kSucceeded) << r.reason;
}

TEST_F(DnsRfc2136Test, VerifyDnsFailsOnAnotherAnswerOrNone) {
  auto r = Run(verify_, {{"server", bind_->server()},
                         {"name", "svc5.lab.test"},
                         {"type", "CNAME"},
                         {"expect", "catalog-b.lab.test."}});
  EXPECT_EQ(r.outcome, Outcome::kFailed);
  EXPECT_EQ(r.reason, "svc5.lab.test. CNAME is catalog-a.lab.test., expected catalog-b.lab.test.");
  r = Run(verify_, {{"server", bind_->server()},
                    {"name", "missing.lab.test"},
                    {"type", "A"},
                    {"expect", "10.0.0.1"}});
  EXPECT_EQ(r.outcome, Outcome::kFailed);
  EXPECT_EQ(r.reason, "missing.lab.test. A has no records (NXDOMAIN), expected 10.0.0.1");
}

}  // namespace
}  // namespace icewarden::testing
