// ListCatalogTables (nested namespaces, a server that ignores `parent`, failure) and
// InFlightLimit.
#include "health/catalog_inventory.h"

#include <gtest/gtest.h>

#include <deque>

#include "tests/unit/health/lag_monitor_support.h"

namespace icewarden::testing {
namespace {

class CatalogInventoryTest : public ::testing::Test {
 protected:
  Result<std::vector<TableIdent>> List(int max_in_flight = 16) {
    InFlightLimit limit(max_in_flight);
    std::optional<Result<std::vector<TableIdent>>> got;
    ListCatalogTables(*catalogs_["us-east-1"].client, limit,
                      [&](Result<std::vector<TableIdent>> r) { got.emplace(std::move(r)); });
    EXPECT_TRUE(got.has_value());
    return got ? *got : Result<std::vector<TableIdent>>(Status::Internal("no result"));
  }
  void TearDown() override { catalogs_.ExpectAllConsumed(); }

  FakeClock clock_;
  ScriptedCatalogs catalogs_;
};

TEST_F(CatalogInventoryTest, WalksNestedNamespaces) {
  auto& us = catalogs_.Add("us-east-1", clock_);
  us.ExpectConfig();
  us.ExpectNamespaces("", {{"sales"}});
  us.ExpectTables("sales", {"sales"}, {"orders"});
  us.ExpectNamespaces("sales", {{"sales", "eu"}});
  us.ExpectTables("sales%1Feu", {"sales", "eu"}, {"customers"});
  us.ExpectNamespaces("sales%1Feu", {{"sales", "eu", "de"}});
  us.ExpectTables("sales%1Feu%1Fde", {"sales", "eu", "de"}, {"invoices"});
  us.ExpectNamespaces("sales%1Feu%1Fde", {});
  auto tables = List();
  ASSERT_TRUE(tables.ok()) << tables.status().ToString();
  std::vector<std::string> names;
  for (const auto& t : *tables) names.push_back(t.ToString());
  EXPECT_EQ(names, (std::vector<std::string>{"sales.orders", "sales.eu.customers",
                                             "sales.eu.de.invoices"}));
}

TEST_F(CatalogInventoryTest, ServerIgnoringParentDoesNotLoopForever) {
  auto& us = catalogs_.Add("us-east-1", clock_);
  us.ExpectConfig();
  us.ExpectNamespaces("", {{"sales"}, {"ops"}});
  us.ExpectTables("sales", {"sales"}, {"orders"});
  us.ExpectNamespaces("sales", {{"sales"}, {"ops"}});  // the top level again: skipped
  us.ExpectTables("ops", {"ops"}, {"events"});
  us.ExpectNamespaces("ops", {{"sales"}, {"ops"}});
  auto tables = List();
  ASSERT_TRUE(tables.ok()) << tables.status().ToString();
  EXPECT_EQ(tables->size(), 2u);
}

TEST_F(CatalogInventoryTest, AnyListingErrorFailsTheInventoryAndStopsTheWalk) {
  auto& us = catalogs_.Add("us-east-1", clock_);
  us.ExpectConfig();
  us.ExpectNamespaces("", {{"sales"}});
  us.transport.ExpectError("GET", us.Root() + "/namespaces/sales/tables?pageToken=&pageSize=100",
                           Status::Unavailable("read us-east-1.test:80: connection reset"));
  auto tables = List();
  ASSERT_FALSE(tables.ok());
  EXPECT_EQ(tables.status().code(), StatusCode::kUnavailable);
  EXPECT_EQ(tables.status().message(),
            "list tables in sales: read us-east-1.test:80: connection reset");
}

TEST(InFlightLimitTest, StartsAtMostMaxAndTheRestInOrder) {
  InFlightLimit limit(2);
  std::deque<std::function<void()>> releases;  // stable while a release adds one
  std::vector<int> started;
  for (int i = 0; i < 5; ++i) {
    limit.Run([&, i](std::function<void()> release) {
      started.push_back(i);
      releases.push_back(std::move(release));
    });
  }
  EXPECT_EQ(started, (std::vector<int>{0, 1}));
  EXPECT_EQ(limit.waiting(), 3u);
  releases[0]();
  releases[0]();  // a second release is ignored
  EXPECT_EQ(started, (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(limit.in_flight(), 2);
  for (size_t i = 1; i < releases.size(); ++i) releases[i]();
  EXPECT_EQ(started.size(), 5u);
  EXPECT_EQ(limit.in_flight(), 0);
  EXPECT_EQ(limit.peak(), 2);
}

}  // namespace
}  // namespace icewarden::testing
