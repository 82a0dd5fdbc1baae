// Silence as the daemon publishes it (DESIGN.md rule 7): the run kept per region from
// probe rounds, GET /api/v1/regions, and the unparsed-answer counter on /metrics.
#include "orchestrator/watch/region_silence.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "orchestrator/api/api.h"
#include "orchestrator/api/lag.h"
#include "tests/fakes/fake_clock.h"
#include "tests/fakes/fake_store.h"
#include "tests/fakes/test_paths.h"

namespace icewarden {
namespace {

using nlohmann::json;

ProbeResult Answer(bool ok, bool answered, std::string detail = "") {
  ProbeResult r;
  r.ok = ok;
  r.kind = "catalog_config";
  r.answered = answered;
  r.detail = std::move(detail);
  return r;
}

// A round of a catalog_config and a tcp probe (which never answers, pass or fail).
ProbeRound Round(ProbeResult catalog, bool tcp_ok = true) {
  ProbeRound r;
  r.region = "us-east-1";
  r.ok = catalog.ok && tcp_ok;
  r.kind = "catalog_config";
  r.detail = catalog.detail;
  r.probes = {catalog, Answer(tcp_ok, false)};
  r.probes[1].kind = "tcp";
  return r;
}

TEST(RegionSilence, SilentRoundsStartAndExtendARunAndAnyAnswerEndsIt) {
  std::optional<RegionSilence> s;
  s = NextSilence(s, Round(Answer(false, false, "connection refused"), false), 1000);
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->since, 1000);
  EXPECT_EQ(s->rounds, 1);
  s = NextSilence(s, Round(Answer(false, false, "deadline 2000ms exceeded")), 2000);
  ASSERT_TRUE(s.has_value()) << "a tcp pass is no answer from the catalog";
  EXPECT_EQ(s->since, 1000) << "the run keeps its start";
  EXPECT_EQ(s->rounds, 2);
  EXPECT_EQ(s->detail, "deadline 2000ms exceeded");

  // A 503 is an answer: the run ends although the round failed.
  EXPECT_FALSE(NextSilence(s, Round(Answer(false, true, "HTTP 503 from GET /v1/config")), 3000));
  EXPECT_FALSE(NextSilence(s, Round(Answer(true, true)), 3000));
  // And a new run starts afresh.
  auto again = NextSilence(std::nullopt, Round(Answer(false, false, "connection refused")), 4000);
  ASSERT_TRUE(again.has_value());
  EXPECT_EQ(again->since, 4000);
  EXPECT_EQ(again->rounds, 1);
}

TEST(RegionSilence, UnparsedAnswersAreNeverSilence) {
  ProbeResult garbage = Answer(false, true, "catalog returned a malformed CatalogConfig: not JSON");
  garbage.unparsed = true;
  EXPECT_FALSE(NextSilence(RegionSilence{1000, 5, "connection refused"}, Round(garbage), 2000));
}

class RegionsApiTest : public ::testing::Test {
 protected:
  RegionsApiTest() : store_(clock_), api_(Config(), store_, clock_, nullptr) {
    api_.SetLiveView(&live_);
    for (const char* name : {"us-east-1", "eu-central-1"}) {
      Region r;
      r.name = name;
      AuditEvent why;
      why.actor = "test";
      why.action = "region.health";
      why.target = name;
      why.reason = "seeded";
      EXPECT_TRUE(store_.PutRegion(r, why).ok());
    }
  }
  static ApiConfig Config() {
    ApiConfig c;
    c.tokens.push_back({"v", Role::kViewer, Secret("viewer-token")});
    return c;
  }
  ApiResponse Get(const std::string& target) {
    return api_.Handle({"GET", target, {{"authorization", "Bearer viewer-token"}}, "", "t"});
  }
  json Listed(const std::string& name) {
    ApiResponse res = Get("/api/v1/regions");
    EXPECT_EQ(res.status, 200) << res.body;
    const json body = json::parse(res.body);
    for (const auto& r : body["regions"])
      if (r["name"] == name) return r;
    return json();
  }

  testing::FakeClock clock_;
  testing::FakeStore store_;
  Api api_;
  LiveView live_;
};

TEST_F(RegionsApiTest, RegionsShowSilenceAndNullWhileTheRegionAnswers) {
  live_.PublishSilence("us-east-1", RegionSilence{1'780'000'000'000, 4, "connection refused"});
  json east = Listed("us-east-1");
  EXPECT_EQ(east["silent_since"], FormatUnixMillis(1'780'000'000'000)) << east.dump();
  EXPECT_EQ(east["silent_rounds"], 4);
  json eu = Listed("eu-central-1");
  ASSERT_TRUE(eu.contains("silent_since")) << eu.dump();
  EXPECT_TRUE(eu["silent_since"].is_null());
  EXPECT_TRUE(eu["silent_rounds"].is_null());

  live_.PublishSilence("us-east-1", std::nullopt);
  EXPECT_TRUE(Listed("us-east-1")["silent_since"].is_null());
}

TEST_F(RegionsApiTest, UnparsedAnswersAreCountedOnMetricsAndPassPromtool) {
  live_.CountUnparsed("us-east-1", "config");
  live_.CountUnparsed("us-east-1", "config");
  live_.CountUnparsed("we\"ird", "load_table");
  ApiResponse res = Get("/metrics");
  ASSERT_EQ(res.status, 200);
  EXPECT_NE(res.body.find("# TYPE icewarden_catalog_responses_unparsed_total counter\n"),
            std::string::npos);
  EXPECT_NE(
      res.body.find(
          "icewarden_catalog_responses_unparsed_total{region=\"us-east-1\",kind=\"config\"} 2\n"),
      std::string::npos)
      << res.body;
  EXPECT_NE(res.body.find("icewarden_catalog_responses_unparsed_total{region=\"we\\\"ird\","
                          "kind=\"load_table\"} 1\n"),
            std::string::npos);

  const std::string promtool = "/usr/bin/promtool";
  if (!std::filesystem::exists(promtool)) GTEST_SKIP() << promtool << " is not installed";
  const std::string dir = testing::MakeTempDir("unparsed-metrics");
  std::ofstream(dir + "/m.txt") << res.body;
  int rc =
      std::system((promtool + " check metrics < " + dir + "/m.txt > " + dir + "/out 2>&1").c_str());
  std::ifstream out(dir + "/out");
  std::string findings((std::istreambuf_iterator<char>(out)), {});
  EXPECT_EQ(rc, 0) << findings;
  EXPECT_EQ(findings, "") << findings;
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace icewarden
