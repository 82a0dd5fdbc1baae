// End to end against the lab: the real icewarden-lab executable (two catalogs with
// replication and fault injection) and the real `icewarden serve` probing it.
#include <gtest/gtest.h>
#include <httplib.h>
#include <signal.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <thread>

#include "tests/e2e/lab_stack.h"

namespace icewarden {
namespace {

using nlohmann::json;
using testing::Eventually;
using testing::IcewardenBinary;
using testing::LabProcess;
using testing::RunCommand;
using testing::ServingUrl;
using testing::Subprocess;

class LabHealthTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::MakeTempDir("icewarden-lab-e2e");
    lab_ = std::make_unique<LabProcess>(
        dir_,
        std::vector<std::string>{"--replication-lag-ms", "100", "--workload-interval-ms", "200"});
    ASSERT_TRUE(lab_->WaitUntilReady()) << "the lab did not start";
    us_ = lab_->region_url("us-east-1");
    eu_ = lab_->region_url("eu-central-1");
    admin_ = lab_->admin_url();
    std::ofstream(dir_ + "/token") << "e2e-admin\n";
    std::ofstream(dir_ + "/icewarden.yaml") << R"(api:
  listen: 127.0.0.1:0
  tokens:
    - {name: admin, role: admin, token_file: token}
state:
  path: state.db
regions:
  - name: us-east-1
    catalog_uri: )" << us_ << R"(
    warehouse: lab
    probe: {kinds: [catalog_config, table_load, tcp], canary_table: sales.orders}
  - name: eu-central-1
    catalog_uri: )" << eu_ << R"(
    warehouse: lab
ownership:
  default_owner: us-east-1
  rules:
    - {match: "eu.*", owner: eu-central-1}
policies:
  lag_interval: 300ms
  max_staleness: 1m
  probe: {interval: 200ms, timeout: 100ms, fall: 3, rise: 2}
)";
    server_ = std::make_unique<Subprocess>(
        std::vector<std::string>{IcewardenBinary(), "serve", "--config", dir_ + "/icewarden.yaml"});
    url_ = ServingUrl(*server_);
    ASSERT_NE(url_, "") << "serve did not start";
  }

  void TearDown() override {
    server_.reset();
    lab_.reset();
    std::filesystem::remove_all(dir_);
  }

  json Api(const std::string& path) {
    httplib::Client c(url_);
    auto res = c.Get(path, {{"Authorization", "Bearer e2e-admin"}});
    if (!res || res->status != 200) return json();
    return json::parse(res->body);
  }

  void Admin(const std::string& path, const std::string& body = "{}") {
    httplib::Client c(admin_);
    auto res = c.Post(path, body, "application/json");
    ASSERT_TRUE(res) << path;
    ASSERT_EQ(res->status, 200) << path << ": " << res->body;
  }

  std::string Health(const std::string& region) {
    json regions = Api("/api/v1/regions");
    if (!regions.contains("regions")) return "";
    for (const auto& r : regions["regions"])
      if (r["name"] == region)
        return r["health"].get<std::string>() + " | " + r["reason"].get<std::string>();
    return "";
  }

  json RegionEntry(const std::string& region) {
    json regions = Api("/api/v1/regions");
    if (!regions.contains("regions")) return json();
    for (const auto& r : regions["regions"])
      if (r["name"] == region) return r;
    return json();
  }

  // Whether the daemon says `region` has given no answer at all (DESIGN.md rule 7).
  bool Silent(const std::string& region) {
    json r = RegionEntry(region);
    return r.contains("silent_since") && !r["silent_since"].is_null();
  }

  std::string dir_, us_, eu_, admin_, url_;
  std::unique_ptr<LabProcess> lab_;
  std::unique_ptr<Subprocess> server_;
};

TEST_F(LabHealthTest, AStoppedRegionBecomesUnreachableAndComesBackHealthy) {
  ASSERT_TRUE(Eventually([&] { return Health("us-east-1").rfind("healthy", 0) == 0; }))
      << Health("us-east-1");
  ASSERT_TRUE(Eventually([&] { return Health("eu-central-1").rfind("healthy", 0) == 0; }));

  Admin("/lab/regions/us-east-1/stop");
  ASSERT_TRUE(Eventually([&] { return Health("us-east-1").rfind("unreachable", 0) == 0; }))
      << Health("us-east-1");
  const std::string down = Health("us-east-1");
  // The first probe kind that failed names the round: catalog_config, refused.
  EXPECT_NE(down.find("us-east-1 unreachable: 3 consecutive catalog_config failures: "),
            std::string::npos)
      << down;
  EXPECT_NE(down.find("refused"), std::string::npos) << down;
  EXPECT_EQ(Health("eu-central-1").rfind("healthy", 0), 0u) << "the other region is unaffected";

  Admin("/lab/regions/us-east-1/start");
  ASSERT_TRUE(Eventually([&] { return Health("us-east-1").rfind("healthy", 0) == 0; }))
      << Health("us-east-1");

  // Every change is in the audit log with its reason.
  json audit = Api("/api/v1/audit?target=us-east-1&limit=100");
  std::vector<std::string> actions;
  for (const auto& e : audit["events"]) actions.push_back(e["action"]);
  EXPECT_NE(std::find(actions.begin(), actions.end(), "region.unreachable"), actions.end());
  EXPECT_EQ(actions.back(), "region.healthy");
}

TEST_F(LabHealthTest, DiscoveredTablesAreClaimedByTheRulesAndLagIsMeasured) {
  ASSERT_TRUE(Eventually([&] {
    json lag = Api("/api/v1/lag");
    return lag.contains("tables") && lag["tables"].size() >= 6;
  }));
  json owners = Api("/api/v1/ownership");
  std::map<std::string, std::string> owner_of;
  for (const auto& t : owners["tables"]) owner_of[t["table"]] = t["owner"];
  EXPECT_EQ(owner_of["eu.orders"], "eu-central-1");
  EXPECT_EQ(owner_of["sales.orders"], "us-east-1");
  EXPECT_EQ(owner_of["sales.archive.orders_2024"], "us-east-1");

  // Replication paused while the workload commits: the replica falls behind.
  Admin("/lab/replication/pause");
  ASSERT_TRUE(Eventually([&] {
    json lag = Api("/api/v1/lag?table=sales.orders");
    return !lag["tables"].empty() && lag["tables"][0]["state"] == "behind" &&
           lag["tables"][0]["missing_commits"].get<int>() >= 2;
  })) << Api("/api/v1/lag?table=sales.orders").dump();
  json behind = Api("/api/v1/lag?table=sales.orders")["tables"][0];
  EXPECT_EQ(behind["replica"], "eu-central-1");
  EXPECT_NE(behind["reason"].get<std::string>().find("commits behind us-east-1"),
            std::string::npos);

  // A rogue writer in the non-owner: two histories under one name.
  Admin("/lab/rogue-writer", R"({"region":"eu-central-1","enabled":true})");
  ASSERT_TRUE(Eventually([&] {
    json lag = Api("/api/v1/lag?state=diverged&region=eu-central-1");
    return lag.contains("tables") && !lag["tables"].empty();
  })) << Api("/api/v1/lag").dump();
  json metrics;
  httplib::Client c(url_);
  auto page = c.Get("/metrics");
  ASSERT_TRUE(page);
  const std::string diverged =
      "icewarden_replication_diverged_tables{owner=\"us-east-1\",replica=\"eu-central-1\"} ";
  EXPECT_NE(page->body.find(diverged), std::string::npos) << page->body;
  EXPECT_EQ(page->body.find(diverged + "0\n"), std::string::npos) << page->body;

  // The CLI shows the same.
  auto cli = RunCommand(
      {IcewardenBinary(), "lag", "--state", "diverged", "--server", url_, "--token", "e2e-admin"});
  EXPECT_EQ(cli.exit_code, 0) << cli.err;
  EXPECT_NE(cli.out.find("DIVERGENCE FOUND"), std::string::npos) << cli.out;
  // A diverged row's state, or SPLIT BRAIN once the split-brain watch has seen the rogue
  // writer commit where it does not own the table (a race with the watch's round).
  EXPECT_TRUE(cli.out.find("diverged") != std::string::npos ||
              cli.out.find("SPLIT BRAIN") != std::string::npos)
      << cli.out;
}

// Rule 7 of DESIGN.md: a stopped region (refused, no answer) is silent; a region that
// answers every request with 503, then 401, is alive: unhealthy, but never silent.
TEST_F(LabHealthTest, AStoppedRegionIsSilentButOneAnswering503Or401NeverIs) {
  ASSERT_TRUE(Eventually([&] { return Health("us-east-1").rfind("healthy", 0) == 0; }))
      << Health("us-east-1");
  ASSERT_TRUE(Eventually([&] { return Health("eu-central-1").rfind("healthy", 0) == 0; }));
  EXPECT_FALSE(Silent("us-east-1"));
  EXPECT_FALSE(Silent("eu-central-1"));

  Admin("/lab/regions/eu-central-1/faults", R"({"error_rate":1.0,"error_status":503})");
  Admin("/lab/regions/us-east-1/stop");
  bool eu_ever_silent = false;
  ASSERT_TRUE(Eventually([&] {
    eu_ever_silent = eu_ever_silent || Silent("eu-central-1");
    // One read of us-east-1: its silence and its count come from the same answer (two reads
    // raced: silent in the second, no count yet in the first, and get<int> threw on null).
    const json east = RegionEntry("us-east-1");
    return east.is_object() && east["silent_since"].is_string() &&
           east["silent_rounds"].is_number() && east["silent_rounds"].get<int>() >= 3 &&
           Health("eu-central-1").rfind("unreachable", 0) == 0;
  })) << RegionEntry("us-east-1").dump()
      << "\n"
      << RegionEntry("eu-central-1").dump();
  json east = RegionEntry("us-east-1");
  EXPECT_TRUE(east["silent_since"].is_string()) << east.dump();
  EXPECT_FALSE(eu_ever_silent) << "a catalog answering 503 is alive";
  EXPECT_TRUE(RegionEntry("eu-central-1")["silent_rounds"].is_null());

  // The CLI shows the same.
  auto cli = RunCommand({IcewardenBinary(), "status", "--server", url_, "--token", "e2e-admin"});
  EXPECT_EQ(cli.exit_code, 0) << cli.err;
  EXPECT_NE(cli.out.find("SILENT"), std::string::npos) << cli.out;
  EXPECT_NE(cli.out.find("since " + east["silent_since"].get<std::string>()), std::string::npos)
      << cli.out;

  // 401 on every request: refused credentials are an answer too. Watch it for a while.
  Admin("/lab/regions/eu-central-1/faults", R"({"error_status":401})");
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(3);
  while (std::chrono::steady_clock::now() < until) {
    EXPECT_FALSE(Silent("eu-central-1")) << RegionEntry("eu-central-1").dump();
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  const json eu = RegionEntry("eu-central-1");
  EXPECT_NE(eu["last_probe_round"]["detail"].get<std::string>().find("401"), std::string::npos)
      << eu.dump();

  // Back up: the first answer ends the run.
  Admin("/lab/regions/us-east-1/start");
  ASSERT_TRUE(Eventually([&] { return !Silent("us-east-1"); })) << RegionEntry("us-east-1").dump();
}

// Regression: with the owner's catalog stopped, `icewarden lag` said "0 commits missing,
// worst 0ms, incomplete". Rows it cannot compare show their last comparison and the bound.
TEST_F(LabHealthTest, OwnerDownShowsTheLastKnownLagAndTheRpoBound) {
  // Once the replica holds sales.orders, it falls behind before the owner goes away.
  ASSERT_TRUE(Eventually([&] {
    json lag = Api("/api/v1/lag?table=sales.orders");
    return lag.contains("tables") && !lag["tables"].empty();
  })) << Api("/api/v1/lag").dump();
  Admin("/lab/replication/pause");
  ASSERT_TRUE(Eventually([&] {
    json lag = Api("/api/v1/lag?table=sales.orders");
    return lag.contains("tables") && !lag["tables"].empty() &&
           lag["tables"][0]["state"] == "behind";
  })) << Api("/api/v1/lag?table=sales.orders").dump();

  Admin("/lab/regions/us-east-1/stop");
  json row;
  ASSERT_TRUE(Eventually([&] {
    json lag = Api("/api/v1/lag?table=sales.orders");
    if (!lag.contains("tables") || lag["tables"].empty()) return false;
    row = lag["tables"][0];
    return row["state"] == "unknown";
  })) << Api("/api/v1/lag?table=sales.orders").dump();
  ASSERT_TRUE(row["last_known"].is_object()) << row.dump();
  EXPECT_GE(row["last_known"]["missing_commits"].get<int>(), 1) << row.dump();
  EXPECT_GE(row["lag_bound_ms"].get<long long>(), row["last_known"]["lag_ms"].get<long long>());
  json summary = Api("/api/v1/lag?table=sales.orders")["summary"];
  EXPECT_EQ(summary["complete"], false);
  EXPECT_GT(summary["worst_bound_ms"].get<long long>(), 0) << summary.dump();

  auto cli = RunCommand({IcewardenBinary(), "lag", "--table", "sales.orders", "--server", url_,
                         "--token", "e2e-admin"});
  EXPECT_EQ(cli.exit_code, 0) << cli.err;
  EXPECT_NE(cli.out.find("incomplete (a catalog could not be read): RPO ≤ "), std::string::npos)
      << cli.out;
  EXPECT_NE(cli.out.find("owner us-east-1 could not be listed"), std::string::npos) << cli.out;
  EXPECT_NE(cli.out.find("; last known "), std::string::npos) << cli.out;
  EXPECT_NE(cli.out.find(" ago; RPO ≤ "), std::string::npos) << cli.out;
}

}  // namespace
}  // namespace icewarden
