// CatalogClient: configuration, listing with pages, loading tables, error mapping.
#include "health/catalog_client.h"

#include <gtest/gtest.h>

#include "tests/unit/health/catalog_test_support.h"

namespace icewarden::testing {
namespace {

TEST_F(CatalogClientTest, ConfigMergesDefaultsClientPropertiesAndOverrides) {
  auto o = Options();
  o.properties = {{"clients", "8"}, {"prefix", "from-client"}};
  auto client = Client(o);
  transport_.Expect("GET", kConfigUrl,
                    JsonResponse(200, ConfigBody(R"("idempotency-key-lifetime": "PT30M")")));
  Caught<CatalogConfig> c;
  client->GetConfig(c.Callback());
  ASSERT_TRUE(c->ok()) << c->status().ToString();
  EXPECT_EQ((*c)->prefix, "lake-eu");
  EXPECT_EQ((*c)->properties.at("clients"), "8");  // client beats defaults
  EXPECT_FALSE((*c)->endpoints.has_value());
  EXPECT_TRUE((*c)->supports_idempotency_keys);
  EXPECT_EQ((*c)->idempotency_key_lifetime, std::chrono::minutes(30));
  EXPECT_EQ(transport_.requests()[0].headers.Get("Accept"), "application/json");
}

TEST_F(CatalogClientTest, FirstCallFetchesConfigAndUsesItsPrefix) {
  auto client = Client();
  transport_.Expect("GET", kConfigUrl, JsonResponse(200, ConfigBody()));
  transport_.Expect("GET", std::string(kRoot) + "/namespaces?pageToken=&pageSize=100",
                    JsonResponse(200, R"({"namespaces": [["sales"], ["ops"]]})"));
  Caught<std::vector<Namespace>> c;
  client->ListNamespaces(std::nullopt, c.Callback());
  ASSERT_TRUE(c->ok()) << c->status().ToString();
  EXPECT_EQ(**c, (std::vector<Namespace>{{"sales"}, {"ops"}}));
  ASSERT_TRUE(client->config().has_value());
}

TEST_F(CatalogClientTest, OverlappingFirstCallsShareOneConfigRequest) {
  auto client = Client();
  transport_.HoldCompletions();
  transport_.Expect("GET", kConfigUrl, JsonResponse(200, ConfigBody()));
  transport_.Expect("GET", std::string(kRoot) + "/namespaces/a/tables?pageToken=&pageSize=100",
                    JsonResponse(200, R"({"identifiers": []})"));
  transport_.Expect("GET", std::string(kRoot) + "/namespaces/b/tables?pageToken=&pageSize=100",
                    JsonResponse(200, R"({"identifiers": []})"));
  Caught<std::vector<TableIdent>> a, b;
  client->ListTables({"a"}, a.Callback());
  client->ListTables({"b"}, b.Callback());
  EXPECT_FALSE(a.result.has_value());
  transport_.DeliverHeld();
  ASSERT_TRUE(a->ok()) << a->status().ToString();
  ASSERT_TRUE(b->ok()) << b->status().ToString();
  EXPECT_EQ(transport_.requests().size(), 3u);
}

TEST_F(CatalogClientTest, UnadvertisedEndpointFailsWithoutARequest) {
  auto client = Client();
  LoadConfig(*client, R"("endpoints": ["GET /v1/{prefix}/namespaces/{namespace}/tables/{table}"])");
  Caught<std::vector<Namespace>> c;
  client->ListNamespaces(std::nullopt, c.Callback());
  ASSERT_FALSE(c->ok());
  EXPECT_EQ(c->status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(c->status().message().find("catalog does not advertise GET /v1/{prefix}/namespaces"),
            std::string::npos)
      << c->status().message();
  EXPECT_EQ(transport_.requests().size(), 1u);  // only the config
}

TEST_F(CatalogClientTest, AdvertisedEndpointIsCalled) {
  auto client = Client();
  LoadConfig(*client, R"("endpoints": ["GET /v1/{prefix}/namespaces/{namespace}/tables"])");
  transport_.Expect("GET", std::string(kRoot) + "/namespaces/ops/tables?pageToken=&pageSize=100",
                    JsonResponse(200, R"({"identifiers": []})"));
  Caught<std::vector<TableIdent>> c;
  client->ListTables({"ops"}, c.Callback());
  ASSERT_TRUE(c->ok()) << c->status().ToString();
  EXPECT_TRUE((*c)->empty());
}

TEST_F(CatalogClientTest, ListNamespacesFollowsThreePagesWithNestedParent) {
  auto client = Client();
  LoadConfig(*client);
  const std::string base = std::string(kRoot) + "/namespaces?parent=sales%1Feu&pageToken=";
  transport_.Expect(
      "GET", base + "&pageSize=100",
      JsonResponse(200, R"({"namespaces": [["sales","eu","a"]], "next-page-token": "p 2"})"));
  transport_.Expect(
      "GET", base + "p%202&pageSize=100",
      JsonResponse(200, R"({"namespaces": [["sales","eu","b"]], "next-page-token": "p3"})"));
  transport_.Expect(
      "GET", base + "p3&pageSize=100",
      JsonResponse(200, R"({"namespaces": [["sales","eu","c"]], "next-page-token": null})"));
  Caught<std::vector<Namespace>> c;
  client->ListNamespaces(Namespace{"sales", "eu"}, c.Callback());
  ASSERT_TRUE(c->ok()) << c->status().ToString();
  EXPECT_EQ(**c, (std::vector<Namespace>{
                     {"sales", "eu", "a"}, {"sales", "eu", "b"}, {"sales", "eu", "c"}}));
}

TEST_F(CatalogClientTest, ListTablesFollowsThreePagesInNestedNamespace) {
  auto client = Client();
  LoadConfig(*client);
  const std::string base = std::string(kRoot) + "/namespaces/sales%1Feu%20west/tables?pageToken=";
  transport_.Expect(
      "GET", base + "&pageSize=100",
      JsonResponse(200, R"({"identifiers": [{"namespace": ["sales","eu west"], "name": "orders"}],
                                         "next-page-token": "t2"})"));
  transport_.Expect(
      "GET", base + "t2&pageSize=100",
      JsonResponse(200, R"({"identifiers": [{"namespace": ["sales","eu west"], "name": "refunds"}],
                                         "next-page-token": "t3"})"));
  transport_.Expect(
      "GET", base + "t3&pageSize=100",
      JsonResponse(200,
                   R"({"identifiers": [{"namespace": ["sales","eu west"], "name": "users"}]})"));
  Caught<std::vector<TableIdent>> c;
  client->ListTables({"sales", "eu west"}, c.Callback());
  ASSERT_TRUE(c->ok()) << c->status().ToString();
  ASSERT_EQ((*c)->size(), 3u);
  EXPECT_EQ((**c)[0].ToString(), "sales.eu west.orders");
  EXPECT_EQ((**c)[2].name, "users");
}

// A catalog's advertised `namespace-separator` (url-encoded, as the spec says) joins the levels
// of every namespace in a path or a `parent`, as the Java reference client joins them; one that
// would split a level, or is not url-encoded, gives way to %1F, which servers must accept.
TEST_F(CatalogClientTest, NamespacesAreJoinedWithTheAdvertisedSeparator) {
  auto client = Client();
  transport_.Expect("GET", kConfigUrl, JsonResponse(200, R"({"defaults": {},
                      "overrides": {"prefix": "lake-eu", "namespace-separator": "%2E"}})"));
  Caught<CatalogConfig> config;
  client->GetConfig(config.Callback());
  ASSERT_TRUE(config->ok()) << config->status().ToString();

  transport_.Expect(
      "GET", std::string(kRoot) + "/namespaces/sales%2Eeu%20west/tables?pageToken=&pageSize=100",
      JsonResponse(200, R"({"identifiers": []})"));
  Caught<std::vector<TableIdent>> tables;
  client->ListTables({"sales", "eu west"}, tables.Callback());
  ASSERT_TRUE(tables->ok()) << tables->status().ToString();

  transport_.Expect("GET",
                    std::string(kRoot) + "/namespaces?parent=sales%2Eeu&pageToken=&pageSize=100",
                    JsonResponse(200, R"({"namespaces": []})"));
  Caught<std::vector<Namespace>> namespaces;
  client->ListNamespaces(Namespace{"sales", "eu"}, namespaces.Callback());
  ASSERT_TRUE(namespaces->ok()) << namespaces->status().ToString();

  // "v1.2" holds the separator itself: joined with it, the server would read three levels.
  transport_.Expect(
      "GET", std::string(kRoot) + "/namespaces/sales%1Fv1.2/tables/orders?snapshots=all",
      JsonResponse(404,
                   R"({"error": {"message": "no", "type": "NoSuchTableException", "code": 404}})"));
  Caught<LoadTableOutcome> load;
  client->LoadTable(TableIdent{{"sales", "v1.2"}, "orders"}, std::nullopt, load.Callback());
  ASSERT_FALSE(load->ok());
  EXPECT_EQ(load->status().code(), StatusCode::kNotFound);
}

TEST_F(CatalogClientTest, AMalformedSeparatorGivesWayToTheUnitSeparator) {
  // A raw path character, a broken escape, and something far longer than a separator.
  for (const std::string& separator :
       std::vector<std::string>{"/", "%2", "%ZZ", std::string(40, '-')}) {
    auto client = Client();
    transport_.Expect("GET", kConfigUrl,
                      JsonResponse(200, R"({"overrides": {"prefix": "lake-eu", )"
                                        R"("namespace-separator": ")" +
                                            separator + R"("}})"));
    Caught<CatalogConfig> config;
    client->GetConfig(config.Callback());
    ASSERT_TRUE(config->ok()) << config->status().ToString();
    transport_.Expect("GET",
                      std::string(kRoot) + "/namespaces/sales%1Feu/tables?pageToken=&pageSize=100",
                      JsonResponse(200, R"({"identifiers": []})"));
    Caught<std::vector<TableIdent>> tables;
    client->ListTables({"sales", "eu"}, tables.Callback());
    ASSERT_TRUE(tables->ok()) << separator << ": " << tables->status().ToString();
  }
}

TEST_F(CatalogClientTest, ListingStopsWhenTheServerRepeatsAPageToken) {
  auto client = Client();
  LoadConfig(*client);
  const std::string base = std::string(kRoot) + "/namespaces?pageToken=";
  transport_.Expect("GET", base + "&pageSize=100",
                    JsonResponse(200, R"({"namespaces": [], "next-page-token": "same"})"));
  transport_.Expect("GET", base + "same&pageSize=100",
                    JsonResponse(200, R"({"namespaces": [], "next-page-token": "same"})"));
  Caught<std::vector<Namespace>> c;
  client->ListNamespaces(std::nullopt, c.Callback());
  ASSERT_FALSE(c->ok());
  EXPECT_EQ(c->status().code(), StatusCode::kUnavailable);
}

constexpr const char* kLoadTableBody = R"json({
  "metadata-location": "s3://lake/sales/orders/metadata/00003-9a1b.metadata.json",
  "config": {"client.region": "eu-west-1"},
  "metadata": {
    "format-version": 2,
    "table-uuid": "9c12d441-03fe-4693-9a96-a0705ddf69c1",
    "location": "s3://lake/sales/orders",
    "last-sequence-number": 3,
    "last-updated-ms": 1780000300000,
    "last-column-id": 2,
    "current-schema-id": 0,
    "schemas": [{"type": "struct", "schema-id": 0, "fields": [
      {"id": 1, "name": "id", "required": true, "type": "long"},
      {"id": 2, "name": "amount", "required": false, "type": "decimal(10,2)"}]}],
    "default-spec-id": 0,
    "partition-specs": [{"spec-id": 0, "fields": []}],
    "last-partition-id": 999,
    "default-sort-order-id": 0,
    "sort-orders": [{"order-id": 0, "fields": []}],
    "properties": {"icewarden.owner": "eu-west-1", "icewarden.epoch": "4", "write.format.default": "parquet"},
    "current-snapshot-id": 3003,
    "refs": {"main": {"snapshot-id": 3003, "type": "branch"}, "audit": {"snapshot-id": 3001, "type": "tag"}},
    "snapshots": [
      {"snapshot-id": 3001, "sequence-number": 1, "timestamp-ms": 1780000100000,
       "manifest-list": "s3://lake/sales/orders/metadata/snap-3001.avro",
       "summary": {"operation": "append", "added-data-files": "4"}, "schema-id": 0},
      {"snapshot-id": 3002, "parent-snapshot-id": 3001, "sequence-number": 2, "timestamp-ms": 1780000200000,
       "manifest-list": "s3://lake/sales/orders/metadata/snap-3002.avro",
       "summary": {"operation": "overwrite"}, "schema-id": 0},
      {"snapshot-id": 3003, "parent-snapshot-id": 3002, "sequence-number": 3, "timestamp-ms": 1780000300000,
       "manifest-list": "s3://lake/sales/orders/metadata/snap-3003.avro",
       "summary": {"operation": "delete"}, "schema-id": 0}],
    "snapshot-log": [
      {"snapshot-id": 3001, "timestamp-ms": 1780000100000},
      {"snapshot-id": 3002, "timestamp-ms": 1780000200000},
      {"snapshot-id": 3003, "timestamp-ms": 1780000300000}],
    "metadata-log": [
      {"metadata-file": "s3://lake/sales/orders/metadata/00001-11aa.metadata.json", "timestamp-ms": 1780000100000},
      {"metadata-file": "s3://lake/sales/orders/metadata/00002-22bb.metadata.json", "timestamp-ms": 1780000200000}]
  }
})json";

TEST_F(CatalogClientTest, LoadTableParsesHistoryAndProperties) {
  auto client = Client();
  LoadConfig(*client);
  transport_.Expect("GET",
                    std::string(kRoot) + "/namespaces/sales%1Feu/tables/orders?snapshots=all",
                    JsonResponse(200, kLoadTableBody, {{"etag", "W/\"m3\""}}));
  Caught<LoadTableOutcome> c;
  client->LoadTable(*TableIdent::Parse("sales.eu.orders"), std::nullopt, c.Callback());
  ASSERT_TRUE(c->ok()) << c->status().ToString();
  const TableSnapshotView& t = (*c)->table;
  EXPECT_FALSE((*c)->not_modified);
  EXPECT_EQ(t.table_uuid, "9c12d441-03fe-4693-9a96-a0705ddf69c1");
  EXPECT_EQ(t.metadata_location, "s3://lake/sales/orders/metadata/00003-9a1b.metadata.json");
  EXPECT_EQ(t.format_version, 2);
  EXPECT_EQ(t.current_snapshot_id, 3003);
  EXPECT_EQ(t.last_sequence_number, 3);
  EXPECT_EQ(t.refs.at("main"), 3003);
  EXPECT_EQ(t.refs.at("audit"), 3001);
  ASSERT_EQ(t.snapshots.size(), 3u);
  EXPECT_EQ(t.snapshots[0].parent_snapshot_id, std::nullopt);
  EXPECT_EQ(t.snapshots[1].parent_snapshot_id, 3001);
  EXPECT_EQ(t.snapshots[2].sequence_number, 3);
  EXPECT_EQ(t.snapshots[2].timestamp_ms, 1780000300000);
  EXPECT_EQ(t.snapshots[1].operation, "overwrite");
  ASSERT_EQ(t.snapshot_log.size(), 3u);
  EXPECT_EQ(t.snapshot_log[1].snapshot_id, 3002);
  EXPECT_EQ(t.snapshot_log[1].timestamp_ms, 1780000200000);
  ASSERT_EQ(t.metadata_log.size(), 2u);
  EXPECT_EQ(t.metadata_log[0].metadata_file,
            "s3://lake/sales/orders/metadata/00001-11aa.metadata.json");
  EXPECT_EQ(t.properties.at("icewarden.owner"), "eu-west-1");
  EXPECT_EQ(t.properties.at("icewarden.epoch"), "4");
  EXPECT_EQ(t.etag, "W/\"m3\"");
  // No delegation header unless configured (see CatalogClientOptions::access_delegation).
  EXPECT_FALSE(transport_.requests().back().headers.Has("X-Iceberg-Access-Delegation"));
  EXPECT_FALSE(transport_.requests().back().headers.Has("If-None-Match"));
}

TEST_F(CatalogClientTest, LoadTableCanAskForReferencedSnapshotsOnly) {
  auto client = Client();
  LoadConfig(*client);
  transport_.Expect("GET", std::string(kRoot) + "/namespaces/sales/tables/orders?snapshots=refs",
                    JsonResponse(200, kLoadTableBody));
  Caught<LoadTableOutcome> c;
  client->LoadTable({{"sales"}, "orders"}, std::nullopt, c.Callback(), {}, SnapshotsMode::kRefs);
  ASSERT_TRUE(c->ok()) << c->status().ToString();
  EXPECT_EQ((*c)->table.properties.at("icewarden.epoch"), "4");
}

TEST_F(CatalogClientTest, LoadTableWithEtagSendsIfNoneMatchAndReportsNotModified) {
  auto o = Options();
  o.access_delegation = "vended-credentials";
  auto client = Client(o);
  LoadConfig(*client);
  const std::string url = std::string(kRoot) + "/namespaces/sales/tables/orders?snapshots=all";
  transport_.Expect("GET", url, JsonResponse(200, kLoadTableBody, {{"ETag", "\"v3\""}}));
  transport_.Expect("GET", url, HttpResponse{304, {{"ETag", "\"v3\""}}, ""});
  TableIdent orders{{"sales"}, "orders"};
  Caught<LoadTableOutcome> first;
  client->LoadTable(orders, std::nullopt, first.Callback());
  ASSERT_TRUE(first->ok()) << first->status().ToString();
  Caught<LoadTableOutcome> second;
  client->LoadTable(orders, (*first)->table.etag, second.Callback());
  ASSERT_TRUE(second->ok()) << second->status().ToString();
  EXPECT_TRUE((*second)->not_modified);
  EXPECT_EQ(transport_.requests().back().headers.Get("If-None-Match"), "\"v3\"");
  EXPECT_EQ(transport_.requests().back().headers.Get("X-Iceberg-Access-Delegation"),
            "vended-credentials");
}

// An ETag is opaque: a weak one (W/"...", as some catalogs send) goes back in If-None-Match
// byte for byte, prefix, quotes and all.
TEST_F(CatalogClientTest, AWeakEtagGoesBackByteForByte) {
  auto client = Client();
  LoadConfig(*client);
  const std::string url = std::string(kRoot) + "/namespaces/sales/tables/orders?snapshots=all";
  const std::string weak = "W/\"0f3a:v3 \\x\"";
  transport_.Expect("GET", url, JsonResponse(200, kLoadTableBody, {{"ETag", weak}}));
  transport_.Expect("GET", url, HttpResponse{304, {{"ETag", weak}}, ""});
  TableIdent orders{{"sales"}, "orders"};
  Caught<LoadTableOutcome> first;
  client->LoadTable(orders, std::nullopt, first.Callback());
  ASSERT_TRUE(first->ok()) << first->status().ToString();
  EXPECT_EQ((*first)->table.etag, weak);
  Caught<LoadTableOutcome> second;
  client->LoadTable(orders, (*first)->table.etag, second.Callback());
  ASSERT_TRUE(second->ok()) << second->status().ToString();
  EXPECT_TRUE((*second)->not_modified);
  EXPECT_EQ(transport_.requests().back().headers.Get("If-None-Match"), weak);
}

TEST_F(CatalogClientTest, ErrorsMapToStatusCodesWithTheServersMessage) {
  struct Case {
    int http;
    StatusCode code;
  };
  for (Case k : {Case{404, StatusCode::kNotFound}, Case{400, StatusCode::kInvalidArgument},
                 Case{406, StatusCode::kInvalidArgument}, Case{401, StatusCode::kUnauthenticated},
                 Case{419, StatusCode::kUnauthenticated}, Case{403, StatusCode::kPermissionDenied},
                 Case{500, StatusCode::kUnavailable}, Case{503, StatusCode::kUnavailable}}) {
    SCOPED_TRACE(k.http);
    auto client = Client();
    LoadConfig(*client);
    transport_.Expect(
        "GET", std::string(kRoot) + "/namespaces/sales/tables/gone?snapshots=all",
        JsonResponse(k.http, R"({"error": {"message": "Table does not exist: sales.gone",
                                               "type": "NoSuchTableException", "code": )" +
                                 std::to_string(k.http) + "}}"));
    Caught<LoadTableOutcome> c;
    client->LoadTable({{"sales"}, "gone"}, std::nullopt, c.Callback());
    ASSERT_FALSE(c->ok());
    EXPECT_EQ(c->status().code(), k.code);
    EXPECT_NE(c->status().message().find("load table sales.gone: HTTP " + std::to_string(k.http) +
                                         " NoSuchTableException: Table does not exist: sales.gone"),
              std::string::npos)
        << c->status().message();
  }
}

TEST_F(CatalogClientTest, TransportErrorsAreUnavailableAndNamePhaseAndOperation) {
  auto client = Client();
  transport_.ExpectError("GET", kConfigUrl,
                         Status::Unavailable("connect catalog.test:80: Connection refused"));
  Caught<CatalogConfig> c;
  client->GetConfig(c.Callback());
  ASSERT_FALSE(c->ok());
  EXPECT_EQ(c->status().code(), StatusCode::kUnavailable);
  EXPECT_EQ(c->status().message(),
            "get catalog config from http://catalog.test/api/catalog: connect catalog.test:80: "
            "Connection refused");
}

TEST_F(CatalogClientTest, EveryRequestCarriesTheDefaultOrPerCallDeadline) {
  auto o = Options();
  o.default_deadline = std::chrono::milliseconds(1234);
  auto client = Client(o);
  LoadConfig(*client);
  transport_.Expect("GET", std::string(kRoot) + "/namespaces?pageToken=&pageSize=100",
                    JsonResponse(200, R"({"namespaces": []})"));
  Caught<std::vector<Namespace>> c;
  client->ListNamespaces(std::nullopt, c.Callback(), CallOptions{std::chrono::milliseconds(250)});
  ASSERT_TRUE(c->ok());
  EXPECT_EQ(transport_.deadlines()[0], std::chrono::milliseconds(1234));
  EXPECT_EQ(transport_.deadlines()[1], std::chrono::milliseconds(250));
}

}  // namespace
}  // namespace icewarden::testing
