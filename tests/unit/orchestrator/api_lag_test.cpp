#include "orchestrator/api/lag.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "orchestrator/api/api.h"
#include "orchestrator/watch/live_view.h"
#include "tests/fakes/fake_clock.h"
#include "tests/fakes/fake_store.h"
#include "tests/fakes/test_paths.h"

namespace icewarden {
namespace {

using nlohmann::json;

TableLag Row(const std::string& table, const std::string& replica, LagState state, int missing,
             std::chrono::milliseconds lag) {
  TableLag t;
  t.table = *TableIdent::Parse(table);
  t.owner = replica == "eu-central-1" ? "us-east-1" : "eu-central-1";
  t.replica = replica;
  t.state = state;
  t.missing_commits = missing;
  t.lag = lag;
  t.owner_snapshot_id = 8563959728592385857;  // beyond 2^53: must survive as a string
  t.replica_snapshot_id = -1;
  t.diverged = state == LagState::kDiverged;
  if (t.diverged) t.divergent_snapshot_ids = {42};
  t.reason = table + " reason";
  return t;
}

LagReport Report() {
  LagReport r;
  r.at = 1'780'000'000'000;
  r.tables = {Row("eu.orders", "us-east-1", LagState::kCaughtUp, 0, {}),
              Row("sales.orders", "eu-central-1", LagState::kBehind, 3, std::chrono::seconds(42)),
              Row("sales.returns", "eu-central-1", LagState::kDiverged, 0, {})};
  r.region_errors = {"eu-central-1: list namespaces: connection refused"};
  r.loads_sent = 6;
  r.loads_not_modified = 4;
  return r;
}

TEST(ApiLag, JsonCarriesEveryRowTheSummaryAndStringSnapshotIds) {
  json j = LagReportJson(Report(), {});
  ASSERT_EQ(j["tables"].size(), 3u);
  EXPECT_EQ(j["summary"]["worst_lag_ms"], 42000);
  EXPECT_EQ(j["summary"]["worst_table"], "sales.orders");
  EXPECT_EQ(j["summary"]["total_missing"], 3);
  EXPECT_EQ(j["summary"]["any_divergence"], true);
  EXPECT_EQ(j["tables"][1]["owner_snapshot_id"], "8563959728592385857");
  EXPECT_TRUE(j["tables"][1]["replica_snapshot_id"].is_null());
  EXPECT_EQ(j["tables"][2]["divergent_snapshot_ids"], json::array({"42"}));
  EXPECT_EQ(j["loads"]["not_modified"], 4);
  EXPECT_EQ(j["region_errors"].size(), 1u);
}

TEST(ApiLag, FiltersNarrowRowsAndTheSummaryFollows) {
  json j =
      LagReportJson(Report(), {std::nullopt, std::string("us-east-1"), std::string("caught_up")});
  ASSERT_EQ(j["tables"].size(), 1u);
  EXPECT_EQ(j["tables"][0]["table"], "eu.orders");
  EXPECT_EQ(j["summary"]["any_divergence"], false);
  EXPECT_EQ(LagReportJson(Report(), {std::string("nope.t"), {}, {}})["tables"].size(), 0u);
}

TEST(ApiLag, PagesFollowTheReportOrderAndTheSummaryCoversEveryRow) {
  LagPage page;
  page.limit = 2;
  json first = LagReportJson(Report(), {}, page);
  ASSERT_EQ(first["tables"].size(), 2u);
  EXPECT_EQ(first["tables"][0]["table"], "eu.orders");
  EXPECT_EQ(first["next_after"], json({{"table", "sales.orders"}, {"replica", "eu-central-1"}}));
  EXPECT_EQ(first["summary"]["tables"], 3) << "the summary is of every row, not the page";

  page.after_table = TableIdent::Parse("sales.orders");
  page.after_replica = "eu-central-1";
  json second = LagReportJson(Report(), {}, page);
  ASSERT_EQ(second["tables"].size(), 1u);
  EXPECT_EQ(second["tables"][0]["table"], "sales.returns");
  EXPECT_TRUE(second["next_after"].is_null());
}

// Regression: with the owner unreachable the summary said "worst 0ms". Unknown rows show
// their last comparison and its bound, and the summary's worst_bound_ms uses them.
TEST(ApiLag, UnknownRowsShowTheirLastKnownLagAndTheSummaryItsBound) {
  LagReport report = Report();
  TableLag away = Row("sales.refunds", "eu-central-1", LagState::kUnknown, 0, {});
  away.last_known_at = report.at - 35'000;
  away.last_known_lag = std::chrono::milliseconds(1'400);
  away.last_known_missing = 2;
  TableLag never = Row("sales.scratch", "eu-central-1", LagState::kUnknown, 0, {});
  report.tables.insert(report.tables.begin() + 2, away);
  report.tables.push_back(never);

  json j = LagReportJson(report, {});
  ASSERT_EQ(j["tables"].size(), 5u);
  const json& row = j["tables"][2];
  ASSERT_EQ(row["table"], "sales.refunds");
  EXPECT_EQ(row["missing_commits"], 0);
  EXPECT_EQ(row["last_known"]["at"], FormatUnixMillis(report.at - 35'000));
  EXPECT_EQ(row["last_known"]["age_ms"], 35'000);
  EXPECT_EQ(row["last_known"]["lag_ms"], 1'400);
  EXPECT_EQ(row["last_known"]["missing_commits"], 2);
  EXPECT_EQ(row["lag_bound_ms"], 36'400);
  EXPECT_TRUE(j["tables"][4]["last_known"].is_null());
  EXPECT_TRUE(j["tables"][4]["lag_bound_ms"].is_null());
  EXPECT_EQ(j["tables"][1]["lag_bound_ms"], 42'000);  // compared: its lag
  EXPECT_TRUE(j["tables"][1]["last_known"].is_null());

  const json& summary = j["summary"];
  EXPECT_EQ(summary["worst_lag_ms"], 42'000);
  EXPECT_EQ(summary["complete"], false);
  EXPECT_EQ(summary["worst_bound_ms"], 42'000);
  EXPECT_EQ(summary["worst_bound_table"], "sales.orders");
  EXPECT_EQ(summary["unbounded"], 2);  // sales.returns diverged, sales.scratch never compared

  // Only the unknown row: its bound is the summary's worst, though nothing was measured.
  json unknown = LagReportJson(report, {std::string("sales.refunds"), {}, {}});
  EXPECT_EQ(unknown["summary"]["worst_lag_ms"], 0);
  EXPECT_EQ(unknown["summary"]["worst_bound_ms"], 36'400);
  EXPECT_EQ(unknown["summary"]["worst_bound_table"], "sales.refunds");
  EXPECT_EQ(unknown["summary"]["worst_bound_replica"], "eu-central-1");
  EXPECT_EQ(unknown["summary"]["unbounded"], 0);
}

TEST(ApiLag, RouteAnswers503BeforeTheFirstRoundThenTheReport) {
  testing::FakeClock clock;
  testing::FakeStore store(clock);
  ApiConfig config;
  config.tokens.push_back({"v", Role::kViewer, Secret("viewer-token")});
  Api api(config, store, clock, nullptr);
  LiveView live;
  api.SetLiveView(&live);
  ApiRequest req{
      "GET", "/api/v1/lag?state=behind", {{"authorization", "Bearer viewer-token"}}, "", "t"};
  EXPECT_EQ(api.Handle(req).status, 503);
  live.PublishLag(Report());
  ApiResponse res = api.Handle(req);
  ASSERT_EQ(res.status, 200) << res.body;
  json j = json::parse(res.body);
  ASSERT_EQ(j["tables"].size(), 1u);
  EXPECT_EQ(j["tables"][0]["table"], "sales.orders");
  req.target = "/api/v1/lag?colour=red";
  EXPECT_EQ(api.Handle(req).status, 400);
  req.target = "/api/v1/lag?after=orders";  // no namespace
  EXPECT_EQ(api.Handle(req).status, 400);
  req.target = "/api/v1/lag?limit=100000";
  EXPECT_EQ(api.Handle(req).status, 400);
  // after_replica alone would be ignored, and the page start from the top: refused, naming both.
  req.target = "/api/v1/lag?after_replica=us-east-1";
  res = api.Handle(req);
  EXPECT_EQ(res.status, 400);
  EXPECT_NE(res.body.find("after_replica goes with after"), std::string::npos) << res.body;
  req.target = "/api/v1/lag?limit=1&after=eu.orders&after_replica=us-east-1";
  res = api.Handle(req);
  ASSERT_EQ(res.status, 200) << res.body;
  EXPECT_EQ(json::parse(res.body)["tables"][0]["table"], "sales.orders");
}

TEST(ApiLag, LagAndProbeFamiliesPassPromtool) {
  LiveView live;
  live.PublishProbeRound("us-east-1",
                         {true, std::chrono::milliseconds(12), "catalog_config", "", 1});
  live.PublishProbeRound("eu-central-1", {false, std::chrono::milliseconds(500), "catalog_config",
                                          "connection refused", 1});
  std::string page = RenderLagMetrics(Report()) + RenderProbeMetrics(live.ProbeRounds());
  // Per region pair: the worst bound (the diverged table has none), and the diverged count.
  EXPECT_NE(page.find("icewarden_replication_lag_seconds{owner=\"us-east-1\",replica=\"eu-"
                      "central-1\"} 42.000\n"),
            std::string::npos)
      << page;
  EXPECT_NE(page.find("icewarden_replication_diverged_tables{owner=\"us-east-1\",replica=\"eu-"
                      "central-1\"} 1\n"),
            std::string::npos)
      << page;
  EXPECT_NE(page.find("icewarden_replication_worst_table_lag_seconds{table=\"sales.orders\",owner="
                      "\"us-east-1\",replica=\"eu-central-1\"} 42.000\n"),
            std::string::npos)
      << page;
  EXPECT_NE(page.find("icewarden_probe_round_success{region=\"eu-central-1\"} 0"),
            std::string::npos);

  const std::string promtool = "/usr/bin/promtool";
  if (!std::filesystem::exists(promtool)) GTEST_SKIP() << promtool << " is not installed";
  std::string dir = testing::MakeTempDir("lag-metrics");
  std::ofstream(dir + "/m.txt") << page;
  int rc =
      std::system((promtool + " check metrics < " + dir + "/m.txt > " + dir + "/out 2>&1").c_str());
  std::ifstream out(dir + "/out");
  std::string findings((std::istreambuf_iterator<char>(out)), {});
  EXPECT_EQ(rc, 0) << findings;
  EXPECT_EQ(findings, "") << findings;
  std::filesystem::remove_all(dir);
}

// A lakehouse of thousands of tables must not put a series per table into Prometheus: the
// per-table family keeps the kLagMetricsWorstTables worst, the others are per region pair.
TEST(ApiLag, LagFamiliesStayBoundedWhateverTheTableCount) {
  LagReport r;
  r.at = 1'780'000'000'000;
  for (int i = 0; i < 500; ++i)
    r.tables.push_back(Row("sales.t" + std::to_string(i), "eu-central-1", LagState::kBehind, 1,
                           std::chrono::seconds(i)));
  const std::string page = RenderLagMetrics(r);
  std::size_t worst = 0, lag = 0;
  for (std::size_t at = page.find('\n'), from = 0; at != std::string::npos;
       from = at + 1, at = page.find('\n', from)) {
    const std::string line = page.substr(from, at - from);
    worst += line.rfind("icewarden_replication_worst_table_lag_seconds{", 0) == 0;
    lag += line.rfind("icewarden_replication_lag_seconds{", 0) == 0;
  }
  EXPECT_EQ(worst, kLagMetricsWorstTables);
  EXPECT_EQ(lag, 1u) << "one series per region pair";
  // The worst first: t499 trails by 499 s.
  EXPECT_NE(page.find("icewarden_replication_worst_table_lag_seconds{table=\"sales.t499\""),
            std::string::npos);
  EXPECT_EQ(page.find("table=\"sales.t489\""), std::string::npos) << "11th worst is left out";
  EXPECT_NE(page.find("icewarden_replication_missing_commits{owner=\"us-east-1\",replica=\"eu-"
                      "central-1\"} 500\n"),
            std::string::npos);
}

}  // namespace
}  // namespace icewarden
