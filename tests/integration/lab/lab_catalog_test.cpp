// The lab's per-region Iceberg REST catalog, spoken to over HTTP as icewarden would: config,
// paging, load with ETags, commits with requirements, idempotency and the spec's error bodies.
#include <set>

#include "tests/integration/lab/lab_fixture.h"

namespace icewarden::lab::testing {
namespace {

json SimpleCreateRequest(const std::string& name) {
  return {{"name", name},
          {"schema",
           {{"type", "struct"},
            {"fields",
             {{{"id", 1}, {"name", "id"}, {"type", "long"}, {"required", true}},
              {{"id", 2}, {"name", "data"}, {"type", "string"}, {"required", false}}}}}},
          {"properties", {{"owner", "tests"}}}};
}

void ExpectError(const httplib::Result& result, int code, const std::string& type) {
  ASSERT_TRUE(result) << "request failed: " << httplib::to_string(result.error());
  EXPECT_EQ(result->status, code) << result->body;
  json body = json::parse(result->body, nullptr, false);
  ASSERT_TRUE(body.is_object()) << result->body;
  EXPECT_EQ(body["error"]["type"], type) << result->body;
  EXPECT_EQ(body["error"]["code"], code);
  EXPECT_TRUE(body["error"]["message"].is_string());
}

using LabCatalogTest = LabTest;

TEST_F(LabCatalogTest, ConfigAdvertisesPrefixEndpointsAndIdempotency) {
  int status = 0;
  json config = GetJson(kUs, "/v1/config?warehouse=lab", &status);
  EXPECT_EQ(status, 200);
  EXPECT_EQ(config["overrides"]["prefix"], "lab");
  EXPECT_TRUE(config["defaults"].is_object());
  EXPECT_EQ(config["idempotency-key-lifetime"], "PT30M");
  std::set<std::string> endpoints(config["endpoints"].begin(), config["endpoints"].end());
  EXPECT_TRUE(endpoints.count("POST /v1/{prefix}/namespaces/{namespace}/tables/{table}"));
  EXPECT_TRUE(endpoints.count("HEAD /v1/{prefix}/namespaces/{namespace}"));
  ExpectError(Client(kUs)->Get("/v1/config?warehouse=other"), 404, "NoSuchWarehouseException");
}

TEST_F(LabCatalogTest, ListsNestedNamespacesInPages) {
  json all = GetJson(kUs, "/v1/lab/namespaces");
  EXPECT_EQ(all["namespaces"], json::parse(R"([["clickstream"],["eu"],["sales"]])"));
  EXPECT_TRUE(all["next-page-token"].is_null());

  json first = GetJson(kUs, "/v1/lab/namespaces?pageToken=&pageSize=2");
  EXPECT_EQ(first["namespaces"], json::parse(R"([["clickstream"],["eu"]])"));
  ASSERT_TRUE(first["next-page-token"].is_string());
  json second = GetJson(kUs, "/v1/lab/namespaces?pageSize=2&pageToken=" +
                                 first["next-page-token"].get<std::string>());
  EXPECT_EQ(second["namespaces"], json::parse(R"([["sales"]])"));
  EXPECT_TRUE(second["next-page-token"].is_null());

  // Malformed paging is a 400, not a page: a page size with junk, an odd or non-hex token.
  for (const char* bad : {"pageSize=2x&pageToken=", "pageSize=0&pageToken=",
                          "pageSize=2&pageToken=abc", "pageSize=2&pageToken=zz"})
    ExpectError(Client(kUs)->Get(std::string("/v1/lab/namespaces?") + bad), 400,
                "BadRequestException");

  // A body past the 8 MiB limit is refused before anything reads it.
  auto huge =
      Client(kUs)->Post("/v1/lab/namespaces", std::string(9 << 20, ' '), "application/json");
  ASSERT_TRUE(huge);
  EXPECT_EQ(huge->status, 413);

  json nested = GetJson(kUs, "/v1/lab/namespaces?parent=sales");
  EXPECT_EQ(nested["namespaces"], json::parse(R"([["sales","archive"]])"));
  ExpectError(Client(kUs)->Get("/v1/lab/namespaces?parent=nope"), 404, "NoSuchNamespaceException");

  auto created =
      PostJson(kUs, "/v1/lab/namespaces",
               {{"namespace", {"sales", "archive", "2023"}}, {"properties", {{"a", "b"}}}});
  ASSERT_TRUE(created);
  EXPECT_EQ(created->status, 200) << created->body;
  json loaded = GetJson(kUs, "/v1/lab/namespaces/sales%1Farchive%1F2023");
  EXPECT_EQ(loaded["namespace"], json::parse(R"(["sales","archive","2023"])"));
  EXPECT_EQ(loaded["properties"]["a"], "b");
  EXPECT_EQ(GetJson(kUs, "/v1/lab/namespaces?parent=sales%1Farchive")["namespaces"],
            json::parse(R"([["sales","archive","2023"]])"));
  ExpectError(PostJson(kUs, "/v1/lab/namespaces", {{"namespace", {"sales"}}}), 409,
              "AlreadyExistsException");

  auto head = Client(kUs)->Head("/v1/lab/namespaces/sales%1Farchive");
  ASSERT_TRUE(head);
  EXPECT_EQ(head->status, 204);
  auto missing = Client(kUs)->Head("/v1/lab/namespaces/nope");
  ASSERT_TRUE(missing);
  EXPECT_EQ(missing->status, 404);
}

class LabScaleCatalogTest : public LabTest {
 protected:
  LabScaleCatalogTest() { options_.seed_tables = 12; }
};

TEST_F(LabScaleCatalogTest, ListsTablesInPages) {
  json all = GetJson(kUs, "/v1/lab/namespaces/sales/tables");
  ASSERT_EQ(all["identifiers"].size(), 6u) << all.dump();  // orders, customers, 4 seeded
  EXPECT_TRUE(all["next-page-token"].is_null());
  json paged = json::array();
  std::string token;
  int pages = 0;
  do {
    json page = GetJson(kUs, "/v1/lab/namespaces/sales/tables?pageSize=4&pageToken=" + token);
    ASSERT_TRUE(page.is_object());
    EXPECT_LE(page["identifiers"].size(), 4u);
    for (const auto& id : page["identifiers"]) paged.push_back(id);
    token = page["next-page-token"].is_string() ? page["next-page-token"].get<std::string>() : "";
    ++pages;
  } while (!token.empty() && pages < 10);
  EXPECT_EQ(pages, 2);
  EXPECT_EQ(paged, all["identifiers"]);
  EXPECT_EQ(paged[0]["namespace"], json::parse(R"(["sales"])"));
  ExpectError(Client(kUs)->Get("/v1/lab/namespaces/nope/tables"), 404, "NoSuchNamespaceException");
}

TEST_F(LabCatalogTest, CreatesTablesWithRealisticMetadata) {
  auto created = PostJson(kUs, "/v1/lab/namespaces/sales/tables", SimpleCreateRequest("returns"));
  ASSERT_TRUE(created);
  ASSERT_EQ(created->status, 200) << created->body;
  EXPECT_FALSE(created->get_header_value("ETag").empty());
  json result = json::parse(created->body);
  const json& metadata = result["metadata"];
  EXPECT_EQ(metadata["format-version"], 2);
  EXPECT_EQ(metadata["table-uuid"].get<std::string>().size(), 36u);
  EXPECT_EQ(metadata["location"], "s3://icewarden-lab/warehouse/sales/returns");
  EXPECT_EQ(metadata["last-column-id"], 2);
  EXPECT_EQ(metadata["current-snapshot-id"], -1);
  for (const char* key :
       {"schemas", "partition-specs", "sort-orders", "snapshots", "snapshot-log", "metadata-log"}) {
    EXPECT_TRUE(metadata[key].is_array()) << key;
  }
  EXPECT_EQ(metadata["properties"]["owner"], "tests");
  EXPECT_NE(result["metadata-location"].get<std::string>().find("/metadata/00000-"),
            std::string::npos);
  ExpectError(PostJson(kUs, "/v1/lab/namespaces/sales/tables", SimpleCreateRequest("returns")), 409,
              "AlreadyExistsException");
  ExpectError(PostJson(kUs, "/v1/lab/namespaces/nope/tables", SimpleCreateRequest("x")), 404,
              "NoSuchNamespaceException");
  ExpectError(Client(kUs)->Get(TablePath("sales", "nope")), 404, "NoSuchTableException");
  auto head = Client(kUs)->Head(TablePath("sales", "returns"));
  ASSERT_TRUE(head);
  EXPECT_EQ(head->status, 204);
}

TEST_F(LabCatalogTest, LoadHonoursSnapshotsModeAndEtag) {
  ASSERT_EQ(Append(kUs, "sales", "orders")->status, 200);
  ASSERT_EQ(Append(kUs, "sales", "orders")->status, 200);
  auto all = Client(kUs)->Get(TablePath("sales", "orders") + "?snapshots=all");
  auto refs = Client(kUs)->Get(TablePath("sales", "orders") + "?snapshots=refs");
  ASSERT_TRUE(all && refs);
  EXPECT_EQ(json::parse(all->body)["metadata"]["snapshots"].size(), 2u);
  EXPECT_EQ(json::parse(refs->body)["metadata"]["snapshots"].size(), 1u);
  std::string etag = all->get_header_value("ETag");
  EXPECT_FALSE(etag.empty());
  EXPECT_NE(etag, refs->get_header_value("ETag"));

  auto not_modified = Client(kUs)->Get(TablePath("sales", "orders"), {{"If-None-Match", etag}});
  ASSERT_TRUE(not_modified);
  EXPECT_EQ(not_modified->status, 304);
  EXPECT_TRUE(not_modified->body.empty());

  ASSERT_EQ(Append(kUs, "sales", "orders")->status, 200);
  auto modified = Client(kUs)->Get(TablePath("sales", "orders"), {{"If-None-Match", etag}});
  ASSERT_TRUE(modified);
  EXPECT_EQ(modified->status, 200);
  EXPECT_NE(modified->get_header_value("ETag"), etag);
}

TEST_F(LabCatalogTest, CommitMovesMainAndWritesNewMetadataFile) {
  json before = GetJson(kUs, TablePath("sales", "orders"));
  auto result = Append(kUs, "sales", "orders");
  ASSERT_TRUE(result);
  ASSERT_EQ(result->status, 200) << result->body;
  json after = json::parse(result->body);
  EXPECT_NE(after["metadata-location"], before["metadata-location"]);
  EXPECT_NE(after["metadata-location"].get<std::string>().find("/metadata/00001-"),
            std::string::npos);
  const json& metadata = after["metadata"];
  ASSERT_EQ(metadata["snapshots"].size(), 1u);
  int64_t id = metadata["snapshots"][0]["snapshot-id"];
  EXPECT_EQ(metadata["current-snapshot-id"], id);
  EXPECT_EQ(metadata["refs"]["main"]["snapshot-id"], id);
  EXPECT_EQ(metadata["snapshot-log"].back()["snapshot-id"], id);
  EXPECT_EQ(metadata["metadata-log"].back()["metadata-file"], before["metadata-location"]);
  EXPECT_EQ(metadata["last-sequence-number"], 1);
  EXPECT_EQ(MetadataLocation(kUs, "sales", "orders"), after["metadata-location"]);
}

TEST_F(LabCatalogTest, RejectsStaleOrForeignCommitsWithSpecErrors) {
  json metadata = Metadata(kUs, "sales", "orders");
  json stale = AppendCommit(metadata, "test", SystemNowMs());
  ASSERT_EQ(Append(kUs, "sales", "orders")->status, 200);
  ExpectError(PostJson(kUs, TablePath("sales", "orders"), stale), 409, "CommitFailedException");

  json fresh = AppendCommit(Metadata(kUs, "sales", "orders"), "test", SystemNowMs());
  json wrong_uuid = fresh;
  wrong_uuid["requirements"][0]["uuid"] = NewUuid();
  ExpectError(PostJson(kUs, TablePath("sales", "orders"), wrong_uuid), 409,
              "CommitFailedException");

  json unknown_action = fresh;
  unknown_action["updates"].push_back({{"action", "teleport-table"}});
  ExpectError(PostJson(kUs, TablePath("sales", "orders"), unknown_action), 400,
              "BadRequestException");
  json unknown_requirement = fresh;
  unknown_requirement["requirements"].push_back({{"type", "assert-sunny"}});
  ExpectError(PostJson(kUs, TablePath("sales", "orders"), unknown_requirement), 400,
              "BadRequestException");
  ExpectError(PostJson(kUs, TablePath("sales", "nope"), fresh), 404, "NoSuchTableException");

  json schema_check = {
      {"requirements", {{{"type", "assert-current-schema-id"}, {"current-schema-id", 7}}}},
      {"updates", json::array()}};
  ExpectError(PostJson(kUs, TablePath("sales", "orders"), schema_check), 409,
              "CommitFailedException");

  // The fresh commit still applies: none of the rejected ones changed the table.
  auto ok = PostJson(kUs, TablePath("sales", "orders"), fresh);
  ASSERT_TRUE(ok);
  EXPECT_EQ(ok->status, 200) << ok->body;
}

TEST_F(LabCatalogTest, RefSnapshotIdNullMeansTheRefMustNotExist) {
  json metadata = Metadata(kUs, "sales", "customers");
  json first = AppendCommit(metadata, "test", SystemNowMs());
  EXPECT_TRUE(first["requirements"][1]["snapshot-id"].is_null());
  auto created = PostJson(kUs, TablePath("sales", "customers"), first);
  ASSERT_EQ(created->status, 200) << created->body;
  json again = first;
  again["updates"][0]["snapshot"]["snapshot-id"] = NewSnapshotId();
  again["updates"][1]["snapshot-id"] = again["updates"][0]["snapshot"]["snapshot-id"];
  ExpectError(PostJson(kUs, TablePath("sales", "customers"), again), 409, "CommitFailedException");
}

TEST_F(LabCatalogTest, IdempotencyKeyReplaysWithoutApplyingTwice) {
  json commit = AppendCommit(Metadata(kUs, "sales", "orders"), "test", SystemNowMs());
  httplib::Headers key = {{"Idempotency-Key", "017F22E2-79B0-7CC3-98C4-DC0C0C07398F"}};
  auto first = PostJson(kUs, TablePath("sales", "orders"), commit, key);
  auto retry = PostJson(kUs, TablePath("sales", "orders"), commit, key);
  ASSERT_TRUE(first && retry);
  EXPECT_EQ(first->status, 200);
  EXPECT_EQ(retry->status, 200);
  EXPECT_EQ(json::parse(retry->body)["metadata-location"],
            json::parse(first->body)["metadata-location"]);
  EXPECT_EQ(Metadata(kUs, "sales", "orders")["snapshots"].size(), 1u);
  // Without the key the same request is a new commit, and its requirement is now stale.
  ExpectError(PostJson(kUs, TablePath("sales", "orders"), commit), 409, "CommitFailedException");
}

TEST_F(LabCatalogTest, InjectedUnavailableCarriesRetryAfter) {
  httplib::Client admin(lab_->admin_url());
  auto set =
      admin.Post("/lab/regions/us-east-1/faults",
                 R"({"error_rate":1.0,"error_status":503,"retry_after_s":7})", "application/json");
  ASSERT_TRUE(set);
  ASSERT_EQ(set->status, 200) << set->body;
  auto failed = Client(kUs)->Get("/v1/lab/namespaces");
  ExpectError(failed, 503, "ServiceUnavailableException");
  EXPECT_EQ(failed->get_header_value("Retry-After"), "7");
  auto other_region = Client(kEu)->Get("/v1/lab/namespaces");
  ASSERT_TRUE(other_region);
  EXPECT_EQ(other_region->status, 200);

  auto cleared = admin.Delete("/lab/regions/us-east-1/faults");
  ASSERT_TRUE(cleared);
  EXPECT_EQ(cleared->status, 200);
  auto ok = Client(kUs)->Get("/v1/lab/namespaces");
  ASSERT_TRUE(ok);
  EXPECT_EQ(ok->status, 200);

  auto bad =
      admin.Post("/lab/regions/us-east-1/faults", R"({"error_status":418})", "application/json");
  ASSERT_TRUE(bad);
  EXPECT_EQ(bad->status, 400);
  auto unknown = admin.Post("/lab/regions/mars-1/faults", "{}", "application/json");
  ASSERT_TRUE(unknown);
  EXPECT_EQ(unknown->status, 404);
}

TEST_F(LabCatalogTest, CommitLatencyDelaysCommitsOnly) {
  ASSERT_TRUE(lab_->PatchFaults(kUs, {{"commit_latency_ms", 300}}).ok());
  auto start = std::chrono::steady_clock::now();
  ASSERT_EQ(Append(kUs, "sales", "orders")->status, 200);
  EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(300));
}

TEST_F(LabCatalogTest, HangingRegionTimesClientsOutAndStillStops) {
  ASSERT_TRUE(lab_->PatchFaults(kUs, {{"hang_ms", 5000}}).ok());
  httplib::Client client(lab_->region_url(kUs));
  client.set_read_timeout(0, 300'000);
  auto timed_out = client.Get("/v1/config");
  ASSERT_FALSE(timed_out);
  EXPECT_EQ(timed_out.error(), httplib::Error::Read);

  // A request caught in the hang when the region stops gets a 503, not a success. It must be
  // in the hang first: a connection the region has not admitted yet is dropped by the stop
  // (LabTest.AStoppingRegionDropsItsOpenConnectionsInsteadOfAnswering), which a fixed pause
  // did not ensure on a loaded machine.
  auto admitted = [&] {
    return lab_->State()["regions"][kUs]["requests"]["requests_total"].get<std::int64_t>();
  };
  const std::int64_t before = admitted();
  std::thread hung([&] {
    auto result = Client(kUs)->Get("/v1/config");
    ASSERT_TRUE(result);
    EXPECT_EQ(result->status, 503);
  });
  for (int i = 0; i < 500 && admitted() == before; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  // Stopping cuts the hang short rather than waiting it out.
  auto start = std::chrono::steady_clock::now();
  ASSERT_TRUE(lab_->StopRegion(kUs).ok());
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(3));
  hung.join();
  ASSERT_TRUE(lab_->ClearFaults(kUs).ok());
  ASSERT_TRUE(lab_->StartRegion(kUs).ok());
  auto ok = Client(kUs)->Get("/v1/config");
  ASSERT_TRUE(ok);
  EXPECT_EQ(ok->status, 200);
}

}  // namespace
}  // namespace icewarden::lab::testing
