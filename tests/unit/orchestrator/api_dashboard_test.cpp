// The dashboard's routes: its files, compiled in or read from a development folder, with the
// headers that keep the page to itself; who the signed-in person is; and the ownership and
// lag shapes its pages read (filters and paging over a real SQLite store's order).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "health/lag_monitor.h"
#include "orchestrator/api/api.h"
#include "orchestrator/api/lag.h"
#include "orchestrator/api/ui.h"
#include "orchestrator/dashboard/dashboard.h"
#include "orchestrator/watch/live_view.h"
#include "state/sqlite_store.h"
#include "tests/fakes/fake_clock.h"
#include "tests/fakes/test_paths.h"

namespace icewarden {
namespace {

using nlohmann::json;

std::string Header(const ApiResponse& res, const std::string& name) {
  for (const auto& [n, v] : res.headers)
    if (n == name) return v;
  return "";
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

class ApiDashboardTest : public ::testing::Test {
 protected:
  ApiDashboardTest() {
    auto opened = OpenSqliteStore({":memory:"}, clock_);
    EXPECT_TRUE(opened.ok());
    store_ = std::move(*opened);
    ApiConfig c;
    c.tokens = {{"vera", Role::kViewer, Secret("viewer-secret")},
                {"anna", Role::kApprover, Secret("approver-secret")}};
    api_ = std::make_unique<Api>(c, *store_, *clock_, nullptr);
    api_->SetDashboard(&dashboard_);
    api_->SetLiveView(&live_);
  }

  ApiResponse Get(const std::string& target, const std::string& token = "") {
    ApiRequest req{"GET", target, {}, "", "127.0.0.1:5555"};
    if (!token.empty()) req.headers["authorization"] = "Bearer " + token;
    return api_->Handle(req);
  }

  void Claim(const std::string& dotted, const std::string& owner) {
    OwnershipChange c{*TableIdent::Parse(dotted), 0, owner, ""};
    AuditEvent why;
    why.actor = "test";
    why.action = "ownership.claim";
    why.target = dotted;
    ASSERT_TRUE(store_->CompareAndSetOwnership({&c, 1}, why).ok());
  }

  std::vector<std::string> Tables(const std::string& query) {
    ApiResponse res = Get("/api/v1/ownership?" + query, "viewer-secret");
    EXPECT_EQ(res.status, 200) << res.body;
    std::vector<std::string> out;
    if (res.status != 200) return out;
    const json body = json::parse(res.body);
    for (const json& t : body["tables"]) out.push_back(t["table"]);
    return out;
  }

  std::shared_ptr<testing::FakeClock> clock_ = std::make_shared<testing::FakeClock>();
  std::unique_ptr<StateStore> store_;
  Dashboard dashboard_ = Dashboard::Embedded();
  LiveView live_;
  std::unique_ptr<Api> api_;
};

TEST_F(ApiDashboardTest, ThePageNeedsNoTokenAndComesWithAStrictPolicy) {
  ApiResponse res = Get("/");
  ASSERT_EQ(res.status, 200) << res.body;
  EXPECT_EQ(res.content_type, "text/html; charset=utf-8");
  EXPECT_NE(res.body.find("<script type=\"module\" src=\"/ui/app.js\">"), std::string::npos);
  const std::string csp = Header(res, "Content-Security-Policy");
  EXPECT_NE(csp.find("default-src 'none'"), std::string::npos) << csp;
  EXPECT_NE(csp.find("script-src 'self'"), std::string::npos) << csp;
  EXPECT_NE(csp.find("connect-src 'self'"), std::string::npos) << csp;
  EXPECT_NE(csp.find("frame-ancestors 'none'"), std::string::npos) << csp;
  EXPECT_EQ(csp.find("unsafe"), std::string::npos) << "no inline or eval'd script: " << csp;
  EXPECT_EQ(Header(res, "X-Content-Type-Options"), "nosniff");
  EXPECT_EQ(Header(res, "Set-Cookie"), "");
}

TEST_F(ApiDashboardTest, EveryFileIsServedByteForByteWithItsType) {
  const std::string www = testing::SourceDir() + "/orchestrator/dashboard/www";
  std::size_t files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(www)) {
    const std::string name = entry.path().filename().string();
    ApiResponse res = Get("/ui/" + name);
    ASSERT_EQ(res.status, 200) << name << ": " << res.body;
    EXPECT_EQ(res.body, ReadFile(entry.path().string())) << name << " is not what is on disk";
    EXPECT_EQ(res.content_type, *DashboardContentType(name)) << name;
    EXPECT_NE(Header(res, "Content-Security-Policy"), "") << name;
    ++files;
  }
  EXPECT_EQ(files, Dashboard::EmbeddedNames().size()) << "a file is missing from the binary";
  EXPECT_EQ(Get("/ui/app.js").content_type, "text/javascript; charset=utf-8");
}

TEST_F(ApiDashboardTest, NothingOutsideTheDashboardsFilesIsServed) {
  EXPECT_EQ(Get("/ui/a%00.js").status, 400);
  for (const char* target : {"/ui/missing.js", "/ui/%2e%2e%2fCMakeLists.txt", "/ui/..",
                             "/ui/.hidden.js", "/ui/app.js.bak", "/ui/index.html/"}) {
    ApiResponse res = Get(target);
    EXPECT_EQ(res.status, 404) << target << ": " << res.body;
    EXPECT_EQ(json::parse(res.body)["error"]["code"], "not_found") << target;
  }
  Api bare(ApiConfig{}, *store_, *clock_, nullptr);
  ApiRequest req{"GET", "/", {}, "", "t"};
  EXPECT_EQ(bare.Handle(req).status, 503) << "a daemon without a dashboard says so";
}

TEST(DashboardFromDirectory, AChangeOnDiskShowsOnTheNextRequest) {
  const std::string dir = testing::MakeTempDir("icewarden-dashboard");
  std::ofstream(dir + "/index.html") << "<p>one</p>";
  const Dashboard d = Dashboard::FromDirectory(dir);
  ASSERT_TRUE(d.Find("index.html"));
  EXPECT_EQ(d.Find("index.html")->body, "<p>one</p>");
  std::ofstream(dir + "/index.html") << "<p>two</p>";
  EXPECT_EQ(d.Find("index.html")->body, "<p>two</p>");
  std::ofstream(dir + "/notes.txt") << "secret";
  EXPECT_FALSE(d.Find("notes.txt")) << "an extension the dashboard does not use";
  EXPECT_FALSE(d.Find("../index.html"));
  std::filesystem::remove_all(dir);
}

TEST_F(ApiDashboardTest, TheSessionSaysWhoSignedInAndWhatTheyMayDo) {
  EXPECT_EQ(Get("/api/v1/session").status, 401);
  EXPECT_EQ(Get("/api/v1/session", "wrong").status, 401);
  json viewer = json::parse(Get("/api/v1/session", "viewer-secret").body);
  EXPECT_EQ(viewer["name"], "vera");
  EXPECT_EQ(viewer["role"], "viewer");
  EXPECT_EQ(viewer["permissions"], json({"read_regions", "read_ownership", "read_failovers"}));
  json approver = json::parse(Get("/api/v1/session", "approver-secret").body);
  EXPECT_EQ(approver["role"], "approver");
  const auto& p = approver["permissions"];
  EXPECT_NE(std::find(p.begin(), p.end(), "approve_failover"), p.end());
  EXPECT_NE(std::find(p.begin(), p.end(), "confirm_fencing"), p.end());
  EXPECT_EQ(std::find(p.begin(), p.end(), "propose_failover"), p.end());
}

TEST_F(ApiDashboardTest, OwnershipFiltersByNamespaceAndTheNamespacesInsideIt) {
  for (const char* t : {"eu.orders", "sales.orders", "sales.eu.orders", "sales.eu.returns",
                        "salesx.orders", "sales-archive.orders", "zeta.t"})
    Claim(t, "us-east-1");
  EXPECT_EQ(Tables("namespace=sales"),
            (std::vector<std::string>{"sales.orders", "sales.eu.orders", "sales.eu.returns"}));
  EXPECT_EQ(Tables("namespace=sales.eu"),
            (std::vector<std::string>{"sales.eu.orders", "sales.eu.returns"}));
  // Paged: the cursor is the last table of the page, and the filter holds across pages.
  ApiResponse first = Get("/api/v1/ownership?namespace=sales&limit=2", "viewer-secret");
  json j = json::parse(first.body);
  ASSERT_EQ(j["tables"].size(), 2u);
  EXPECT_EQ(j["next_after"], "sales.eu.orders");
  EXPECT_EQ(Tables("namespace=sales&after=sales.eu.orders"),
            std::vector<std::string>{"sales.eu.returns"});
  EXPECT_EQ(Tables("namespace=nothing"), std::vector<std::string>{});
  for (const char* bad : {"namespace=", "namespace=sales..eu", "namespace=.sales", "state=red"}) {
    ApiResponse res = Get(std::string("/api/v1/ownership?") + bad, "viewer-secret");
    EXPECT_EQ(res.status, 400) << bad;
  }
  EXPECT_NE(Get("/api/v1/ownership?state=red", "viewer-secret").body.find("behind, caught_up"),
            std::string::npos)
      << "the error lists the states";
}

TableLag Lag(const std::string& table, const std::string& replica, LagState state,
             std::chrono::milliseconds lag) {
  TableLag t;
  t.table = *TableIdent::Parse(table);
  t.owner = "us-east-1";
  t.replica = replica;
  t.state = state;
  t.lag = lag;
  t.missing_commits = state == LagState::kBehind ? 2 : 0;
  return t;
}

TEST_F(ApiDashboardTest, OwnershipRowsCarryTheWorstLagStateAndFilterByIt) {
  for (const char* t : {"a.one", "a.two", "a.three", "b.four"}) Claim(t, "us-east-1");
  LagReport report;
  report.at = 1'780'000'000'000;
  // Sorted by table, then replica, as the monitor publishes it.
  report.tables = {
      Lag("a.one", "eu-central-1", LagState::kCaughtUp, {}),
      Lag("a.one", "eu-west-1", LagState::kBehind, std::chrono::seconds(3)),
      Lag("a.three", "eu-central-1", LagState::kCaughtUp, {}),
      Lag("a.two", "eu-central-1", LagState::kDiverged, {}),
  };
  live_.PublishLag(report);
  json j = json::parse(Get("/api/v1/ownership", "viewer-secret").body);
  std::map<std::string, json> rows;
  for (const json& t : j["tables"]) rows[t["table"]] = t;
  EXPECT_EQ(rows["a.one"]["lag_state"], "behind") << "the worst of its replicas";
  EXPECT_EQ(rows["a.one"]["lag_bound_ms"], 3000);
  EXPECT_EQ(rows["a.two"]["lag_state"], "diverged");
  EXPECT_TRUE(rows["a.two"]["lag_bound_ms"].is_null()) << "a diverged replica has no bound";
  EXPECT_TRUE(rows["b.four"]["lag_state"].is_null());
  EXPECT_EQ(Tables("state=behind"), std::vector<std::string>{"a.one"});
  EXPECT_EQ(Tables("state=caught_up"), std::vector<std::string>{"a.three"});
  EXPECT_EQ(Tables("state=not_compared"), std::vector<std::string>{"b.four"});
  EXPECT_EQ(Tables("state=diverged&namespace=b"), std::vector<std::string>{});
}

TEST_F(ApiDashboardTest, OwnershipStateFilterPagesAcrossStoreBatches) {
  // More tables than one store batch (1000), with the matching ones spread out.
  LagReport report;
  report.at = 1'780'000'000'000;
  std::vector<std::string> behind;
  for (int i = 0; i < 2500; ++i) {
    char name[32];
    std::snprintf(name, sizeof name, "n.t%05d", i);
    Claim(name, "us-east-1");
    const bool is_behind = i % 700 == 0;
    if (is_behind) behind.push_back(name);
    report.tables.push_back(Lag(name, "eu-central-1",
                                is_behind ? LagState::kBehind : LagState::kCaughtUp,
                                std::chrono::seconds(1)));
  }
  live_.PublishLag(report);
  EXPECT_EQ(Tables("state=behind&limit=10"), behind);
  json j = json::parse(Get("/api/v1/ownership?state=behind&limit=2", "viewer-secret").body);
  EXPECT_EQ(j["next_after"], behind[1]);
}

TEST_F(ApiDashboardTest, TheAuditLogFiltersByActionFamilyAndActorAcrossBatches) {
  // 2,500 events: every 500th an approval by anna, the rest region records by the daemon.
  for (int i = 1; i <= 2500; ++i) {
    AuditEvent e;
    e.actor = i % 500 == 0 ? "anna" : "orchestrator";
    e.source = "test";
    e.action = i % 500 == 0 ? "failover.approve" : (i % 2 ? "region.record" : "failover.step");
    e.target = "t" + std::to_string(i);
    ASSERT_TRUE(store_->AppendAudit(e).ok());
  }
  auto seqs = [&](const std::string& query) {
    ApiResponse res = Get("/api/v1/audit?" + query, "approver-secret");
    EXPECT_EQ(res.status, 200) << res.body;
    std::vector<long long> out;
    const json body = json::parse(res.body);
    for (const json& e : body["events"]) out.push_back(e["seq"]);
    return std::pair(out, body["next_after_seq"]);
  };
  auto [approvals, next] = seqs("action=failover.approve");
  EXPECT_EQ(approvals, (std::vector<long long>{500, 1000, 1500, 2000, 2500}));
  EXPECT_TRUE(next.is_null());
  EXPECT_EQ(seqs("actor=anna").first.size(), 5u);
  EXPECT_EQ(seqs("actor=anna&action=region.").first.size(), 0u);
  // A family: every failover.* event; paged, the cursor continues where the page stopped.
  auto [page, cursor] = seqs("action=failover.&limit=3");
  EXPECT_EQ(page, (std::vector<long long>{2, 4, 6}));
  ASSERT_TRUE(cursor.is_number()) << "there is a next page";
  auto [second, after_second] =
      seqs("action=failover.&limit=3&after_seq=" + std::to_string(cursor.get<long long>()));
  EXPECT_EQ(second, (std::vector<long long>{8, 10, 12})) << "nothing skipped, nothing twice";
  auto [late, rest] = seqs("action=failover.approve&after_seq=1000");
  EXPECT_EQ(late, (std::vector<long long>{1500, 2000, 2500}));
  EXPECT_EQ(json::parse(Get("/api/v1/audit?limit=1", "approver-secret").body)["last_seq"], 2500);
  EXPECT_EQ(Get("/api/v1/audit?action=", "approver-secret").status, 400);
}

TEST_F(ApiDashboardTest, AFilterReadsABoundedNumberOfTablesAndThePageGoesOnFromThere) {
  // 100,500 tables; only the last is behind. The first page reads 100,000 tables, finds
  // nothing and says where it stopped; the next goes on from there and finds it.
  std::vector<OwnershipChange> batch;
  AuditEvent why;
  why.actor = "test";
  why.action = "ownership.claim";
  why.target = "seed";
  for (int i = 0; i < 100500; ++i) {
    char name[32];
    std::snprintf(name, sizeof name, "n.t%06d", i);
    batch.push_back({*TableIdent::Parse(name), 0, "us-east-1", ""});
    if (batch.size() == 5000 || i == 100499) {
      ASSERT_TRUE(store_->CompareAndSetOwnership(batch, why).ok());
      batch.clear();
    }
  }
  LagReport report;
  report.at = 1'780'000'000'000;
  report.tables = {Lag("n.t100499", "eu-central-1", LagState::kBehind, std::chrono::seconds(2))};
  live_.PublishLag(report);
  json first = json::parse(Get("/api/v1/ownership?state=behind&limit=100", "viewer-secret").body);
  EXPECT_EQ(first["tables"].size(), 0u);
  ASSERT_EQ(first["next_after"], "n.t099999") << "where the bounded read stopped";
  EXPECT_EQ(Tables("state=behind&limit=100&after=n.t099999"),
            std::vector<std::string>{"n.t100499"});
}

TEST(ApiLagPairs, EachRegionPairIsSummarisedWithItsStates) {
  LagReport report;
  report.at = 1'780'000'000'000;
  report.tables = {Lag("a.one", "eu-central-1", LagState::kBehind, std::chrono::seconds(4)),
                   Lag("a.one", "eu-west-1", LagState::kCaughtUp, {}),
                   Lag("a.two", "eu-central-1", LagState::kDiverged, {}),
                   Lag("a.zed", "eu-central-1", LagState::kBehind, std::chrono::seconds(9))};
  json pairs = LagReportJson(report, {})["pairs"];
  ASSERT_EQ(pairs.size(), 2u);
  EXPECT_EQ(pairs[0]["owner"], "us-east-1");
  EXPECT_EQ(pairs[0]["replica"], "eu-central-1");
  EXPECT_EQ(pairs[0]["tables"], 3);
  EXPECT_EQ(pairs[0]["states"], json({{"behind", 2}, {"diverged", 1}}));
  EXPECT_EQ(pairs[0]["missing_commits"], 4);
  EXPECT_EQ(pairs[0]["worst_bound_ms"], 9000);
  EXPECT_EQ(pairs[0]["worst_table"], "a.zed");
  EXPECT_EQ(pairs[0]["unbounded"], 1);
  EXPECT_EQ(pairs[1]["replica"], "eu-west-1");
  EXPECT_EQ(pairs[1]["states"], json({{"caught_up", 1}}));
}

}  // namespace
}  // namespace icewarden
