// icewarden's CatalogClient (real Beast transport, io_context on the test thread) against the
// real lab catalog (examples/lab, in-process, ephemeral ports): config and prefix, paged
// listings, loads with snapshot history and ETags, commits and their requirements, every
// status code the lab can inject, Idempotency-Key replays, bearer and OAuth2 auth, a
// stopped region and a hung one.
#include "tests/integration/health/catalog_client_lab_fixture.h"

#include <gmock/gmock.h>

#include <set>
#include <thread>

namespace icewarden::testing {
namespace {

using namespace std::chrono_literals;
using lab::testing::Eventually;
using lab::testing::kEu;
using lab::testing::kUs;
using nlohmann::json;
using ::testing::HasSubstr;
using ::testing::Not;

// ---- Configuration and listings ----------------------------------------------------------

TEST_F(CatalogClientLabTest, ConfigWithWarehouseResolvesPrefixAndIdempotency) {
  auto& client = Client();
  auto config = GetConfig(client);
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  EXPECT_EQ(config->prefix, "lab");
  EXPECT_TRUE(config->supports_idempotency_keys);
  EXPECT_EQ(config->idempotency_key_lifetime, std::chrono::milliseconds(30min));
  EXPECT_TRUE(config->Advertises("POST /v1/{prefix}/namespaces/{namespace}/tables/{table}"));
  ASSERT_EQ(transport_->exchanges().size(), 1u);
  EXPECT_EQ(transport_->exchanges()[0].request.url,
            lab_->region_url(kUs) + "/v1/config?warehouse=lab");

  // Later calls use the prefix, without fetching the config again.
  auto namespaces = ListNamespaces(client, std::nullopt);
  ASSERT_TRUE(namespaces.ok()) << namespaces.status().ToString();
  EXPECT_EQ(transport_->Matching("GET", "/v1/config").size(), 1u);
  EXPECT_EQ(transport_->Matching("GET", "/v1/lab/namespaces").size(),
            transport_->exchanges().size() - 1);

  // Another warehouse: the lab's 404 NoSuchWarehouseException.
  auto options = Options();
  options.warehouse = "elsewhere";
  auto other = GetConfig(Client(options));
  EXPECT_EQ(other.status().code(), StatusCode::kNotFound) << other.status().ToString();
  EXPECT_THAT(other.status().message(), HasSubstr("NoSuchWarehouseException"));
}

TEST_F(CatalogClientLabTest, ListsNamespacesInPagesAndNestedOnes) {
  auto& client = Client();
  auto top = ListNamespaces(client, std::nullopt);
  ASSERT_TRUE(top.ok()) << top.status().ToString();
  EXPECT_EQ(*top, (std::vector<Namespace>{{"clickstream"}, {"eu"}, {"sales"}}));
  auto pages = transport_->Matching("GET", "/v1/lab/namespaces");
  ASSERT_EQ(pages.size(), 2u) << "three namespaces in pages of two";
  EXPECT_THAT(pages[0].request.url, HasSubstr("pageToken=&pageSize=2"));
  EXPECT_THAT(pages[1].request.url, Not(HasSubstr("pageToken=&")));

  auto nested = ListNamespaces(client, Namespace{"sales"});
  ASSERT_TRUE(nested.ok()) << nested.status().ToString();
  EXPECT_EQ(*nested, (std::vector<Namespace>{{"sales", "archive"}}));
  EXPECT_THAT(transport_->exchanges().back().request.url, HasSubstr("parent=sales&"));

  auto none = ListNamespaces(client, Namespace{"sales", "archive"});
  ASSERT_TRUE(none.ok()) << none.status().ToString();
  EXPECT_TRUE(none->empty());

  auto missing = ListNamespaces(client, Namespace{"nope"});
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound) << missing.status().ToString();
  EXPECT_THAT(missing.status().message(), HasSubstr("NoSuchNamespaceException"));
}

TEST_F(CatalogClientLabTest, ListsTablesInPages) {
  auto& client = Client();
  auto sales = ListTables(client, {"sales"});
  ASSERT_TRUE(sales.ok()) << sales.status().ToString();
  std::vector<TableIdent> expected = {{{"sales"}, "customers"},
                                      {{"sales"}, "orders"},
                                      {{"sales"}, "seed_00000"},
                                      {{"sales"}, "seed_00003"},
                                      {{"sales"}, "seed_00006"}};
  EXPECT_EQ(*sales, expected);
  EXPECT_EQ(transport_->Matching("GET", "/namespaces/sales/tables?").size(), 3u)
      << "five tables in pages of two";

  auto archive = ListTables(client, {"sales", "archive"});
  ASSERT_TRUE(archive.ok()) << archive.status().ToString();
  EXPECT_EQ(*archive, (std::vector<TableIdent>{{{"sales", "archive"}, "orders_2024"}}));
  EXPECT_THAT(transport_->exchanges().back().request.url,
              HasSubstr("/v1/lab/namespaces/sales%1Farchive/tables?"));

  // Without paging the lab answers everything at once.
  auto options = Options();
  options.page_size = 0;
  transport_->Clear();
  auto unpaged = ListTables(Client(options), {"sales"});
  ASSERT_TRUE(unpaged.ok()) << unpaged.status().ToString();
  EXPECT_EQ(*unpaged, expected);
  EXPECT_EQ(transport_->Matching("GET", "/tables").size(), 1u);

  auto missing = ListTables(client, {"nope"});
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound) << missing.status().ToString();
}

// ---- Loading -------------------------------------------------------------------------------

TEST_F(CatalogClientLabTest, LoadTableParsesSnapshotsLogsAndProperties) {
  ASSERT_EQ(Append(kUs, "sales", "orders")->status, 200);
  ASSERT_EQ(Append(kUs, "sales", "orders")->status, 200);
  auto& client = Client();
  auto loaded = Load(client, Orders());
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  EXPECT_FALSE(loaded->not_modified);
  EXPECT_THAT(transport_->exchanges().back().request.url, HasSubstr("?snapshots=all"));

  // Everything the client parsed agrees with the lab's own JSON.
  json raw = GetJson(kUs, TablePath("sales", "orders"));
  const json& m = raw["metadata"];
  const TableSnapshotView& t = loaded->table;
  EXPECT_EQ(t.table_uuid, m["table-uuid"]);
  EXPECT_EQ(t.metadata_location, raw["metadata-location"]);
  EXPECT_EQ(t.format_version, m["format-version"]);
  EXPECT_EQ(t.current_snapshot_id, m["current-snapshot-id"].get<int64_t>());
  EXPECT_EQ(t.last_sequence_number, m["last-sequence-number"]);
  EXPECT_EQ(t.last_updated_ms, m["last-updated-ms"]);
  EXPECT_EQ(t.properties.at("write.format.default"), "parquet");
  EXPECT_EQ(t.properties.size(), m["properties"].size());

  ASSERT_EQ(t.snapshots.size(), 2u);
  ASSERT_EQ(m["snapshots"].size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(t.snapshots[i].snapshot_id, m["snapshots"][i]["snapshot-id"]);
    EXPECT_EQ(t.snapshots[i].timestamp_ms, m["snapshots"][i]["timestamp-ms"]);
    EXPECT_EQ(t.snapshots[i].operation, "append");
  }
  EXPECT_EQ(t.snapshots[1].parent_snapshot_id, t.snapshots[0].snapshot_id);
  EXPECT_EQ(t.refs.at("main"), t.current_snapshot_id);

  ASSERT_EQ(t.snapshot_log.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(t.snapshot_log[i].snapshot_id, m["snapshot-log"][i]["snapshot-id"]);
    EXPECT_EQ(t.snapshot_log[i].timestamp_ms, m["snapshot-log"][i]["timestamp-ms"]);
  }
  ASSERT_EQ(t.metadata_log.size(), 2u) << "the create and the first append were superseded";
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(t.metadata_log[i].metadata_file, m["metadata-log"][i]["metadata-file"]);
    EXPECT_EQ(t.metadata_log[i].timestamp_ms, m["metadata-log"][i]["timestamp-ms"]);
  }
  EXPECT_THAT(t.metadata_log[0].metadata_file, HasSubstr("/metadata/00000-"));

  // A table without snapshots, and one that does not exist.
  auto empty = Load(client, {{"sales"}, "seed_00000"});
  ASSERT_TRUE(empty.ok()) << empty.status().ToString();
  EXPECT_FALSE(empty->table.current_snapshot_id.has_value());
  EXPECT_TRUE(empty->table.snapshots.empty());
  auto missing = Load(client, {{"sales"}, "nope"});
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound) << missing.status().ToString();
  EXPECT_THAT(missing.status().message(), HasSubstr("NoSuchTableException"));
}

TEST_F(CatalogClientLabTest, EtagGivesNotModifiedUntilTheTableChanges) {
  auto& client = Client();
  auto first = Load(client, Orders());
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  const std::string etag = first->table.etag;
  ASSERT_FALSE(etag.empty());

  auto again = Load(client, Orders(), etag);
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_TRUE(again->not_modified);
  EXPECT_EQ(again->table.etag, etag);
  EXPECT_EQ(transport_->exchanges().back().Header("If-None-Match"), etag);
  EXPECT_EQ(transport_->exchanges().back().status, 304);

  ASSERT_EQ(Append(kUs, "sales", "orders")->status, 200);
  auto changed = Load(client, Orders(), etag);
  ASSERT_TRUE(changed.ok()) << changed.status().ToString();
  EXPECT_FALSE(changed->not_modified);
  EXPECT_NE(changed->table.etag, etag);
  EXPECT_EQ(changed->table.snapshots.size(), 1u);
}

// ---- Commits -------------------------------------------------------------------------------

TEST_F(CatalogClientLabTest, CommitWithTableUuidSetsProperties) {
  auto& client = Client();
  auto before = Load(client, Orders());
  ASSERT_TRUE(before.ok()) << before.status().ToString();

  auto commit = SetProperties(Orders(), before->table.table_uuid,
                              {{"icewarden.owner", "us-east-1"}, {"icewarden.epoch", "7"}});
  auto out = Commit(client, commit);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(out->kind, CommitOutcome::Kind::kCommitted) << out->detail;
  EXPECT_EQ(out->table.properties.at("icewarden.owner"), "us-east-1");
  EXPECT_EQ(out->table.properties.at("icewarden.epoch"), "7");
  EXPECT_NE(out->table.metadata_location, before->table.metadata_location);
  ASSERT_EQ(out->table.metadata_log.size(), 1u);
  EXPECT_EQ(out->table.metadata_log[0].metadata_file, before->table.metadata_location);

  // The lab advertises idempotency-key-lifetime, so the commit carried a UUIDv7 key.
  auto posts = transport_->Matching("POST", "/tables/orders");
  ASSERT_EQ(posts.size(), 1u);
  EXPECT_EQ(posts[0].Header("Idempotency-Key"), out->idempotency_key);
  EXPECT_TRUE(UuidV7Millis(out->idempotency_key).has_value()) << out->idempotency_key;
  json body = json::parse(posts[0].request.body);
  EXPECT_EQ(body["requirements"][0]["type"], "assert-table-uuid");

  auto after = Load(client, Orders(), before->table.etag);
  ASSERT_TRUE(after.ok()) << after.status().ToString();
  EXPECT_FALSE(after->not_modified);
  EXPECT_EQ(after->table.properties.at("icewarden.epoch"), "7");
  EXPECT_EQ(after->table.metadata_location, out->table.metadata_location);
  EXPECT_EQ(LabProperties(kUs, Orders())["icewarden.owner"], "us-east-1");
}

TEST_F(CatalogClientLabTest, StaleRefSnapshotIdIsConflict) {
  ASSERT_EQ(Append(kUs, "sales", "orders")->status, 200);
  auto& client = Client();
  auto seen = Load(client, Orders());
  ASSERT_TRUE(seen.ok()) << seen.status().ToString();
  ASSERT_TRUE(seen->table.current_snapshot_id.has_value());
  ASSERT_EQ(Append(kUs, "sales", "orders")->status, 200);  // main moves on

  auto commit = SetProperties(Orders(), seen->table.table_uuid, {{"icewarden.epoch", "8"}});
  commit.requirements.push_back(AssertRefSnapshotId{"main", seen->table.current_snapshot_id});
  auto out = Commit(client, commit);
  EXPECT_EQ(out.status().code(), StatusCode::kConflict) << out.status().ToString();
  EXPECT_THAT(out.status().message(), HasSubstr("requirement was not met"));
  EXPECT_EQ(transport_->Matching("POST", "/tables/orders").size(), 1u);
  EXPECT_FALSE(LabProperties(kUs, Orders()).contains("icewarden.epoch"));

  // A wrong table uuid, and "main must not exist" on a table that has it, are conflicts too.
  auto wrong_uuid = Commit(client, SetProperties(Orders(), "00000000-0000-0000-0000-000000000000",
                                                 {{"icewarden.epoch", "8"}}));
  EXPECT_EQ(wrong_uuid.status().code(), StatusCode::kConflict) << wrong_uuid.status().ToString();
  auto no_main = SetProperties(Orders(), seen->table.table_uuid, {{"icewarden.epoch", "8"}});
  no_main.requirements.push_back(AssertRefSnapshotId{"main", std::nullopt});
  auto exists = Commit(client, no_main);
  EXPECT_EQ(exists.status().code(), StatusCode::kConflict) << exists.status().ToString();
}

TEST_F(CatalogClientLabTest, InjectedConflictIsConflict) {
  auto& client = Client();
  auto seen = Load(client, Orders());
  ASSERT_TRUE(seen.ok()) << seen.status().ToString();
  ASSERT_TRUE(lab_->PatchFaults(kUs, {{"error_rate", 1.0}, {"error_status", 409}}).ok());
  // 409 faults apply to commits only: loads still work.
  ASSERT_TRUE(Load(client, Orders()).ok());
  auto out = Commit(client, SetProperties(Orders(), seen->table.table_uuid, {{"k", "v"}}));
  EXPECT_EQ(out.status().code(), StatusCode::kConflict) << out.status().ToString();
  EXPECT_EQ(transport_->Matching("POST", "/tables/orders").size(), 1u);
}

class CatalogClientLabStateUnknownTest : public CatalogClientLabTest,
                                         public ::testing::WithParamInterface<int> {};

TEST_P(CatalogClientLabStateUnknownTest, CommitIsStateUnknownAndNotRetried) {
  const int status = GetParam();
  auto& client = Client();
  auto seen = Load(client, Orders());
  ASSERT_TRUE(seen.ok()) << seen.status().ToString();
  ASSERT_TRUE(lab_->PatchFaults(kUs, {{"error_rate", 1.0}, {"error_status", status}}).ok());

  auto out = Commit(client, SetProperties(Orders(), seen->table.table_uuid, {{"k", "v"}}));
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(out->kind, CommitOutcome::Kind::kStateUnknown);
  EXPECT_THAT(out->detail, HasSubstr("HTTP " + std::to_string(status)));
  EXPECT_THAT(out->detail, HasSubstr("CommitStateUnknownException"));
  EXPECT_FALSE(out->idempotency_key.empty());
  auto posts = transport_->Matching("POST", "/tables/orders");
  ASSERT_EQ(posts.size(), 1u) << "the client must not retry a commit of unknown state";
  EXPECT_EQ(posts[0].status, status);
  ASSERT_TRUE(lab_->ClearFaults(kUs).ok());
  EXPECT_FALSE(LabProperties(kUs, Orders()).contains("k"));
}

TEST_P(CatalogClientLabStateUnknownTest, ReadErrorIsUnavailableAndNotRetried) {
  const int status = GetParam();
  auto& client = Client();
  ASSERT_TRUE(GetConfig(client).ok());
  ASSERT_TRUE(lab_->PatchFaults(kUs, {{"error_rate", 1.0}, {"error_status", status}}).ok());
  auto out = Load(client, Orders());
  EXPECT_EQ(out.status().code(), StatusCode::kUnavailable) << out.status().ToString();
  EXPECT_THAT(out.status().message(), HasSubstr("HTTP " + std::to_string(status)));
  EXPECT_EQ(transport_->Matching("GET", "/tables/orders").size(), 1u);
}

INSTANTIATE_TEST_SUITE_P(ServerErrors, CatalogClientLabStateUnknownTest,
                         ::testing::Values(500, 502, 504));

TEST_F(CatalogClientLabTest, ServiceUnavailableWithRetryAfterIsRetriedWithTheSameKey) {
  auto& client = Client();
  auto seen = Load(client, Orders());
  ASSERT_TRUE(seen.ok()) << seen.status().ToString();
  ASSERT_TRUE(
      lab_->PatchFaults(kUs, {{"error_rate", 1.0}, {"error_status", 503}, {"retry_after_s", 1}})
          .ok());
  // The fault goes away between the first 503 and the client's retry.
  int unavailable = 0;
  transport_->on_response = [&](const Exchange& e) {
    if (e.status == 503 && unavailable++ == 0) {
      ASSERT_TRUE(lab_->ClearFaults(kUs).ok());
    }
  };

  const auto started = std::chrono::steady_clock::now();
  auto out = Commit(client, SetProperties(Orders(), seen->table.table_uuid, {{"k", "v"}}));
  const auto waited = std::chrono::steady_clock::now() - started;
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(out->kind, CommitOutcome::Kind::kCommitted) << out->detail;
  EXPECT_EQ(out->table.properties.at("k"), "v");
  auto posts = transport_->Matching("POST", "/tables/orders");
  ASSERT_EQ(posts.size(), 2u);
  EXPECT_EQ(posts[0].status, 503);
  EXPECT_EQ(posts[0].response_headers.Get("Retry-After"), "1");
  EXPECT_EQ(posts[1].status, 200);
  EXPECT_EQ(posts[0].Header("Idempotency-Key"), posts[1].Header("Idempotency-Key"));
  EXPECT_EQ(posts[0].request.body, posts[1].request.body);
  EXPECT_GE(waited, 1s) << "the retry waits for Retry-After";
}

TEST_F(CatalogClientLabTest, ServiceUnavailableWithRetryAfterGivesUpAfterTheRetryBudget) {
  auto options = Options();
  options.retry.max_503_retries = 1;
  auto& client = Client(options);
  ASSERT_TRUE(GetConfig(client).ok());
  ASSERT_TRUE(
      lab_->PatchFaults(kUs, {{"error_rate", 1.0}, {"error_status", 503}, {"retry_after_s", 1}})
          .ok());
  auto out = Load(client, Orders());
  EXPECT_EQ(out.status().code(), StatusCode::kUnavailable) << out.status().ToString();
  EXPECT_THAT(out.status().message(), HasSubstr("Retry-After: 1"));
  EXPECT_EQ(transport_->Matching("GET", "/tables/orders").size(), 2u);
}

TEST_F(CatalogClientLabTest, ServiceUnavailableWithoutRetryAfterIsNotRetried) {
  auto& client = Client();
  auto seen = Load(client, Orders());
  ASSERT_TRUE(seen.ok()) << seen.status().ToString();
  ASSERT_TRUE(lab_->PatchFaults(kUs, {{"error_rate", 1.0}, {"error_status", 503}}).ok());

  auto out = Commit(client, SetProperties(Orders(), seen->table.table_uuid, {{"k", "v"}}));
  EXPECT_EQ(out.status().code(), StatusCode::kUnavailable) << out.status().ToString();
  EXPECT_THAT(out.status().message(), HasSubstr("ServiceUnavailableException"));
  EXPECT_EQ(transport_->Matching("POST", "/tables/orders").size(), 1u);

  auto load = Load(client, Orders());
  EXPECT_EQ(load.status().code(), StatusCode::kUnavailable) << load.status().ToString();
  EXPECT_EQ(transport_->Matching("GET", "/tables/orders").size(), 2u);  // one before, one now
}

// ---- Idempotency-Key ------------------------------------------------------------------------

TEST_F(CatalogClientLabTest, ReplayedKeyAfterStateUnknownDoesNotApplyTwice) {
  auto& client = Client();
  auto seen = Load(client, Orders());
  ASSERT_TRUE(seen.ok()) << seen.status().ToString();

  // The commit is slower than the client's deadline: the client gives up after sending it,
  // and the lab applies it afterwards.
  ASSERT_TRUE(lab_->PatchFaults(kUs, {{"commit_latency_ms", 1000}}).ok());
  auto commit = SetProperties(Orders(), seen->table.table_uuid, {{"icewarden.epoch", "1"}});
  auto first = Commit(client, commit, {.deadline = 200ms});
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  ASSERT_EQ(first->kind, CommitOutcome::Kind::kStateUnknown);
  EXPECT_THAT(first->detail, HasSubstr("deadline of 200ms exceeded"));
  const std::string key = first->idempotency_key;
  ASSERT_FALSE(key.empty());
  ASSERT_TRUE(Eventually([&] { return LabProperties(kUs, Orders())["icewarden.epoch"] == "1"; }))
      << "the timed-out commit applied in the lab";
  ASSERT_TRUE(lab_->ClearFaults(kUs).ok());
  const std::string applied_at = MetadataLocation(kUs, "sales", "orders");

  // Someone else changes the table; replaying the first commit must not undo that.
  auto other =
      Commit(client, SetProperties(Orders(), seen->table.table_uuid, {{"icewarden.epoch", "2"}}));
  ASSERT_TRUE(other.ok()) << other.status().ToString();
  ASSERT_EQ(other->kind, CommitOutcome::Kind::kCommitted);
  EXPECT_NE(other->idempotency_key, key);
  const std::string latest = other->table.metadata_location;

  commit.idempotency_key = key;
  auto replay = Commit(client, commit);
  ASSERT_TRUE(replay.ok()) << replay.status().ToString();
  EXPECT_EQ(replay->kind, CommitOutcome::Kind::kCommitted) << replay->detail;
  EXPECT_EQ(replay->idempotency_key, key);
  EXPECT_EQ(replay->table.metadata_location, applied_at) << "the first response, replayed";
  EXPECT_EQ(transport_->exchanges().back().Header("Idempotency-Key"), key);

  auto now = Load(client, Orders());
  ASSERT_TRUE(now.ok()) << now.status().ToString();
  EXPECT_EQ(now->table.metadata_location, latest) << "the replay did not write metadata";
  EXPECT_EQ(now->table.properties.at("icewarden.epoch"), "2");
  EXPECT_EQ(now->table.metadata_log.size(), 2u);
}

// ---- A stopped region and a hung one -----------------------------------------------------

TEST_F(CatalogClientLabTest, StoppedRegionIsUnavailableConnectionRefused) {
  auto& client = Client(Options(kEu));
  ASSERT_TRUE(GetConfig(client).ok());
  auto seen = Load(client, {{"eu"}, "orders"});
  ASSERT_TRUE(seen.ok()) << seen.status().ToString();
  ASSERT_TRUE(lab_->StopRegion(kEu).ok());

  auto list = ListNamespaces(client, std::nullopt);
  EXPECT_EQ(list.status().code(), StatusCode::kUnavailable) << list.status().ToString();
  EXPECT_THAT(list.status().message(), HasSubstr("Connection refused"));

  // Never delivered, so a definite failure rather than an unknown outcome.
  auto commit =
      Commit(client, SetProperties({{"eu"}, "orders"}, seen->table.table_uuid, {{"k", "v"}}));
  EXPECT_EQ(commit.status().code(), StatusCode::kUnavailable) << commit.status().ToString();
  EXPECT_THAT(commit.status().message(), HasSubstr("connect "));
  EXPECT_THAT(commit.status().message(), HasSubstr("Connection refused"));

  // A fresh client cannot even read the config.
  auto fresh = GetConfig(Client(Options(kEu)));
  EXPECT_EQ(fresh.status().code(), StatusCode::kUnavailable) << fresh.status().ToString();

  ASSERT_TRUE(lab_->StartRegion(kEu).ok());
  auto back = ListNamespaces(client, std::nullopt);
  EXPECT_TRUE(back.ok()) << back.status().ToString();
}

TEST_F(CatalogClientLabTest, HangLongerThanTheDeadlineIsADeadlineError) {
  auto& client = Client();
  auto seen = Load(client, Orders());
  ASSERT_TRUE(seen.ok()) << seen.status().ToString();
  ASSERT_TRUE(lab_->PatchFaults(kUs, {{"hang_ms", 5000}}).ok());

  const auto started = std::chrono::steady_clock::now();
  auto load = Load(client, Orders(), std::nullopt, {.deadline = 300ms});
  EXPECT_LT(std::chrono::steady_clock::now() - started, 3s);
  EXPECT_EQ(load.status().code(), StatusCode::kUnavailable) << load.status().ToString();
  EXPECT_THAT(load.status().message(), HasSubstr("deadline of 300ms exceeded"));

  // A commit caught in the hang was delivered: its outcome is unknown.
  auto commit = Commit(client, SetProperties(Orders(), seen->table.table_uuid, {{"k", "v"}}),
                       {.deadline = 300ms});
  ASSERT_TRUE(commit.ok()) << commit.status().ToString();
  EXPECT_EQ(commit->kind, CommitOutcome::Kind::kStateUnknown);
  EXPECT_THAT(commit->detail, HasSubstr("deadline of 300ms exceeded"));
  EXPECT_EQ(transport_->Matching("POST", "/tables/orders").size(), 1u);
}

// ---- Static bearer token -------------------------------------------------------------------

class CatalogClientLabTokenTest : public CatalogClientLabTest {
 protected:
  CatalogClientLabTokenTest() { options_.token = "lab-static-token-1234"; }
};

TEST_F(CatalogClientLabTokenTest, BearerTokenIsRequired) {
  auto anonymous = GetConfig(Client());
  EXPECT_EQ(anonymous.status().code(), StatusCode::kUnauthenticated)
      << anonymous.status().ToString();
  EXPECT_THAT(anonymous.status().message(), HasSubstr("HTTP 401"));
  EXPECT_EQ(transport_->exchanges().size(), 1u) << "no retry without OAuth2";

  auto options = Options();
  options.auth = CatalogAuth::Bearer("wrong-token-5678");
  auto wrong = ListNamespaces(Client(options), std::nullopt);
  EXPECT_EQ(wrong.status().code(), StatusCode::kUnauthenticated) << wrong.status().ToString();
  EXPECT_THAT(wrong.status().message(), Not(HasSubstr("wrong-token-5678")));

  options.auth = CatalogAuth::Bearer("lab-static-token-1234");
  auto& client = Client(options);
  transport_->Clear();
  auto tables = ListTables(client, {"sales"});
  ASSERT_TRUE(tables.ok()) << tables.status().ToString();
  EXPECT_FALSE(tables->empty());
  for (const auto& e : transport_->exchanges()) {
    EXPECT_EQ(e.Header("Authorization"), "Bearer lab-static-token-1234") << e.request.url;
  }
  auto seen = Load(client, Orders());
  ASSERT_TRUE(seen.ok()) << seen.status().ToString();
  auto out = Commit(client, SetProperties(Orders(), seen->table.table_uuid, {{"k", "v"}}));
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(out->kind, CommitOutcome::Kind::kCommitted);
}

// ---- OAuth2 client credentials -------------------------------------------------------------

class CatalogClientLabOAuthTest : public CatalogClientLabTest {
 protected:
  CatalogClientLabOAuthTest() {
    options_.oauth_client_id = "icewarden";
    options_.oauth_client_secret = "s3cr3t-lab-secret";
  }

  CatalogClientOptions OAuthOptions(std::string secret = "s3cr3t-lab-secret") const {
    auto o = Options();
    o.auth = CatalogAuth::ClientCredentials("icewarden", std::move(secret));
    return o;
  }

  // The catalog (non-token) exchanges, in order.
  std::vector<Exchange> CatalogExchanges() const {
    std::vector<Exchange> out;
    for (const auto& e : transport_->exchanges()) {
      if (!e.IsTokenRequest()) out.push_back(e);
    }
    return out;
  }
};

TEST_F(CatalogClientLabOAuthTest, ClientCredentialsTokenFromTheLab) {
  auto& client = Client(OAuthOptions());
  auto namespaces = ListNamespaces(client, std::nullopt);
  ASSERT_TRUE(namespaces.ok()) << namespaces.status().ToString();
  EXPECT_EQ(namespaces->size(), 3u);

  ASSERT_EQ(transport_->TokenRequests(), 1) << "one token serves every request";
  const Exchange& token = transport_->exchanges()[0];
  EXPECT_EQ(token.request.url, lab_->region_url(kUs) + "/v1/oauth/tokens");
  EXPECT_THAT(token.request.body, HasSubstr("grant_type=client_credentials"));
  EXPECT_EQ(token.status, 200);
  for (const auto& e : CatalogExchanges()) {
    EXPECT_THAT(e.Header("Authorization"), HasSubstr("Bearer lab-")) << e.request.url;
    EXPECT_EQ(e.status, 200) << e.request.url;
  }

  auto bad = GetConfig(Client(OAuthOptions("not-the-secret")));
  EXPECT_EQ(bad.status().code(), StatusCode::kUnauthenticated) << bad.status().ToString();
  EXPECT_THAT(bad.status().message(), HasSubstr("invalid_client"));
  EXPECT_THAT(bad.status().message(), Not(HasSubstr("not-the-secret")));
}

TEST_F(CatalogClientLabOAuthTest, ShortLivedTokenIsRefreshedBeforeItExpires) {
  ASSERT_TRUE(lab_->PatchFaults(kUs, {{"token_lifetime_s", 1}}).ok());
  auto& client = Client(OAuthOptions());
  ASSERT_TRUE(GetConfig(client).ok());
  ASSERT_EQ(transport_->TokenRequests(), 1);
  std::this_thread::sleep_for(900ms);  // past 80% of the 1 s lifetime, before its end

  auto namespaces = ListNamespaces(client, std::nullopt);
  ASSERT_TRUE(namespaces.ok()) << namespaces.status().ToString();
  EXPECT_EQ(transport_->TokenRequests(), 2) << "refreshed proactively";
  for (const auto& e : CatalogExchanges()) EXPECT_EQ(e.status, 200) << e.request.url;
  auto catalog = CatalogExchanges();
  EXPECT_NE(catalog.front().Header("Authorization"), catalog.back().Header("Authorization"));
}

TEST_F(CatalogClientLabOAuthTest, UnauthorizedTriggersExactlyOneRefreshAndRetry) {
  // The client's clock stands still, so it believes its token is fresh after the lab has
  // expired it: the lab's 401 is what makes it refresh.
  ASSERT_TRUE(lab_->PatchFaults(kUs, {{"token_lifetime_s", 1}}).ok());
  FakeClock frozen(lab::SystemNowMs());
  auto& client = Client(OAuthOptions(), &frozen);
  ASSERT_TRUE(GetConfig(client).ok());
  std::this_thread::sleep_for(1100ms);

  transport_->Clear();
  auto namespaces = ListNamespaces(client, std::nullopt);
  ASSERT_TRUE(namespaces.ok()) << namespaces.status().ToString();
  const auto& e = transport_->exchanges();
  ASSERT_GE(e.size(), 3u);
  EXPECT_FALSE(e[0].IsTokenRequest());
  EXPECT_EQ(e[0].status, 401);
  EXPECT_TRUE(e[1].IsTokenRequest());
  EXPECT_EQ(e[1].status, 200);
  EXPECT_FALSE(e[2].IsTokenRequest());
  EXPECT_EQ(e[2].status, 200);
  EXPECT_EQ(e[0].request.url, e[2].request.url) << "the same request, resent";
  EXPECT_NE(e[0].Header("Authorization"), e[2].Header("Authorization"));
  EXPECT_EQ(transport_->TokenRequests(), 1);

  // Tokens that are dead on arrival: one refresh and one resend, then the 401 stands.
  ASSERT_TRUE(lab_->PatchFaults(kUs, {{"token_lifetime_s", 0}}).ok());
  std::this_thread::sleep_for(1100ms);
  transport_->Clear();
  auto refused = ListTables(client, {"sales"});
  EXPECT_EQ(refused.status().code(), StatusCode::kUnauthenticated) << refused.status().ToString();
  EXPECT_EQ(transport_->TokenRequests(), 1);
  auto catalog = CatalogExchanges();
  ASSERT_EQ(catalog.size(), 2u);
  EXPECT_EQ(catalog[0].status, 401);
  EXPECT_EQ(catalog[1].status, 401);
  for (const auto& sent : catalog) {
    EXPECT_THAT(refused.status().message(),
                Not(HasSubstr(sent.Header("Authorization").substr(sizeof("Bearer ") - 1))));
  }
}

// Regression: a commit whose OAuth2 token could not be had was never sent, yet the client
// reported CommitOutcome::kStateUnknown (the token error's message does not start with a
// transport phase, so RequestMayHaveBeenDelivered() said "maybe").
TEST_F(CatalogClientLabOAuthTest, CommitWhoseTokenRefreshFailsWasNeverSentAndIsNotStateUnknown) {
  ASSERT_TRUE(lab_->PatchFaults(kUs, {{"token_lifetime_s", 1}}).ok());
  auto& client = Client(OAuthOptions());
  auto seen = Load(client, Orders());
  ASSERT_TRUE(seen.ok()) << seen.status().ToString();
  std::this_thread::sleep_for(900ms);  // the next call refreshes the token first
  ASSERT_TRUE(lab_->StopRegion(kUs).ok());

  auto out = Commit(client, SetProperties(Orders(), seen->table.table_uuid, {{"k", "v"}}));
  ASSERT_FALSE(out.ok()) << "kind " << static_cast<int>(out->kind) << ": " << out->detail;
  EXPECT_EQ(out.status().code(), StatusCode::kUnavailable) << out.status().ToString();
  EXPECT_THAT(out.status().message(), HasSubstr("oauth2 token request"));
  EXPECT_THAT(out.status().message(), HasSubstr("Connection refused"));
  EXPECT_TRUE(transport_->Matching("POST", "/tables/orders").empty());
}

// Regression, second path: the commit got a definite 401 (not applied), and the refresh that
// followed failed: still a definite failure, not an unknown outcome.
TEST_F(CatalogClientLabOAuthTest, CommitRefusedWith401WhoseRefreshFailsIsNotStateUnknown) {
  ASSERT_TRUE(lab_->PatchFaults(kUs, {{"token_lifetime_s", 1}}).ok());
  FakeClock frozen(lab::SystemNowMs());
  auto& client = Client(OAuthOptions(), &frozen);
  auto seen = Load(client, Orders());
  ASSERT_TRUE(seen.ok()) << seen.status().ToString();
  std::this_thread::sleep_for(1100ms);  // the lab expired the token; the client cannot tell
  transport_->on_response = [&](const Exchange& e) {
    if (e.status == 401) {
      ASSERT_TRUE(lab_->StopRegion(kUs).ok());
    }
  };

  auto out = Commit(client, SetProperties(Orders(), seen->table.table_uuid, {{"k", "v"}}));
  ASSERT_FALSE(out.ok()) << "kind " << static_cast<int>(out->kind) << ": " << out->detail;
  EXPECT_EQ(out.status().code(), StatusCode::kUnavailable) << out.status().ToString();
  EXPECT_THAT(out.status().message(), HasSubstr("oauth2 token request"));
  auto posts = transport_->Matching("POST", "/tables/orders");
  ASSERT_EQ(posts.size(), 1u);
  EXPECT_EQ(posts[0].status, 401);
}

}  // namespace
}  // namespace icewarden::testing
