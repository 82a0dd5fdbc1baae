// The /metrics families of issue 10 item 6 as the API serves them: route readiness, probe
// latency histograms per region and kind, webhook requests by outcome, lag per region pair,
// with the families that were there already (region health, failovers by phase). The whole
// page goes through the real `promtool check metrics` (Debian package prometheus).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "orchestrator/api/api.h"
#include "orchestrator/api/metrics_exposition.h"
#include "orchestrator/readiness/readiness.h"
#include "orchestrator/watch/live_view.h"
#include "state/sqlite_store.h"
#include "tests/fakes/fake_clock.h"
#include "tests/fakes/test_paths.h"

namespace icewarden::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

class ReadinessMetricsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto store = OpenSqliteStore({":memory:"}, clock_);
    ASSERT_TRUE(store.ok());
    store_ = std::move(*store);
    Region r;
    r.name = "us-east-1";
    r.health = RegionHealth::kHealthy;
    AuditEvent why{};
    why.actor = why.source = why.action = why.target = why.reason = "test";
    ASSERT_TRUE(store_->PutRegion(r, why).ok());
    api_ = std::make_unique<Api>(ApiConfig{}, *store_, *clock_, nullptr);
    api_->SetLiveView(&live_);
    api_->SetReadiness(&board_);
  }

  ApiResponse Call(const std::string& method, const std::string& path) {
    ApiRequest req{method, path, {}, "{}", "127.0.0.1:1"};
    return api_->Handle(req);
  }

  // promtool's findings on `page` ("" when clean), or nullopt when promtool is missing.
  std::optional<std::string> Promtool(const std::string& page) {
    const std::string promtool = "/usr/bin/promtool";
    if (!std::filesystem::exists(promtool)) return std::nullopt;
    const std::string dir = MakeTempDir("readiness-metrics");
    std::ofstream(dir + "/m.txt") << page;
    const int rc = std::system(
        (promtool + " check metrics < " + dir + "/m.txt > " + dir + "/out 2>&1").c_str());
    std::ifstream out(dir + "/out");
    std::string findings((std::istreambuf_iterator<char>(out)), {});
    std::filesystem::remove_all(dir);
    if (rc != 0 && findings.empty()) findings = "promtool exited with " + std::to_string(rc);
    return findings;
  }

  std::shared_ptr<FakeClock> clock_ = std::make_shared<FakeClock>();
  std::unique_ptr<StateStore> store_;
  LiveView live_;
  ReadinessBoard board_;
  std::unique_ptr<Api> api_;
};

TEST_F(ReadinessMetricsTest, EveryFamilyIsServedAndPromtoolFindsNothing) {
  RouteReadiness ready;
  ready.route = "us-to-eu";
  ready.ready = true;
  ready.checked_at = 1'780'000'000'000;
  RouteReadiness broken = ready;
  broken.route = "eu-to-us";
  broken.ready = false;
  broken.reasons = {"guard target_healthy: us-east-1 is unreachable"};
  board_.Publish({ready, broken});

  live_.ObserveProbe("us-east-1", "catalog_config", std::chrono::milliseconds(20));
  live_.ObserveProbe("us-east-1", "catalog_config", std::chrono::milliseconds(300));
  live_.ObserveProbe("us-east-1", "tcp", std::chrono::milliseconds(30'000));  // past every bucket
  live_.PublishProbeRound("us-east-1",
                          {true, std::chrono::milliseconds(300), "catalog_config", "", 1});
  LagReport lag;
  lag.at = 1'780'000'000'000;
  TableLag row;
  row.table = *TableIdent::Parse("sales.orders");
  row.owner = "us-east-1";
  row.replica = "eu-central-1";
  row.state = LagState::kBehind;
  row.lag = std::chrono::seconds(4);
  row.missing_commits = 2;
  lag.tables.push_back(row);
  live_.PublishLag(lag);
  // A webhook to a daemon that receives none: answered 503, counted as an error.
  EXPECT_EQ(Call("POST", "/api/v1/webhooks/alertmanager").status, 503);
  EXPECT_EQ(Call("POST", "/api/v1/webhooks/generic/ci").status, 503);

  const std::string page = Call("GET", "/metrics").body;
  EXPECT_THAT(page, HasSubstr("# TYPE icewarden_failover_route_ready gauge\n"));
  EXPECT_THAT(page, HasSubstr("icewarden_failover_route_ready{route=\"us-to-eu\"} 1\n"));
  EXPECT_THAT(page, HasSubstr("icewarden_failover_route_ready{route=\"eu-to-us\"} 0\n"));
  EXPECT_THAT(page, HasSubstr("icewarden_readiness_round_timestamp_seconds 1780000000.000\n"));
  // Fixed buckets, cumulative, per region and kind.
  EXPECT_THAT(page, HasSubstr("# TYPE icewarden_probe_duration_seconds histogram\n"));
  EXPECT_THAT(page, HasSubstr("icewarden_probe_duration_seconds_bucket{region=\"us-east-1\",kind="
                              "\"catalog_config\",le=\"0.01\"} 0\n"));
  EXPECT_THAT(page, HasSubstr("icewarden_probe_duration_seconds_bucket{region=\"us-east-1\",kind="
                              "\"catalog_config\",le=\"0.025\"} 1\n"));
  EXPECT_THAT(page, HasSubstr("icewarden_probe_duration_seconds_bucket{region=\"us-east-1\",kind="
                              "\"catalog_config\",le=\"0.5\"} 2\n"));
  EXPECT_THAT(page, HasSubstr("icewarden_probe_duration_seconds_count{region=\"us-east-1\",kind="
                              "\"catalog_config\"} 2\n"));
  EXPECT_THAT(page, HasSubstr("icewarden_probe_duration_seconds_sum{region=\"us-east-1\",kind="
                              "\"catalog_config\"} 0.32\n"));
  EXPECT_THAT(page, HasSubstr("icewarden_probe_duration_seconds_bucket{region=\"us-east-1\",kind="
                              "\"tcp\",le=\"10\"} 0\n"));
  EXPECT_THAT(page, HasSubstr("icewarden_probe_duration_seconds_bucket{region=\"us-east-1\",kind="
                              "\"tcp\",le=\"+Inf\"} 1\n"));
  EXPECT_THAT(page, HasSubstr("icewarden_webhook_requests_total{endpoint=\"alertmanager\","
                              "outcome=\"error\"} 1\n"));
  EXPECT_THAT(page, HasSubstr("icewarden_webhook_requests_total{endpoint=\"generic\","
                              "outcome=\"error\"} 1\n"));
  EXPECT_THAT(page, HasSubstr("icewarden_replication_lag_seconds{owner=\"us-east-1\",replica="
                              "\"eu-central-1\"} 4.000\n"));
  // What was there already.
  EXPECT_THAT(page,
              HasSubstr("icewarden_region_health{region=\"us-east-1\",state=\"healthy\"} 1\n"));
  EXPECT_THAT(page, HasSubstr("# TYPE icewarden_failovers gauge\n"));
  EXPECT_THAT(page, Not(HasSubstr("icewarden_replication_lag_seconds{table=")))
      << "no per-table series outside the worst-N family";

  auto findings = Promtool(page);
  if (!findings) GTEST_SKIP() << "/usr/bin/promtool is not installed (Debian package prometheus)";
  EXPECT_EQ(*findings, "") << page;
}

TEST_F(ReadinessMetricsTest, BeforeTheFirstRoundTheFamilyIsDeclaredWithoutSamples) {
  const std::string page = Call("GET", "/metrics").body;
  EXPECT_THAT(page, HasSubstr("# TYPE icewarden_failover_route_ready gauge\n"));
  EXPECT_THAT(page, Not(HasSubstr("icewarden_failover_route_ready{")));
  auto findings = Promtool(page);
  if (!findings) GTEST_SKIP() << "/usr/bin/promtool is not installed";
  EXPECT_EQ(*findings, "") << page;
}

TEST(WebhookOutcome, StatusesMapToFewOutcomes) {
  EXPECT_STREQ(WebhookOutcome(200), "accepted");
  EXPECT_STREQ(WebhookOutcome(202), "accepted");
  EXPECT_STREQ(WebhookOutcome(401), "unauthorized");
  EXPECT_STREQ(WebhookOutcome(403), "forbidden");
  EXPECT_STREQ(WebhookOutcome(409), "replay");
  EXPECT_STREQ(WebhookOutcome(400), "rejected");
  EXPECT_STREQ(WebhookOutcome(413), "rejected");
  EXPECT_STREQ(WebhookOutcome(503), "error");
}

}  // namespace
}  // namespace icewarden::testing
