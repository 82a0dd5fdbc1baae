// icewarden's CatalogClient against the lab's catalog, through Stoplight Prism validating every
// request and response against the released Iceberg REST spec (1.11.0). See prism_fixture.h
// for the setup and for the limits of Prism that are worked around.
#include <algorithm>
#include <set>

#include "tests/conformance/prism_fixture.h"

namespace icewarden::conformance {
namespace {

using Namespaces = std::vector<Namespace>;
using Tables = std::vector<TableIdent>;

TableIdent Table(Namespace ns, std::string name) {
  return TableIdent{std::move(ns), std::move(name)};
}

std::set<std::string> Names(const Tables& tables) {
  std::set<std::string> out;
  for (const auto& t : tables) out.insert(t.ToString());
  return out;
}

class CatalogConformanceTest : public PrismConformanceTest {
 protected:
  Result<CatalogConfig> GetConfig(CatalogClient& c) {
    return Await<CatalogConfig>([&c](auto done) { c.GetConfig(std::move(done)); });
  }
  Result<Namespaces> ListNamespaces(CatalogClient& c, std::optional<Namespace> parent) {
    return Await<Namespaces>(
        [&c, parent](auto done) { c.ListNamespaces(parent, std::move(done)); });
  }
  Result<Tables> ListTables(CatalogClient& c, Namespace ns) {
    return Await<Tables>([&c, ns](auto done) { c.ListTables(ns, std::move(done)); });
  }
  Result<LoadTableOutcome> Load(CatalogClient& c, TableIdent t,
                                std::optional<std::string> etag = std::nullopt) {
    return Await<LoadTableOutcome>(
        [&c, t, etag](auto done) { c.LoadTable(t, etag, std::move(done)); });
  }
  Result<CommitOutcome> Commit(CatalogClient& c, TableCommit commit) {
    return Await<CommitOutcome>(
        [&c, commit](auto done) { c.CommitTable(commit, std::move(done)); });
  }

  // The ownership marker commit icewarden makes: guarded by the table's uuid and its main
  // branch, setting icewarden.owner and icewarden.epoch.
  static TableCommit MarkerCommit(const TableSnapshotView& view, const TableIdent& table,
                                  const std::string& owner, int epoch) {
    TableCommit commit;
    commit.table = table;
    commit.requirements.push_back(AssertTableUuid{view.table_uuid});
    commit.requirements.push_back(AssertRefSnapshotId{"main", view.current_snapshot_id});
    commit.updates.push_back(SetPropertiesUpdate{
        {{"icewarden.owner", owner}, {"icewarden.epoch", std::to_string(epoch)}}});
    return commit;
  }
};

TEST_F(CatalogConformanceTest, ConfigListingsLoadsAndCommits) {
  auto client = MakeClient();

  // GET /v1/config?warehouse=lab
  auto config = GetConfig(*client);
  ASSERT_TRUE(config.ok()) << config.status().message() << "\n" << Transcript();
  EXPECT_EQ(config->prefix, kWarehouse);
  EXPECT_TRUE(config->supports_idempotency_keys);
  EXPECT_TRUE(config->Advertises("POST /v1/{prefix}/namespaces/{namespace}/tables/{table}"));

  // Top-level namespaces, two per page.
  auto top = ListNamespaces(*client, std::nullopt);
  ASSERT_TRUE(top.ok()) << top.status().message() << "\n" << Transcript();
  EXPECT_EQ(*top, (Namespaces{{"clickstream"}, {"eu"}, {"sales"}}));
  EXPECT_GE(Count("GET", "/v1/lab/namespaces?"), 2) << Transcript();

  // Nested: parent=sales (and a parent with two levels, which has no children).
  auto nested = ListNamespaces(*client, Namespace{"sales"});
  ASSERT_TRUE(nested.ok()) << nested.status().message();
  EXPECT_EQ(*nested, (Namespaces{{"sales", "archive"}}));
  auto deeper = ListNamespaces(*client, Namespace{"sales", "archive"});
  ASSERT_TRUE(deeper.ok()) << deeper.status().message();
  EXPECT_TRUE(deeper->empty());

  // Tables, two per page: the seeded ones plus sales' share of the extra seed tables.
  auto tables = ListTables(*client, {"sales"});
  ASSERT_TRUE(tables.ok()) << tables.status().message() << "\n" << Transcript();
  auto names = Names(*tables);
  EXPECT_TRUE(names.count("sales.orders")) << ::testing::PrintToString(names);
  EXPECT_TRUE(names.count("sales.customers")) << ::testing::PrintToString(names);
  EXPECT_GE(tables->size(), 3u);
  EXPECT_GE(Count("GET", "/v1/lab/namespaces/sales/tables?"), 2) << Transcript();
  auto archived = ListTables(*client, {"sales", "archive"});
  ASSERT_TRUE(archived.ok()) << archived.status().message();
  EXPECT_EQ(Names(*archived), (std::set<std::string>{"sales.archive.orders_2024"}));

  // Load with snapshots=all, then again with If-None-Match: 304.
  const TableIdent orders = Table({"sales"}, "orders");
  auto loaded = Load(*client, orders);
  ASSERT_TRUE(loaded.ok()) << loaded.status().message() << "\n" << Transcript();
  ASSERT_FALSE(loaded->not_modified);
  const TableSnapshotView view = loaded->table;
  EXPECT_FALSE(view.table_uuid.empty());
  EXPECT_FALSE(view.metadata_location.empty());
  EXPECT_FALSE(view.etag.empty());
  EXPECT_FALSE(view.snapshots.empty());
  auto unchanged = Load(*client, orders, view.etag);
  ASSERT_TRUE(unchanged.ok()) << unchanged.status().message();
  EXPECT_TRUE(unchanged->not_modified);

  // A nested namespace's table loads too (namespace encoded with %1F).
  auto archived_load = Load(*client, Table({"sales", "archive"}, "orders_2024"));
  ASSERT_TRUE(archived_load.ok()) << archived_load.status().message();

  // The ownership marker commit.
  auto committed = Commit(*client, MarkerCommit(view, orders, kRegion, 1));
  ASSERT_TRUE(committed.ok()) << committed.status().message() << "\n" << Transcript();
  ASSERT_EQ(committed->kind, CommitOutcome::Kind::kCommitted) << committed->detail;
  EXPECT_TRUE(committed->detail.empty()) << committed->detail;
  EXPECT_EQ(committed->table.properties["icewarden.owner"], kRegion);
  EXPECT_EQ(committed->table.properties["icewarden.epoch"], "1");
  EXPECT_NE(committed->table.metadata_location, view.metadata_location);
  EXPECT_FALSE(committed->idempotency_key.empty());

  // The old ETag no longer matches: a full 200 with the new properties.
  auto changed = Load(*client, orders, view.etag);
  ASSERT_TRUE(changed.ok()) << changed.status().message();
  EXPECT_FALSE(changed->not_modified);
  EXPECT_EQ(changed->table.properties["icewarden.epoch"], "1");

  // Removing a property is the other update icewarden sends.
  TableCommit removal;
  removal.table = orders;
  removal.requirements.push_back(AssertTableUuid{view.table_uuid});
  removal.updates.push_back(RemovePropertiesUpdate{{"icewarden.owner"}});
  auto removed = Commit(*client, removal);
  ASSERT_TRUE(removed.ok()) << removed.status().message();
  EXPECT_EQ(removed->kind, CommitOutcome::Kind::kCommitted) << removed->detail;
  EXPECT_FALSE(removed->table.properties.count("icewarden.owner"));

  ExpectNoViolations();
}

TEST_F(CatalogConformanceTest, ConflictsAndMissingTables) {
  auto client = MakeClient();
  const TableIdent orders = Table({"sales"}, "orders");
  auto loaded = Load(*client, orders);
  ASSERT_TRUE(loaded.ok()) << loaded.status().message() << "\n" << Transcript();

  // A stale main: 409 CommitFailedException, reported as kConflict.
  TableSnapshotView stale = loaded->table;
  stale.current_snapshot_id = stale.current_snapshot_id.value_or(0) + 12345;
  auto conflict = Commit(*client, MarkerCommit(stale, orders, kRegion, 2));
  ASSERT_FALSE(conflict.ok());
  EXPECT_EQ(conflict.status().code(), StatusCode::kConflict) << conflict.status().message();

  // "the ref must not exist" (snapshot-id: null) on a table whose main exists: 409 as well.
  TableSnapshotView no_main = loaded->table;
  no_main.current_snapshot_id.reset();
  if (loaded->table.current_snapshot_id) {
    auto must_not_exist = Commit(*client, MarkerCommit(no_main, orders, kRegion, 2));
    ASSERT_FALSE(must_not_exist.ok());
    EXPECT_EQ(must_not_exist.status().code(), StatusCode::kConflict);
  }

  // Another table's uuid: 409.
  TableSnapshotView wrong_uuid = loaded->table;
  wrong_uuid.table_uuid = "00000000-0000-4000-8000-000000000000";
  auto wrong = Commit(*client, MarkerCommit(wrong_uuid, orders, kRegion, 2));
  ASSERT_FALSE(wrong.ok());
  EXPECT_EQ(wrong.status().code(), StatusCode::kConflict);

  // 404s: a missing table, a table in a missing namespace, listing a missing namespace.
  auto missing = Load(*client, Table({"sales"}, "no_such_table"));
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound) << missing.status().message();
  auto missing_ns = Load(*client, Table({"no_such_ns"}, "orders"));
  ASSERT_FALSE(missing_ns.ok());
  EXPECT_EQ(missing_ns.status().code(), StatusCode::kNotFound);
  auto missing_list = ListTables(*client, {"no_such_ns"});
  ASSERT_FALSE(missing_list.ok());
  EXPECT_EQ(missing_list.status().code(), StatusCode::kNotFound);
  auto missing_children = ListNamespaces(*client, Namespace{"no_such_ns"});
  ASSERT_FALSE(missing_children.ok());
  EXPECT_EQ(missing_children.status().code(), StatusCode::kNotFound);

  // Config for a warehouse the catalog does not have: 404 NoSuchWarehouseException.
  auto elsewhere = MakeClient(CatalogAuth::Bearer(kToken), 2, "no_such_warehouse");
  auto no_warehouse = GetConfig(*elsewhere);
  ASSERT_FALSE(no_warehouse.ok());
  EXPECT_EQ(no_warehouse.status().code(), StatusCode::kNotFound) << no_warehouse.status().message();

  // A token the catalog does not accept: 401 NotAuthorizedException, and the token is not
  // repeated in the message.
  auto stranger = MakeClient(CatalogAuth::Bearer("not-a-valid-token"));
  auto refused = GetConfig(*stranger);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kUnauthenticated) << refused.status().message();
  EXPECT_EQ(refused.status().message().find("not-a-valid-token"), std::string::npos);

  // A commit to a missing table: 404 NoSuchTableException.
  TableCommit orphan;
  orphan.table = Table({"sales"}, "no_such_table");
  orphan.updates.push_back(SetPropertiesUpdate{{{"icewarden.epoch", "1"}}});
  auto orphaned = Commit(*client, orphan);
  ASSERT_FALSE(orphaned.ok());
  EXPECT_EQ(orphaned.status().code(), StatusCode::kNotFound) << orphaned.status().message();

  // The table is unchanged by all of the above.
  auto after = Load(*client, orders, loaded->table.etag);
  ASSERT_TRUE(after.ok()) << after.status().message();
  EXPECT_TRUE(after->not_modified);

  ExpectNoViolations();
}

TEST_F(CatalogConformanceTest, UnavailableRegionAnswersPerSpec) {
  auto client = MakeClient();
  auto config = GetConfig(*client);
  ASSERT_TRUE(config.ok()) << config.status().message();

  // 503 with Retry-After on every catalog route: the client retries, then gives up.
  ASSERT_TRUE(
      lab_->PatchFaults(kRegion, {{"error_rate", 1.0}, {"error_status", 503}, {"retry_after_s", 1}})
          .ok());
  auto listed = ListNamespaces(*client, std::nullopt);
  ASSERT_FALSE(listed.ok());
  EXPECT_EQ(listed.status().code(), StatusCode::kUnavailable) << listed.status().message();

  // 500 on a commit is CommitStateUnknownException: the commit's fate is unknown.
  ASSERT_TRUE(lab_->ClearFaults(kRegion).ok());
  const TableIdent orders = Table({"sales"}, "orders");
  auto loaded = Load(*client, orders);
  ASSERT_TRUE(loaded.ok()) << loaded.status().message();
  ASSERT_TRUE(lab_->PatchFaults(kRegion, {{"error_rate", 1.0}, {"error_status", 500}}).ok());
  allow_server_errors_ = true;  // the lab's own 500s, told apart from Prism's by their body
  auto unknown = Commit(*client, MarkerCommit(loaded->table, orders, kRegion, 3));
  ASSERT_TRUE(unknown.ok()) << unknown.status().message();
  EXPECT_EQ(unknown->kind, CommitOutcome::Kind::kStateUnknown);
  EXPECT_NE(unknown->detail.find("CommitStateUnknownException"), std::string::npos)
      << unknown->detail;
  ASSERT_TRUE(lab_->ClearFaults(kRegion).ok());

  ExpectNoViolations();
}

// OAuth2 client credentials: the token request goes to {base}/v1/oauth/tokens, which is the
// proxied base, so Prism validates the form request and the token response (and, with wrong
// credentials, the OAuthError body).
class OAuthConformanceTest : public CatalogConformanceTest {
 protected:
  // The static token stays for the fixture's setup commits; the client under test uses OAuth2.
  OAuthConformanceTest() {
    options_.oauth_client_id = kClientId;
    options_.oauth_client_secret = kClientSecret;
  }
};

TEST_F(OAuthConformanceTest, TokenThenCatalogCalls) {
  auto client = MakeClient(CatalogAuth::ClientCredentials(kClientId, kClientSecret));
  auto config = GetConfig(*client);
  ASSERT_TRUE(config.ok()) << config.status().message() << "\n" << Transcript();
  EXPECT_EQ(Count("POST", "/v1/oauth/tokens"), 1) << Transcript();

  auto top = ListNamespaces(*client, std::nullopt);
  ASSERT_TRUE(top.ok()) << top.status().message();
  EXPECT_EQ(top->size(), 3u);
  const TableIdent orders = Table({"sales"}, "orders");
  auto loaded = Load(*client, orders);
  ASSERT_TRUE(loaded.ok()) << loaded.status().message();
  auto committed = Commit(*client, MarkerCommit(loaded->table, orders, kRegion, 1));
  ASSERT_TRUE(committed.ok()) << committed.status().message();
  EXPECT_EQ(committed->kind, CommitOutcome::Kind::kCommitted);
  EXPECT_EQ(Count("POST", "/v1/oauth/tokens"), 1) << "the token is cached\n" << Transcript();

  ExpectNoViolations();
}

TEST_F(OAuthConformanceTest, WrongSecretIsUnauthenticated) {
  auto client = MakeClient(CatalogAuth::ClientCredentials(kClientId, "not-the-secret"));
  auto config = GetConfig(*client);
  ASSERT_FALSE(config.ok());
  EXPECT_EQ(config.status().code(), StatusCode::kUnauthenticated) << config.status().message();
  EXPECT_EQ(config.status().message().find("not-the-secret"), std::string::npos);
  EXPECT_GE(Count("POST", "/v1/oauth/tokens"), 1) << Transcript();

  ExpectNoViolations();
}

// The requirement check itself (no Prism needed): it must catch what Prism lets through.
TEST(RequirementCheckTest, CatchesWhatPrismDoesNot) {
  const std::string spec_path = ReleasedSpecPath();
  ASSERT_TRUE(std::filesystem::exists(spec_path))
      << "the Iceberg REST spec is missing: " << spec_path;
  const YAML::Node spec = YAML::LoadFile(spec_path);
  EXPECT_TRUE(RequirementProblems(spec, R"({"requirements":[
      {"type":"assert-table-uuid","uuid":"u"},
      {"type":"assert-ref-snapshot-id","ref":"main","snapshot-id":null},
      {"type":"assert-ref-snapshot-id","ref":"main","snapshot-id":7}],"updates":[]})")
                  .empty());
  EXPECT_EQ(
      RequirementProblems(spec, R"({"requirements":[{"type":"assert-uuid","uuid":"u"}]})").size(),
      1u);
  EXPECT_EQ(RequirementProblems(
                spec, R"({"requirements":[{"type":"assert-ref-snapshot-id","ref":"main"}]})")
                .size(),
            1u);
  EXPECT_EQ(RequirementProblems(spec, R"({"requirements":[{"type":"assert-table-uuid","uuid":5}]})")
                .size(),
            1u);
  EXPECT_EQ(RequirementProblems(spec, R"({"updates":[]})").size(), 1u);
}

}  // namespace
}  // namespace icewarden::conformance
