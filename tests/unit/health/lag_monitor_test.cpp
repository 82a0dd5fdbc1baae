// LagMonitor over scripted catalogs: full first round, revalidating second round, a region
// that cannot be reached, and the last known lag that outlives an owner's outage.
#include "health/lag_monitor.h"

#include <gtest/gtest.h>

#include "tests/unit/health/lag_monitor_support.h"

namespace icewarden::testing {
namespace {

using std::chrono::seconds;

// sales.* and ops.* are owned by us-east-1; anything else is unowned.
std::optional<std::string> OwnerOf(const TableIdent& t) {
  if (!t.namespace_levels.empty() &&
      (t.namespace_levels[0] == "sales" || t.namespace_levels[0] == "ops")) {
    return "us-east-1";
  }
  return std::nullopt;
}

class LagMonitorTest : public ::testing::Test {
 protected:
  std::unique_ptr<LagMonitor> Monitor() {
    LagMonitorOptions o;
    o.policy = LagPolicy{std::chrono::minutes(15), std::chrono::hours(1)};
    return std::make_unique<LagMonitor>(catalogs_.Clients(), OwnerOf, clock_, o);
  }

  // us-east-1: sales (orders, refunds), sales.eu (customers), ops (events); namespaces in
  // two pages.
  void ExpectOwnerListing() {
    auto& us = catalogs_["us-east-1"];
    us.ExpectNamespaces("", {{"sales"}}, "", "p2");
    us.ExpectNamespaces("", {{"ops"}}, "p2");
    us.ExpectTables("sales", {"sales"}, {"orders", "refunds"});
    us.ExpectNamespaces("sales", {{"sales", "eu"}});
    us.ExpectTables("sales%1Feu", {"sales", "eu"}, {"customers"});
    us.ExpectNamespaces("sales%1Feu", {});
    us.ExpectTables("ops", {"ops"}, {"events"});
    us.ExpectNamespaces("ops", {});
  }
  // eu-central-1: sales (orders, refunds, scratch), sales.eu (customers), tmp (t).
  void ExpectReplicaListing() {
    auto& eu = catalogs_["eu-central-1"];
    eu.ExpectNamespaces("", {{"sales"}, {"tmp"}});
    eu.ExpectTables("sales", {"sales"}, {"orders", "refunds", "scratch"});
    eu.ExpectNamespaces("sales", {{"sales", "eu"}});
    eu.ExpectTables("sales%1Feu", {"sales", "eu"}, {"customers"});
    eu.ExpectNamespaces("sales%1Feu", {});
    eu.ExpectTables("tmp", {"tmp"}, {"t"});
    eu.ExpectNamespaces("tmp", {});
  }

  Result<LagReport> RunRound(LagMonitor& monitor) {
    std::optional<Result<LagReport>> got;
    monitor.Refresh([&](Result<LagReport> r) { got.emplace(std::move(r)); });
    EXPECT_TRUE(got.has_value()) << "a round over synchronous fakes finishes in Refresh";
    return got ? *got : Result<LagReport>(Status::Internal("no report"));
  }

  const TableLag& Row(const LagReport& r, const std::string& table, const std::string& replica) {
    for (const auto& row : r.tables) {
      if (row.table.ToString() == table && row.replica == replica) return row;
    }
    ADD_FAILURE() << "no row for " << table << " in " << replica;
    static const TableLag kNone;
    return kNone;
  }

  void TearDown() override { catalogs_.ExpectAllConsumed(); }

  FakeClock clock_{kLagT0};
  ScriptedCatalogs catalogs_;
};

TEST_F(LagMonitorTest, FirstRoundLoadsEverythingSecondRevalidatesWithEtags) {
  catalogs_.Add("us-east-1", clock_);
  catalogs_.Add("eu-central-1", clock_);
  auto& us = catalogs_["us-east-1"];
  auto& eu = catalogs_["eu-central-1"];
  auto monitor = Monitor();
  EXPECT_EQ(monitor->latest(), nullptr);

  // Round 1. Loads go out in (region, table) order; tables sort by namespace, then name.
  eu.ExpectConfig();
  ExpectReplicaListing();
  us.ExpectConfig();
  ExpectOwnerListing();
  eu.ExpectLoad("sales", "orders", 3, "\"eu-orders-3\"");
  eu.ExpectLoad("sales", "refunds", 2, "\"eu-refunds-2\"");
  eu.ExpectLoad("sales%1Feu", "customers", 1, "\"eu-customers-1\"");
  us.ExpectLoad("sales", "orders", 5, "\"us-orders-5\"");
  us.ExpectLoad("sales", "refunds", 2, "\"us-refunds-2\"");
  us.ExpectLoad("sales%1Feu", "customers", 1, "\"us-customers-1\"");
  clock_.Set(kLagT0 + 4'000 + 30'000);  // snapshot 4 of orders is 30s old

  auto first = RunRound(*monitor);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_EQ(first->loads_sent, 6);
  EXPECT_EQ(first->loads_not_modified, 0);
  EXPECT_TRUE(first->region_errors.empty());
  EXPECT_EQ(first->unowned_tables, 1);  // tmp.t
  EXPECT_EQ(first->at, kLagT0 + 34'000);
  ASSERT_EQ(first->tables.size(), 4u);  // ops.events has no replica: no row
  EXPECT_EQ(first->tables[0].table.ToString(), "sales.orders");
  EXPECT_EQ(first->tables[3].table.ToString(), "sales.eu.customers");
  const TableLag& orders = Row(*first, "sales.orders", "eu-central-1");
  EXPECT_EQ(orders.state, LagState::kBehind);
  EXPECT_EQ(orders.missing_commits, 2);
  EXPECT_EQ(orders.lag, seconds(30));
  EXPECT_EQ(orders.reason,
            "sales.orders: eu-central-1 is 2 commits behind us-east-1, oldest 30s ago");
  EXPECT_EQ(Row(*first, "sales.refunds", "eu-central-1").state, LagState::kCaughtUp);
  EXPECT_EQ(Row(*first, "sales.eu.customers", "eu-central-1").state, LagState::kCaughtUp);
  const TableLag& scratch = Row(*first, "sales.scratch", "eu-central-1");
  EXPECT_EQ(scratch.state, LagState::kNotInOwner);
  EXPECT_EQ(scratch.reason, "sales.scratch: in eu-central-1 but not in owner catalog us-east-1");
  for (const auto& req : us.transport.requests()) EXPECT_FALSE(req.headers.Has("If-None-Match"));
  ASSERT_NE(monitor->latest(), nullptr);
  EXPECT_EQ(monitor->latest()->tables.size(), 4u);

  // Round 2, 10s later: only the owner's refunds changed (snapshot 3 at kLagT0 + 3s).
  const size_t us_before = us.transport.requests().size();
  const size_t eu_before = eu.transport.requests().size();
  ExpectReplicaListing();
  ExpectOwnerListing();
  eu.ExpectNotModified("sales", "orders", "\"eu-orders-3\"");
  eu.ExpectNotModified("sales", "refunds", "\"eu-refunds-2\"");
  eu.ExpectNotModified("sales%1Feu", "customers", "\"eu-customers-1\"");
  us.ExpectNotModified("sales", "orders", "\"us-orders-5\"");
  us.ExpectLoad("sales", "refunds", 3, "\"us-refunds-3\"");
  us.ExpectNotModified("sales%1Feu", "customers", "\"us-customers-1\"");
  clock_.Advance(seconds(10));

  auto second = RunRound(*monitor);
  ASSERT_TRUE(second.ok()) << second.status().ToString();
  EXPECT_EQ(second->loads_sent, 6);
  EXPECT_EQ(second->loads_not_modified, 5);
  // Every load revalidated with the ETag of the view it remembered.
  std::vector<std::string> sent;
  for (const auto* t : {&eu.transport, &us.transport}) {
    const size_t from = t == &eu.transport ? eu_before : us_before;
    for (size_t i = from; i < t->requests().size(); ++i) {
      const auto& req = t->requests()[i];
      if (req.url.find("?snapshots=all") == std::string::npos) continue;
      sent.push_back(req.headers.Get("If-None-Match").value_or("(none)"));
    }
  }
  EXPECT_EQ(sent, (std::vector<std::string>{"\"eu-orders-3\"", "\"eu-refunds-2\"",
                                            "\"eu-customers-1\"", "\"us-orders-5\"",
                                            "\"us-refunds-2\"", "\"us-customers-1\""}));
  const TableLag& refunds = Row(*second, "sales.refunds", "eu-central-1");
  EXPECT_EQ(refunds.state, LagState::kBehind);
  EXPECT_EQ(refunds.missing_commits, 1);
  EXPECT_EQ(refunds.oldest_missing_at, kLagT0 + 3'000);
  EXPECT_EQ(refunds.lag, seconds(41));
  // Unchanged views are reused, measured against the new time.
  EXPECT_EQ(Row(*second, "sales.orders", "eu-central-1").lag, seconds(40));
  EXPECT_EQ(monitor->latest()->loads_not_modified, 5);
}

TEST_F(LagMonitorTest, UnreachableRegionIsReportedAndTheOthersAreStillCompared) {
  catalogs_.Add("us-east-1", clock_);
  catalogs_.Add("eu-central-1", clock_);
  catalogs_.Add("ap-south-1", clock_);
  auto& us = catalogs_["us-east-1"];
  auto& eu = catalogs_["eu-central-1"];
  catalogs_["ap-south-1"].transport.ExpectError(
      "GET", "http://ap-south-1.test/catalog/v1/config?warehouse=lake",
      Status::Unavailable("connect ap-south-1.test:80: Connection refused"));
  eu.ExpectConfig();
  ExpectReplicaListing();
  us.ExpectConfig();
  ExpectOwnerListing();
  eu.ExpectLoad("sales", "orders", 5, "\"e1\"");
  eu.ExpectLoad("sales", "refunds", 2, "\"e2\"");
  eu.ExpectLoad("sales%1Feu", "customers", 1, "\"e3\"");
  us.ExpectLoad("sales", "orders", 5, "\"u1\"");
  us.ExpectLoad("sales", "refunds", 2, "\"u2\"");
  us.ExpectLoad("sales%1Feu", "customers", 1, "\"u3\"");
  clock_.Set(kLagT0 + 60'000);

  auto monitor = Monitor();
  auto report = RunRound(*monitor);
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  ASSERT_EQ(report->region_errors.size(), 1u);
  EXPECT_EQ(report->region_errors[0],
            "ap-south-1: list namespaces: get catalog config from "
            "http://ap-south-1.test/catalog: connect ap-south-1.test:80: Connection refused");
  EXPECT_EQ(Row(*report, "sales.orders", "eu-central-1").state, LagState::kCaughtUp);
  EXPECT_EQ(Row(*report, "sales.refunds", "eu-central-1").state, LagState::kCaughtUp);
  // Never listed, ap-south-1 may hold any table its owner has: the RPO there is unknown.
  const TableLag& ap = Row(*report, "sales.orders", "ap-south-1");
  EXPECT_EQ(ap.state, LagState::kUnknown);
  EXPECT_FALSE(ap.within_max_staleness);
  EXPECT_EQ(ap.reason.rfind("sales.orders: ap-south-1 could not be listed: list namespaces: ", 0),
            0u)
      << ap.reason;
  EXPECT_EQ(Row(*report, "ops.events", "ap-south-1").state, LagState::kUnknown);
  EXPECT_FALSE(Summarise(report->tables).complete);
}

TEST_F(LagMonitorTest, ReplicaDownAfterAGoodRoundKeepsItsTablesAndViews) {
  catalogs_.Add("us-east-1", clock_);
  catalogs_.Add("eu-central-1", clock_);
  auto& us = catalogs_["us-east-1"];
  auto& eu = catalogs_["eu-central-1"];
  auto monitor = Monitor();
  auto expect_loads = [&] {
    eu.ExpectLoad("sales", "orders", 5, "\"e1\"");
    eu.ExpectLoad("sales", "refunds", 2, "\"e2\"");
    eu.ExpectLoad("sales%1Feu", "customers", 1, "\"e3\"");
  };
  eu.ExpectConfig();
  ExpectReplicaListing();
  us.ExpectConfig();
  ExpectOwnerListing();
  expect_loads();
  us.ExpectLoad("sales", "orders", 5, "\"u1\"");
  us.ExpectLoad("sales", "refunds", 2, "\"u2\"");
  us.ExpectLoad("sales%1Feu", "customers", 1, "\"u3\"");
  ASSERT_TRUE(RunRound(*monitor).ok());

  // eu-central-1 goes away: its three tables from the last listing are unknown, and the
  // owner's loads still revalidate.
  eu.transport.ExpectError("GET", eu.Root() + "/namespaces?pageToken=&pageSize=100",
                           Status::Unavailable("connect eu-central-1.test:80: Connection refused"));
  ExpectOwnerListing();
  auto down = RunRound(*monitor);
  ASSERT_TRUE(down.ok()) << down.status().ToString();
  EXPECT_EQ(down->region_errors.size(), 1u);
  EXPECT_EQ(down->loads_sent, 0);      // nothing to compare without the replica
  ASSERT_EQ(down->tables.size(), 3u);  // orders, refunds, customers; not scratch
  for (const auto& row : down->tables) {
    EXPECT_EQ(row.state, LagState::kUnknown) << row.reason;
    EXPECT_NE(row.reason.find("eu-central-1 could not be listed"), std::string::npos);
  }

  // Back: the views remembered before the outage are revalidated, not reloaded.
  ExpectReplicaListing();
  ExpectOwnerListing();
  eu.ExpectNotModified("sales", "orders", "\"e1\"");
  eu.ExpectNotModified("sales", "refunds", "\"e2\"");
  eu.ExpectNotModified("sales%1Feu", "customers", "\"e3\"");
  us.ExpectNotModified("sales", "orders", "\"u1\"");
  us.ExpectNotModified("sales", "refunds", "\"u2\"");
  us.ExpectNotModified("sales%1Feu", "customers", "\"u3\"");
  auto back = RunRound(*monitor);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_TRUE(back->region_errors.empty());
  EXPECT_EQ(back->loads_not_modified, 6);
  EXPECT_EQ(Row(*back, "sales.orders", "eu-central-1").state, LagState::kCaughtUp);
}

// Regression: with the owner unreachable, `icewarden lag` said "0 commits missing, worst
// 0ms": the rows carried nothing. They carry the last comparison of their pair, kept across
// unknown rounds and replaced once the pair is compared again.
TEST_F(LagMonitorTest, OwnerDownAfterAGoodRoundKeepsTheLastKnownLag) {
  catalogs_.Add("us-east-1", clock_);
  catalogs_.Add("eu-central-1", clock_);
  auto& us = catalogs_["us-east-1"];
  auto& eu = catalogs_["eu-central-1"];
  auto monitor = Monitor();
  eu.ExpectConfig();
  ExpectReplicaListing();
  us.ExpectConfig();
  ExpectOwnerListing();
  eu.ExpectLoad("sales", "orders", 3, "\"e1\"");
  eu.ExpectLoad("sales", "refunds", 2, "\"e2\"");
  eu.ExpectLoad("sales%1Feu", "customers", 1, "\"e3\"");
  us.ExpectLoad("sales", "orders", 5, "\"u1\"");
  us.ExpectLoad("sales", "refunds", 2, "\"u2\"");
  us.ExpectLoad("sales%1Feu", "customers", 1, "\"u3\"");
  clock_.Set(kLagT0 + 34'000);  // orders: snapshots 4 and 5 missing, the oldest 30s old
  auto good = RunRound(*monitor);
  ASSERT_TRUE(good.ok()) << good.status().ToString();
  EXPECT_EQ(Row(*good, "sales.orders", "eu-central-1").last_known_at, std::nullopt);

  auto owner_down_round = [&] {
    us.transport.ExpectError("GET", us.Root() + "/namespaces?pageToken=&pageSize=100",
                             Status::Unavailable("connect us-east-1.test:80: Connection refused"));
    ExpectReplicaListing();
    auto r = RunRound(*monitor);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? *r : LagReport{};
  };
  clock_.Advance(seconds(10));
  LagReport down = owner_down_round();
  const TableLag& orders = Row(down, "sales.orders", "eu-central-1");
  EXPECT_EQ(orders.state, LagState::kUnknown);
  EXPECT_EQ(orders.missing_commits, 0);              // nothing measured this round...
  EXPECT_EQ(orders.last_known_at, kLagT0 + 34'000);  // ...but this was, 10s ago
  EXPECT_EQ(orders.last_known_lag, seconds(30));
  EXPECT_EQ(orders.last_known_missing, 2);
  EXPECT_EQ(LagUpperBound(orders, down.at), seconds(40));
  const TableLag& refunds = Row(down, "sales.refunds", "eu-central-1");
  EXPECT_EQ(refunds.last_known_at, kLagT0 + 34'000);
  EXPECT_EQ(refunds.last_known_missing, 0);
  EXPECT_EQ(LagUpperBound(refunds, down.at), seconds(10));
  // scratch was not in the owner's catalog: no lag was ever measured for it.
  const TableLag& scratch = Row(down, "sales.scratch", "eu-central-1");
  EXPECT_EQ(scratch.state, LagState::kUnknown);
  EXPECT_EQ(scratch.last_known_at, std::nullopt);

  // A second round without the owner keeps the same comparison; the bound grows with it.
  clock_.Advance(seconds(25));
  LagReport still = owner_down_round();
  const TableLag& still_orders = Row(still, "sales.orders", "eu-central-1");
  EXPECT_EQ(still_orders.last_known_at, kLagT0 + 34'000);
  EXPECT_EQ(LagUpperBound(still_orders, still.at), seconds(65));
  ScopeLag scope = Summarise(still.tables, still.at);
  EXPECT_EQ(scope.worst_lag, seconds(0));
  EXPECT_EQ(scope.worst_bound, seconds(65));
  EXPECT_EQ(scope.worst_bound_table->ToString(), "sales.orders");
  EXPECT_EQ(scope.unbounded, 1);  // scratch

  // Back: compared again, and that comparison is the one the next outage reports.
  ExpectReplicaListing();
  ExpectOwnerListing();
  eu.ExpectNotModified("sales", "orders", "\"e1\"");
  eu.ExpectNotModified("sales", "refunds", "\"e2\"");
  eu.ExpectNotModified("sales%1Feu", "customers", "\"e3\"");
  us.ExpectNotModified("sales", "orders", "\"u1\"");
  us.ExpectNotModified("sales", "refunds", "\"u2\"");
  us.ExpectNotModified("sales%1Feu", "customers", "\"u3\"");
  clock_.Advance(seconds(1));
  auto back = RunRound(*monitor);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  const TableLag& back_orders = Row(*back, "sales.orders", "eu-central-1");
  EXPECT_EQ(back_orders.state, LagState::kBehind);
  EXPECT_EQ(back_orders.lag, seconds(66));
  EXPECT_EQ(back_orders.last_known_at, std::nullopt);

  clock_.Advance(seconds(5));
  LagReport again = owner_down_round();
  const TableLag& again_orders = Row(again, "sales.orders", "eu-central-1");
  EXPECT_EQ(again_orders.last_known_at, kLagT0 + 70'000);
  EXPECT_EQ(again_orders.last_known_lag, seconds(66));
  EXPECT_EQ(LagUpperBound(again_orders, again.at), seconds(71));
}

TEST_F(LagMonitorTest, FailedReplicaLoadMakesOnlyThatRowUnknown) {
  catalogs_.Add("us-east-1", clock_);
  catalogs_.Add("eu-central-1", clock_);
  auto& us = catalogs_["us-east-1"];
  auto& eu = catalogs_["eu-central-1"];
  eu.ExpectConfig();
  ExpectReplicaListing();
  us.ExpectConfig();
  ExpectOwnerListing();
  eu.ExpectLoad("sales", "orders", 5, "\"e1\"");
  eu.transport.Expect("GET", eu.TableUrl("sales", "refunds"),
                      JsonResponse(403, R"({"error": {"message": "no", "type": "Forbidden",
                                                       "code": 403}})"));
  eu.ExpectLoad("sales%1Feu", "customers", 1, "\"e3\"");
  us.ExpectLoad("sales", "orders", 5, "\"u1\"");
  us.ExpectLoad("sales", "refunds", 2, "\"u2\"");
  us.ExpectLoad("sales%1Feu", "customers", 1, "\"u3\"");

  auto monitor = Monitor();
  auto report = RunRound(*monitor);
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_TRUE(report->region_errors.empty());
  EXPECT_EQ(report->loads_failed, 1);
  const TableLag& refunds = Row(*report, "sales.refunds", "eu-central-1");
  EXPECT_EQ(refunds.state, LagState::kUnknown);
  EXPECT_EQ(refunds.reason,
            "sales.refunds: could not load from eu-central-1: load table sales.refunds: HTTP 403 "
            "Forbidden: no");
  EXPECT_EQ(Row(*report, "sales.orders", "eu-central-1").state, LagState::kCaughtUp);
}

TEST_F(LagMonitorTest, RefreshDuringARoundJoinsIt) {
  catalogs_.Add("us-east-1", clock_);
  auto& us = catalogs_["us-east-1"];
  us.transport.HoldCompletions();
  us.ExpectConfig();
  us.ExpectNamespaces("", {});
  auto monitor = Monitor();
  int calls = 0;
  monitor->Refresh([&](Result<LagReport> r) { calls += r.ok(); });
  monitor->Refresh([&](Result<LagReport> r) { calls += r.ok(); });
  EXPECT_EQ(calls, 0);
  us.transport.DeliverHeld();
  EXPECT_EQ(calls, 2);
  EXPECT_EQ(us.transport.requests().size(), 2u);  // one round: config and one listing
}

TEST_F(LagMonitorTest, DestroyedMidRoundReportsUnavailable) {
  catalogs_.Add("us-east-1", clock_);
  auto& us = catalogs_["us-east-1"];
  us.transport.HoldCompletions();
  us.ExpectConfig();
  us.ExpectNamespaces("", {});
  auto monitor = Monitor();
  std::optional<Result<LagReport>> got;
  monitor->Refresh([&](Result<LagReport> r) { got.emplace(std::move(r)); });
  monitor.reset();
  us.transport.DeliverHeld();
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(got->status().code(), StatusCode::kUnavailable);
}

}  // namespace
}  // namespace icewarden::testing
