// Scopes of the catalog action family: parsing, glob matching (the config rules' semantics:
// '*' crosses dots), the store cursor that yields a scope's rows, and duration params.
#include <gtest/gtest.h>

#include "actions/catalog_scope.h"
#include "actions/param_reader.h"
#include "state/table_pattern.h"
#include "tests/fakes/fake_clock.h"
#include "tests/fakes/fake_store.h"

namespace icewarden {
namespace {

TableIdent T(const std::string& dotted) { return *TableIdent::Parse(dotted); }

TEST(CatalogScopeTest, ParsesTheThreeKinds) {
  auto ns = CatalogScope::Parse("namespace:eu.*");
  ASSERT_TRUE(ns.ok());
  EXPECT_EQ(ns->kind, CatalogScope::Kind::kNamespace);
  EXPECT_EQ(ns->patterns, std::vector<std::string>{"eu.*"});
  auto tables = CatalogScope::Parse("tables:a.b, c.d");
  ASSERT_TRUE(tables.ok());
  EXPECT_EQ(tables->patterns, (std::vector<std::string>{"a.b", "c.d"}));
  auto owner = CatalogScope::Parse("owner:us-east-1");
  ASSERT_TRUE(owner.ok());
  EXPECT_EQ(owner->owner_region(), "us-east-1");
}

TEST(CatalogScopeTest, RejectsMalformedScopesNamingTheForms) {
  for (const char* bad : {"eu.*", "region:eu", "namespace:", "tables:a.b,,c.d", "owner:a,b"}) {
    auto s = CatalogScope::Parse(bad);
    EXPECT_FALSE(s.ok()) << bad;
  }
  EXPECT_NE(CatalogScope::Parse("region:eu").status().message().find("owner:REGION"),
            std::string::npos);
}

TEST(CatalogScopeTest, NamespaceGlobCrossesDotsAndNamesNestedTables) {
  auto s = *CatalogScope::Parse("namespace:eu.*");
  EXPECT_TRUE(s.Matches(T("eu.orders")));
  EXPECT_TRUE(s.Matches(T("eu.archive.orders_2024")));
  EXPECT_FALSE(s.Matches(T("europe.orders")));
  EXPECT_FALSE(s.Matches(T("sales.eu")));
}

TEST(CatalogScopeTest, BareNamespaceMatchesItsOwnTablesOnly) {
  auto s = *CatalogScope::Parse("namespace:sales");
  EXPECT_TRUE(s.Matches(T("sales.orders")));
  EXPECT_FALSE(s.Matches(T("sales.archive.orders_2024")));
  auto nested = *CatalogScope::Parse("namespace:sales.archive,clickstream");
  EXPECT_TRUE(nested.Matches(T("sales.archive.orders_2024")));
  EXPECT_TRUE(nested.Matches(T("clickstream.events")));
  EXPECT_FALSE(nested.Matches(T("sales.orders")));
}

TEST(CatalogScopeTest, TablesAreExactNamesOrGlobs) {
  auto s = *CatalogScope::Parse("tables:sales.orders,eu.cust?mers,ops.*");
  EXPECT_TRUE(s.Matches(T("sales.orders")));
  EXPECT_FALSE(s.Matches(T("sales.orders_v2")));
  EXPECT_TRUE(s.Matches(T("eu.customers")));
  EXPECT_TRUE(s.Matches(T("ops.x.y")));
  EXPECT_FALSE(s.Matches(T("sales.customers")));
}

TEST(CatalogScopeTest, OwnerScopeMatchesEveryName) {
  EXPECT_TRUE(CatalogScope::Parse("owner:us-east-1")->Matches(T("any.table")));
}

TEST(CatalogScopeTest, GlobMatchesConfigRuleSemantics) {
  EXPECT_TRUE(GlobMatch("*", "a.b.c"));
  EXPECT_TRUE(GlobMatch("a*c", "a.b.c"));
  EXPECT_TRUE(GlobMatch("a?b", "a.b"));
  EXPECT_FALSE(GlobMatch("a?b", "a..b"));
  EXPECT_TRUE(GlobMatch("*.orders", "eu.archive.orders"));
  EXPECT_FALSE(GlobMatch("", "a"));
}

class ScopeCursorTest : public ::testing::Test {
 protected:
  void Add(const std::string& dotted, const std::string& owner, const std::string& fid = "") {
    OwnershipChange c{T(dotted), 0, owner, fid};
    ASSERT_TRUE(store_.CompareAndSetOwnership(std::span(&c, 1), {}).ok());
  }
  testing::FakeClock clock_;
  testing::FakeStore store_{clock_};
};

TEST_F(ScopeCursorTest, YieldsTheScopeRowsOfOneOwnerInOrderAcrossPages) {
  for (int i = 0; i < 10; ++i) Add("eu.t" + std::to_string(i), "eu-central-1");
  for (int i = 0; i < 5; ++i) Add("sales.t" + std::to_string(i), "eu-central-1");
  Add("eu.zz", "us-east-1");
  ScopeOwnershipCursor cursor(store_, *CatalogScope::Parse("namespace:eu"), "eu-central-1",
                              std::nullopt, /*page_size=*/3);
  std::vector<std::string> seen;
  while (true) {
    auto rows = cursor.Next(4);
    ASSERT_TRUE(rows.ok());
    if (rows->empty()) break;
    EXPECT_LE(rows->size(), 4u);
    for (const auto& r : *rows) seen.push_back(r.table.ToString());
  }
  EXPECT_TRUE(cursor.exhausted());
  ASSERT_EQ(seen.size(), 10u);
  EXPECT_EQ(seen.front(), "eu.t0");
  EXPECT_EQ(seen.back(), "eu.t9");
}

TEST_F(ScopeCursorTest, FiltersByFailoverId) {
  Add("eu.a", "us-east-1", "fo-1");
  Add("eu.b", "us-east-1", "fo-2");
  Add("eu.c", "us-east-1", "fo-1");
  ScopeOwnershipCursor cursor(store_, *CatalogScope::Parse("namespace:eu.*"), "us-east-1",
                              std::string("fo-1"));
  auto rows = cursor.Next(10);
  ASSERT_TRUE(rows.ok());
  ASSERT_EQ(rows->size(), 2u);
  EXPECT_EQ((*rows)[1].table.ToString(), "eu.c");
}

// failover:ID is the rows that failover moved last; a cursor for the rows a later failover
// moved (its resumed markers, its compensation) filters by that failover's id alone.
TEST_F(ScopeCursorTest, AFailoverScopeIsTheRowsThatFailoverMovedLast) {
  Add("eu.a", "us-east-1", "fo-1");
  Add("sales.b", "us-east-1", "fo-1");
  Add("eu.c", "us-east-1", "fo-2");
  Add("eu.d", "us-east-1");
  Add("eu.e", "eu-central-1", "fo-1");
  auto scope = CatalogScope::Parse("failover:fo-1");
  ASSERT_TRUE(scope.ok());
  EXPECT_EQ(scope->kind, CatalogScope::Kind::kFailover);
  ScopeOwnershipCursor cursor(store_, *scope, "us-east-1");
  auto rows = cursor.Next(10);
  ASSERT_TRUE(rows.ok());
  std::vector<std::string> seen;
  for (const auto& r : *rows) seen.push_back(r.table.ToString());
  EXPECT_EQ(seen, (std::vector<std::string>{"eu.a", "sales.b"}));
  ScopeOwnershipCursor moved_by_fo2(store_, *scope, "us-east-1", std::string("fo-2"));
  rows = moved_by_fo2.Next(10);
  ASSERT_TRUE(rows.ok());
  ASSERT_EQ(rows->size(), 1u);
  EXPECT_EQ((*rows)[0].table.ToString(), "eu.c");
  EXPECT_FALSE(CatalogScope::Parse("failover:fo-1,fo-2").ok()) << "one failover id";
}

TEST_F(ScopeCursorTest, ReportsStoreFailures) {
  store_.FailWith(Status::IOError("disk gone"));
  ScopeOwnershipCursor cursor(store_, *CatalogScope::Parse("owner:x"), "x");
  auto rows = cursor.Next(10);
  ASSERT_FALSE(rows.ok());
  EXPECT_EQ(rows.status().code(), StatusCode::kIOError);
}

TEST(ActionDurationTest, ParsesUnitsAndCompounds) {
  using std::chrono::milliseconds;
  EXPECT_EQ(ParseParamDuration("30s"), milliseconds(30'000));
  EXPECT_EQ(ParseParamDuration("500ms"), milliseconds(500));
  EXPECT_EQ(ParseParamDuration("1h30m"), milliseconds(5'400'000));
  EXPECT_EQ(ParseParamDuration("0"), milliseconds(0));
  for (const char* bad : {"", "30", "s", "3x", "-1s", "1.5s"})
    EXPECT_FALSE(ParseParamDuration(bad).has_value()) << bad;
}

}  // namespace
}  // namespace icewarden
