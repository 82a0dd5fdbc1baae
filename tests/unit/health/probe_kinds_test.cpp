// The catalog probe kinds over a scripted transport, and the probe registry.
#include "health/probe_kinds.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "health/catalog_client.h"
#include "tests/fakes/fake_clock.h"
#include "tests/fakes/fake_timers.h"
#include "tests/fakes/fake_transport.h"

namespace icewarden::testing {
namespace {

using namespace std::chrono_literals;

constexpr const char* kBase = "http://catalog.test/api/catalog";
constexpr const char* kConfigUrl = "http://catalog.test/api/catalog/v1/config?warehouse=lake";
constexpr const char* kTableUrl =
    "http://catalog.test/api/catalog/v1/lake-eu/namespaces/ops/tables/canary";
constexpr const char* kConfigBody = R"({"defaults": {}, "overrides": {"prefix": "lake-eu"}})";
constexpr const char* kUuid = "5f1e0c2a-7c3b-4d2e-9a11-0c1d2e3f4a5b";

std::string TableBody(const std::string& uuid = kUuid) {
  return nlohmann::json{{"metadata-location", "s3://lake/ops/canary/metadata/00007.metadata.json"},
                        {"metadata",
                         {{"format-version", 2},
                          {"table-uuid", uuid},
                          {"location", "s3://lake/ops/canary"},
                          {"last-updated-ms", 1780000000000},
                          {"properties", nlohmann::json::object()}}}}
      .dump();
}

class ProbeKindsTest : public ::testing::Test {
 protected:
  ProbeKindsTest()
      : catalog_(Options(), CatalogClientEnv{transport_, clock_, [] { return 7ULL; }}),
        ctx_{timers_, clock_, catalog_, transport_, nullptr} {
    EXPECT_TRUE(registerBuiltinProbes(registry_).ok());
  }

  static CatalogClientOptions Options() {
    CatalogClientOptions o;
    o.base_uri = kBase;
    o.warehouse = "lake";
    return o;
  }

  ProbeSpec Spec(const std::string& kind) {
    ProbeSpec s;
    s.kind = kind;
    s.region = "us-east-1";
    s.table = TableIdent{{"ops"}, "canary"};
    s.allow_writes = true;
    return s;
  }

  std::unique_ptr<Probe> Make(const ProbeSpec& spec) {
    auto p = registry_.Create(spec, ctx_);
    EXPECT_TRUE(p.ok()) << p.status().ToString();
    return p.ok() ? std::move(p).value() : nullptr;
  }

  // Runs one check; the fake transport answers inside Check, timers cover the deadline.
  std::vector<ProbeResult> Check(Probe& p, std::chrono::milliseconds deadline = 2s) {
    std::vector<ProbeResult> got;
    p.Check(deadline, [&got](ProbeResult r) { got.push_back(std::move(r)); });
    timers_.Advance(0ms);
    return got;
  }

  void TearDown() override { EXPECT_EQ(transport_.pending(), 0u) << "expected requests not sent"; }

  FakeClock clock_;
  FakeTimers timers_{&clock_};
  FakeTransport transport_;
  CatalogClient catalog_;
  ProbeContext ctx_;
  ProbeRegistry registry_;
};

TEST_F(ProbeKindsTest, CatalogConfigPassesAndAsksAgainEveryTime) {
  auto p = Make(Spec("catalog_config"));
  transport_.Expect("GET", kConfigUrl, JsonResponse(200, kConfigBody));
  transport_.Expect("GET", kConfigUrl, JsonResponse(200, kConfigBody));
  for (int i = 0; i < 2; ++i) {
    auto r = Check(*p);
    ASSERT_EQ(r.size(), 1u);
    EXPECT_TRUE(r[0].ok) << r[0].detail;
    EXPECT_EQ(r[0].kind, "catalog_config");
  }
  EXPECT_EQ(transport_.requests().size(), 2u) << "no cached config may pass a probe";
  EXPECT_EQ(transport_.deadlines().front(), 2s);
  EXPECT_EQ(timers_.pending(), 0u) << "the deadline timer is cancelled on an answer";
}

TEST_F(ProbeKindsTest, CatalogConfigHttp503Fails) {
  auto p = Make(Spec("catalog_config"));
  transport_.Expect(
      "GET", kConfigUrl,
      JsonResponse(503, R"({"error": {"message": "down", "type": "X", "code": 503}})"));
  auto r = Check(*p);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_FALSE(r[0].ok);
  EXPECT_EQ(r[0].detail, "HTTP 503 from GET /v1/config");
}

TEST_F(ProbeKindsTest, CatalogConfigConnectionRefusedFails) {
  auto p = Make(Spec("catalog_config"));
  transport_.ExpectError("GET", kConfigUrl,
                         Status::Unavailable("connect catalog.test:80: Connection refused"));
  auto r = Check(*p);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_FALSE(r[0].ok);
  EXPECT_EQ(r[0].detail, "connection refused");
}

TEST_F(ProbeKindsTest, CatalogConfigThatNeverAnswersFailsAtTheDeadlineOnce) {
  auto p = Make(Spec("catalog_config"));
  transport_.HoldCompletions();
  transport_.Expect("GET", kConfigUrl, JsonResponse(200, kConfigBody));
  std::vector<ProbeResult> got;
  p->Check(2s, [&got](ProbeResult r) { got.push_back(std::move(r)); });
  timers_.Advance(1999ms);
  EXPECT_TRUE(got.empty());
  timers_.Advance(1ms);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_FALSE(got[0].ok);
  EXPECT_EQ(got[0].detail, "deadline 2000ms exceeded");
  EXPECT_EQ(got[0].latency, 2000ms);
  transport_.DeliverHeld();  // the late answer
  EXPECT_EQ(got.size(), 1u) << "done runs exactly once";
}

TEST_F(ProbeKindsTest, TableLoadPassesAndThenSendsTheEtagAndAccepts304) {
  auto p = Make(Spec("table_load"));
  transport_.Expect("GET", kConfigUrl, JsonResponse(200, kConfigBody));
  transport_.Expect("GET", std::string(kTableUrl) + "?snapshots=refs",
                    JsonResponse(200, TableBody(), {{"ETag", "\"e7\""}}));
  transport_.Expect("GET", std::string(kTableUrl) + "?snapshots=refs", HttpResponse{304, {}, ""});
  auto first = Check(*p);
  ASSERT_EQ(first.size(), 1u);
  EXPECT_TRUE(first[0].ok) << first[0].detail;
  auto second = Check(*p);
  ASSERT_EQ(second.size(), 1u);
  EXPECT_TRUE(second[0].ok) << second[0].detail;
  EXPECT_EQ(second[0].detail, "not modified");
  EXPECT_EQ(transport_.requests().back().headers.Get("If-None-Match"), "\"e7\"");
}

TEST_F(ProbeKindsTest, TableLoadFailures) {
  auto p = Make(Spec("table_load"));
  transport_.Expect("GET", kConfigUrl, JsonResponse(200, kConfigBody));
  transport_.Expect(
      "GET", std::string(kTableUrl) + "?snapshots=refs",
      JsonResponse(503, R"({"error": {"message": "busy", "type": "X", "code": 503}})"));
  transport_.ExpectError("GET", std::string(kTableUrl) + "?snapshots=refs",
                         Status::Unavailable("connect catalog.test:80: Connection refused"));
  auto r = Check(*p);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].detail, "HTTP 503 from load table ops.canary");
  r = Check(*p);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_FALSE(r[0].ok);
  EXPECT_EQ(r[0].detail, "connection refused");
}

TEST_F(ProbeKindsTest, CanaryCommitSetsTheCanaryPropertyGuardedByTheTableUuid) {
  auto p = Make(Spec("canary_commit"));
  transport_.Expect("GET", kConfigUrl, JsonResponse(200, kConfigBody));
  transport_.Expect("GET", std::string(kTableUrl) + "?snapshots=refs",
                    JsonResponse(200, TableBody()));
  transport_.Expect("POST", kTableUrl, JsonResponse(200, TableBody()));
  transport_.Expect("POST", kTableUrl, JsonResponse(200, TableBody()));
  auto r = Check(*p);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_TRUE(r[0].ok) << r[0].detail;
  auto body = nlohmann::json::parse(transport_.requests().back().body);
  EXPECT_EQ(body["requirements"],
            nlohmann::json::parse(R"([{"type": "assert-table-uuid", "uuid": ")" +
                                  std::string(kUuid) + "\"}]"));
  EXPECT_EQ(body["updates"][0]["action"], "set-properties");
  EXPECT_EQ(body["updates"][0]["updates"]["icewarden.canary"], FormatUnixMillis(clock_.Now()));
  // The uuid is remembered: the second check commits without loading.
  r = Check(*p);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_TRUE(r[0].ok) << r[0].detail;
  EXPECT_EQ(transport_.requests().size(), 4u);
}

TEST_F(ProbeKindsTest, CanaryCommitConflictFailsWithDetailAndReloadsNextTime) {
  auto p = Make(Spec("canary_commit"));
  transport_.Expect("GET", kConfigUrl, JsonResponse(200, kConfigBody));
  transport_.Expect("GET", std::string(kTableUrl) + "?snapshots=refs",
                    JsonResponse(200, TableBody()));
  transport_.Expect(
      "POST", kTableUrl,
      JsonResponse(409, R"({"error": {"message": "Requirement failed: UUID does not match",
                                      "type": "CommitFailedException", "code": 409}})"));
  transport_.Expect("GET", std::string(kTableUrl) + "?snapshots=refs",
                    JsonResponse(200, TableBody("0a0b0c0d-0000-4000-8000-000000000001")));
  transport_.Expect("POST", kTableUrl, JsonResponse(200, TableBody()));
  auto r = Check(*p);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_FALSE(r[0].ok);
  EXPECT_EQ(r[0].detail,
            "commit to ops.canary failed, a requirement was not met: Requirement failed: UUID "
            "does not match");
  r = Check(*p);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_TRUE(r[0].ok) << r[0].detail;
  EXPECT_NE(transport_.requests().back().body.find("0a0b0c0d-0000-4000-8000-000000000001"),
            std::string::npos);
}

TEST_F(ProbeKindsTest, CanaryCommitWithUnknownStateFails) {
  auto p = Make(Spec("canary_commit"));
  transport_.Expect("GET", kConfigUrl, JsonResponse(200, kConfigBody));
  transport_.Expect("GET", std::string(kTableUrl) + "?snapshots=refs",
                    JsonResponse(200, TableBody()));
  transport_.Expect("POST", kTableUrl, JsonResponse(502, "bad gateway"));
  auto r = Check(*p);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_FALSE(r[0].ok);
  EXPECT_EQ(r[0].detail.rfind("commit state unknown: commit to ops.canary: HTTP 502", 0), 0u)
      << r[0].detail;
}

TEST_F(ProbeKindsTest, CanaryCommitIsOffUnlessWritesAreAllowed) {
  auto spec = Spec("canary_commit");
  spec.allow_writes = false;
  auto p = registry_.Create(spec, ctx_);
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().message(),
            "canary_commit probe for region us-east-1 writes to ops.canary; it runs only with "
            "allow_writes set");
}

TEST_F(ProbeKindsTest, UnknownKindListsTheKnownKinds) {
  auto spec = Spec("http");
  auto p = registry_.Create(spec, ctx_);
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(p.status().message(),
            "unknown probe kind \"http\" for region us-east-1; known kinds: canary_commit, "
            "catalog_config, dns, table_load, tcp");
}

TEST_F(ProbeKindsTest, DuplicateRegistrationIsAnError) {
  Status again = registerBuiltinProbes(registry_);
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.message(), "probe kind \"catalog_config\" is already registered");
  ProbeRegistry empty;
  EXPECT_TRUE(empty.Register("custom", MakeCatalogConfigProbe).ok());
  EXPECT_FALSE(empty.Register("custom", MakeCatalogConfigProbe).ok());
  EXPECT_FALSE(empty.Register("", MakeCatalogConfigProbe).ok());
  EXPECT_EQ(empty.Kinds(), std::vector<std::string>{"custom"});
}

TEST_F(ProbeKindsTest, FactoriesRejectMissingFields) {
  auto load = Spec("table_load");
  load.table.reset();
  EXPECT_EQ(registry_.Create(load, ctx_).status().message(),
            "table_load probe for region us-east-1 needs a canary table");
  auto tcp = Spec("tcp");
  EXPECT_EQ(registry_.Create(tcp, ctx_).status().message(),
            "tcp probe for region us-east-1 needs host and port");
  tcp.host = "127.0.0.1";
  tcp.port = 443;
  EXPECT_EQ(registry_.Create(tcp, ctx_).status().message(),
            "tcp probe for region us-east-1: the probe context has no TcpConnector");
  auto dns = Spec("dns");
  EXPECT_EQ(registry_.Create(dns, ctx_).status().message(),
            "dns probe for region us-east-1 needs a name and a dns server");
}

}  // namespace
}  // namespace icewarden::testing
