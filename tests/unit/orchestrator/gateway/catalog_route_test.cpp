#include "orchestrator/gateway/catalog_route.h"

#include <gtest/gtest.h>

namespace icewarden {
namespace {

std::variant<CatalogRoute, RouteError> Classify(std::string_view method, std::string_view target,
                                                std::string_view body = "") {
  return ClassifyRequest({method, target, body}, "lab", "\x1F");
}

CatalogRoute Route(std::string_view method, std::string_view target, std::string_view body = "") {
  auto r = Classify(method, target, body);
  if (auto* e = std::get_if<RouteError>(&r)) {
    ADD_FAILURE() << method << " " << target << ": " << e->status << " " << e->message;
    return {};
  }
  return std::get<CatalogRoute>(r);
}

RouteError Error(std::string_view method, std::string_view target, std::string_view body = "") {
  auto r = Classify(method, target, body);
  if (auto* route = std::get_if<CatalogRoute>(&r)) {
    ADD_FAILURE() << method << " " << target << " was accepted as " << route->operation;
    return {};
  }
  return std::get<RouteError>(r);
}

TEST(CatalogRouteTest, ReadsAreReadsAndKeepTheirPathAndQuery) {
  auto r = Route("GET", "/v1/lab/namespaces?parent=a%1Fb&pageToken=x");
  EXPECT_EQ(r.kind, RouteKind::kRead);
  EXPECT_EQ(r.operation, "listNamespaces");
  EXPECT_EQ(r.rest, "/namespaces");
  EXPECT_EQ(r.query, "?parent=a%1Fb&pageToken=x");
  EXPECT_EQ(Route("HEAD", "/v1/lab/namespaces/sales/tables/orders").operation, "tableExists");
  EXPECT_EQ(Route("GET", "/v1/lab/namespaces/sales/views").operation, "listViews");
  EXPECT_EQ(Route("POST", "/v1/lab/namespaces/sales/tables/orders/metrics", "{}").kind,
            RouteKind::kRead);
  EXPECT_EQ(Route("GET", "/v1/config?warehouse=lab").kind, RouteKind::kConfig);
  EXPECT_EQ(Route("POST", "/v1/oauth/tokens").kind, RouteKind::kOAuthTokens);
}

TEST(CatalogRouteTest, ATableLoadNamesItsTableWithNestedNamespaces) {
  auto r = Route("GET", "/v1/lab/namespaces/sales%1Feu/tables/orders?snapshots=all");
  EXPECT_EQ(r.kind, RouteKind::kTableLoad);
  ASSERT_EQ(r.tables.size(), 1u);
  EXPECT_EQ(r.tables[0].ToString(), "sales.eu.orders");
  EXPECT_EQ(r.rest, "/namespaces/sales%1Feu/tables/orders");
}

TEST(CatalogRouteTest, EveryKindOfWriteNamesTheTablesItChanges) {
  auto commit = Route("POST", "/v1/lab/namespaces/sales/tables/orders", "{}");
  EXPECT_EQ(commit.kind, RouteKind::kTableCommit);
  EXPECT_EQ(commit.tables.at(0).ToString(), "sales.orders");

  auto drop = Route("DELETE", "/v1/lab/namespaces/sales/tables/orders?purgeRequested=true");
  EXPECT_EQ(drop.kind, RouteKind::kTableDrop);

  auto create = Route("POST", "/v1/lab/namespaces/sales/tables",
                      R"({"name":"fresh","schema":{"type":"struct","fields":[]}})");
  EXPECT_EQ(create.kind, RouteKind::kTableCreate);
  EXPECT_EQ(create.tables.at(0).ToString(), "sales.fresh");

  auto reg = Route("POST", "/v1/lab/namespaces/sales/register",
                   R"({"name":"old","metadata-location":"s3://b/m.json"})");
  EXPECT_EQ(reg.kind, RouteKind::kTableCreate);
  EXPECT_EQ(reg.operation, "registerTable");

  auto rename = Route("POST", "/v1/lab/tables/rename",
                      R"({"source":{"namespace":["a"],"name":"t"},
                          "destination":{"namespace":["b"],"name":"u"}})");
  EXPECT_EQ(rename.kind, RouteKind::kTableRename);
  ASSERT_EQ(rename.tables.size(), 2u);
  EXPECT_EQ(rename.tables[1].ToString(), "b.u");

  auto txn = Route("POST", "/v1/lab/transactions/commit",
                   R"({"table-changes":[
                        {"identifier":{"namespace":["a"],"name":"t"},"requirements":[],"updates":[]},
                        {"identifier":{"namespace":["a"],"name":"t"},"requirements":[],"updates":[]},
                        {"identifier":{"namespace":["b","c"],"name":"u"},"requirements":[],"updates":[]}]})");
  EXPECT_EQ(txn.kind, RouteKind::kTransaction);
  ASSERT_EQ(txn.tables.size(), 2u) << "each table once";
  EXPECT_EQ(txn.tables[1].ToString(), "b.c.u");

  auto ns = Route("POST", "/v1/lab/namespaces", R"({"namespace":["fresh"]})");
  EXPECT_EQ(ns.kind, RouteKind::kNamespaceWrite);
  EXPECT_EQ(ns.namespace_levels, std::vector<std::string>{"fresh"});
  EXPECT_EQ(Route("POST", "/v1/lab/namespaces/sales/views", "{}").kind, RouteKind::kNamespaceWrite);
  EXPECT_EQ(Route("DELETE", "/v1/lab/namespaces/sales").kind, RouteKind::kNamespaceWrite);
}

TEST(CatalogRouteTest, AnotherPrefixIsNotOurs) {
  auto e = Error("GET", "/v1/other/namespaces");
  EXPECT_EQ(e.status, 404);
  EXPECT_NE(e.message.find("'lab'"), std::string::npos) << e.message;
}

TEST(CatalogRouteTest, UnknownRoutesAre404AndWrongMethods405WithAllow) {
  EXPECT_EQ(Error("GET", "/v1/lab/secrets").status, 404);
  EXPECT_EQ(Error("GET", "/v2/lab/namespaces").status, 404);
  EXPECT_EQ(Error("GET", "/v1/lab/namespaces/a/tables/t/extra/more").status, 404);
  auto e = Error("PUT", "/v1/lab/namespaces/sales/tables/orders");
  EXPECT_EQ(e.status, 405);
  EXPECT_EQ(e.allow, "GET, HEAD, POST, DELETE");
}

TEST(CatalogRouteTest, NamesThatCouldMeanAnotherPathAreRefused) {
  for (const char* target : {
           "/v1/lab/namespaces/../tables/t",
           "/v1/lab/namespaces/%2E%2E/tables/t",
           "/v1/lab/namespaces/sales/tables/a%2Fb",
           "/v1/lab/namespaces/sales/tables/a%5Cb",
           "/v1/lab/namespaces/sales/tables/a%00b",
           "/v1/lab/namespaces/sales%1F..%1Feu/tables/t",
           "/v1/lab/namespaces/sales/tables/%zz",
           "/v1/lab/namespaces//tables/t",
       }) {
    auto e = Error("POST", target, "{}");
    EXPECT_EQ(e.status, 400) << target;
    EXPECT_EQ(e.type, "BadRequestException") << target;
  }
  // A body that names a table the path could not.
  EXPECT_EQ(Error("POST", "/v1/lab/namespaces/sales/tables", R"({"name":"../x"})").status, 400);
  EXPECT_EQ(
      Error(
          "POST", "/v1/lab/tables/rename",
          R"({"source":{"namespace":["a"],"name":"t"},"destination":{"namespace":["a/b"],"name":"u"}})")
          .status,
      400);
}

TEST(CatalogRouteTest, MalformedBodiesOfWritesThatNameTablesAreRefused) {
  EXPECT_EQ(Error("POST", "/v1/lab/namespaces/sales/tables", "{not json").status, 400);
  EXPECT_EQ(Error("POST", "/v1/lab/namespaces/sales/tables", "[]").status, 400);
  EXPECT_EQ(Error("POST", "/v1/lab/namespaces/sales/tables", R"({"name":7})").status, 400);
  EXPECT_EQ(Error("POST", "/v1/lab/transactions/commit", R"({"table-changes":[]})").status, 400);
  EXPECT_EQ(
      Error("POST", "/v1/lab/transactions/commit", R"({"table-changes":[{"updates":[]}]})").status,
      400);
  EXPECT_EQ(Error("POST", "/v1/lab/tables/rename", R"({"source":{}})").status, 400);
}

TEST(CatalogRouteTest, PercentDecodeNeedsTwoHexDigits) {
  EXPECT_EQ(PercentDecode("a%1Fb%41"), std::string("a\x1F"
                                                   "bA"));
  EXPECT_FALSE(PercentDecode("a%1"));
  EXPECT_FALSE(PercentDecode("a%"));
  EXPECT_FALSE(PercentDecode("%g1"));
}

}  // namespace
}  // namespace icewarden
