// The lab catalog's multi-table transactions, drops, renames and registers, spoken to over HTTP:
// their spec answers, that a transaction applies all of its tables or none, and how each
// reaches the replica region (as commits, as drops, as a new table).
#include "tests/integration/lab/lab_fixture.h"

namespace icewarden::lab::testing {
namespace {

class LabTableMovesTest : public LabTest {
 protected:
  // One table-change of a CommitTransactionRequest: an append on top of `ns.table` in `region`.
  json AppendChange(const std::string& region, const std::string& ns, const std::string& table) {
    json change = AppendCommit(Metadata(region, ns, table), "test", SystemNowMs());
    change["identifier"] = {{"namespace", {ns}}, {"name", table}};
    return change;
  }

  httplib::Result Delete(const std::string& region, const std::string& path) {
    return Client(region)->Delete(path);
  }

  static json Rename(const std::string& from_ns, const std::string& from, const std::string& to_ns,
                     const std::string& to) {
    return {{"source", {{"namespace", {from_ns}}, {"name", from}}},
            {"destination", {{"namespace", {to_ns}}, {"name", to}}}};
  }

  int Status(const std::string& region, const std::string& path) {
    auto result = Client(region)->Get(path);
    return result ? result->status : -1;
  }
};

TEST_F(LabTableMovesTest, TransactionCommitsEveryTableOrNone) {
  const std::string orders = MetadataLocation(kUs, "sales", "orders");
  const std::string customers = MetadataLocation(kUs, "sales", "customers");
  json good = {{"table-changes",
                {AppendChange(kUs, "sales", "orders"), AppendChange(kUs, "sales", "customers")}}};
  auto committed = PostJson(kUs, "/v1/lab/transactions/commit", good);
  ASSERT_TRUE(committed);
  EXPECT_EQ(committed->status, 204) << committed->body;
  EXPECT_TRUE(committed->body.empty());
  const std::string orders2 = MetadataLocation(kUs, "sales", "orders");
  const std::string customers2 = MetadataLocation(kUs, "sales", "customers");
  EXPECT_NE(orders2, orders);
  EXPECT_NE(customers2, customers);

  // The second change's requirement fails: the first, whose requirements hold, is not applied.
  json bad_change = AppendChange(kUs, "sales", "customers");
  bad_change["requirements"] = {
      {{"type", "assert-table-uuid"}, {"uuid", "00000000-0000-4000-8000-000000000000"}}};
  json bad = {{"table-changes", {AppendChange(kUs, "sales", "orders"), bad_change}}};
  ExpectCatalogError(PostJson(kUs, "/v1/lab/transactions/commit", bad), 409,
                     "CommitFailedException");
  EXPECT_EQ(MetadataLocation(kUs, "sales", "orders"), orders2);
  EXPECT_EQ(MetadataLocation(kUs, "sales", "customers"), customers2);

  // A table that does not exist, a change without its identifier, a malformed body.
  json missing = AppendChange(kUs, "sales", "orders");
  missing["identifier"]["name"] = "no_such_table";
  ExpectCatalogError(PostJson(kUs, "/v1/lab/transactions/commit",
                              {{"table-changes", {AppendChange(kUs, "sales", "orders"), missing}}}),
                     404, "NoSuchTableException");
  json anonymous = AppendChange(kUs, "sales", "orders");
  anonymous.erase("identifier");
  ExpectCatalogError(PostJson(kUs, "/v1/lab/transactions/commit", {{"table-changes", {anonymous}}}),
                     400, "BadRequestException");
  ExpectCatalogError(
      PostJson(kUs, "/v1/lab/transactions/commit", {{"table-changes", json::array()}}), 400,
      "BadRequestException");
  EXPECT_EQ(MetadataLocation(kUs, "sales", "orders"), orders2);

  // Replicated as the table commits it is made of.
  EXPECT_TRUE(Eventually([&] {
    lab_->ReplicateNow();
    return MetadataLocation(kEu, "sales", "orders") == orders2 &&
           MetadataLocation(kEu, "sales", "customers") == customers2;
  }));
}

TEST_F(LabTableMovesTest, DropReplicatesAndRegisterBringsTheTableBack) {
  ASSERT_EQ(PostJson(kUs, "/v1/lab/namespaces/sales/tables", NewTableRequest("dropped"))->status,
            200);
  const std::string location = MetadataLocation(kUs, "sales", "dropped");
  const std::string uuid = Metadata(kUs, "sales", "dropped")["table-uuid"];
  ASSERT_TRUE(Eventually([&] {
    lab_->ReplicateNow();
    return Replicated("sales", "dropped");
  }));

  auto dropped = Delete(kUs, TablePath("sales", "dropped"));
  ASSERT_TRUE(dropped);
  EXPECT_EQ(dropped->status, 204) << dropped->body;
  EXPECT_EQ(Status(kUs, TablePath("sales", "dropped")), 404);
  ExpectCatalogError(Delete(kUs, TablePath("sales", "dropped")), 404, "NoSuchTableException");
  EXPECT_TRUE(Eventually([&] {
    lab_->ReplicateNow();
    return Status(kEu, TablePath("sales", "dropped")) == 404;
  }));

  // Registered again from its last metadata file, which a drop without purge keeps.
  json request = {{"name", "dropped"}, {"metadata-location", location}};
  auto registered = PostJson(kUs, "/v1/lab/namespaces/sales/register", request);
  ASSERT_TRUE(registered);
  ASSERT_EQ(registered->status, 200) << registered->body;
  json result = json::parse(registered->body);
  EXPECT_EQ(result["metadata-location"], location);
  EXPECT_EQ(result["metadata"]["table-uuid"], uuid);
  EXPECT_EQ(MetadataLocation(kUs, "sales", "dropped"), location);
  EXPECT_TRUE(Eventually([&] {
    lab_->ReplicateNow();
    return Replicated("sales", "dropped");
  }));
  ExpectCatalogError(PostJson(kUs, "/v1/lab/namespaces/sales/register", request), 409,
                     "AlreadyExistsException");
  // Under another name, from a metadata file of a live table.
  auto copy = PostJson(
      kUs, "/v1/lab/namespaces/sales/register",
      {{"name", "orders_copy"}, {"metadata-location", MetadataLocation(kUs, "sales", "orders")}});
  ASSERT_TRUE(copy);
  EXPECT_EQ(copy->status, 200) << copy->body;

  // What the lab cannot read, a namespace that does not exist, a body without a location.
  ExpectCatalogError(PostJson(kUs, "/v1/lab/namespaces/sales/register",
                              {{"name", "x"}, {"metadata-location", "s3://elsewhere/m.json"}}),
                     400, "BadRequestException");
  ExpectCatalogError(PostJson(kUs, "/v1/lab/namespaces/nope/register", request), 404,
                     "NoSuchNamespaceException");
  ExpectCatalogError(PostJson(kUs, "/v1/lab/namespaces/sales/register", {{"name", "x"}}), 400,
                     "BadRequestException");

  // A purged drop keeps no metadata: nothing to register.
  const std::string last = MetadataLocation(kUs, "sales", "dropped");
  auto purged = Delete(kUs, TablePath("sales", "dropped") + "?purgeRequested=true");
  ASSERT_TRUE(purged);
  EXPECT_EQ(purged->status, 204);
  ExpectCatalogError(PostJson(kUs, "/v1/lab/namespaces/sales/register",
                              {{"name", "dropped"}, {"metadata-location", last}}),
                     400, "BadRequestException");
}

TEST_F(LabTableMovesTest, RenameMovesTheTableWithItsHistory) {
  const std::string location = MetadataLocation(kUs, "sales", "customers");
  const std::string uuid = Metadata(kUs, "sales", "customers")["table-uuid"];
  ASSERT_TRUE(Eventually([&] {
    lab_->ReplicateNow();
    return Replicated("sales", "customers");
  }));
  auto renamed = PostJson(kUs, "/v1/lab/tables/rename",
                          Rename("sales", "customers", "clickstream", "clients"));
  ASSERT_TRUE(renamed);
  EXPECT_EQ(renamed->status, 204) << renamed->body;
  EXPECT_EQ(Status(kUs, TablePath("sales", "customers")), 404);
  EXPECT_EQ(MetadataLocation(kUs, "clickstream", "clients"), location);
  EXPECT_EQ(Metadata(kUs, "clickstream", "clients")["table-uuid"], uuid);
  // Commits go on at the new name, on top of the same history.
  auto appended = Append(kUs, "clickstream", "clients");
  ASSERT_TRUE(appended);
  EXPECT_EQ(appended->status, 200) << appended->body;

  // The replica gets the destination (with the history) and drops the source.
  EXPECT_TRUE(Eventually([&] {
    lab_->ReplicateNow();
    return Replicated("clickstream", "clients") &&
           Status(kEu, TablePath("sales", "customers")) == 404;
  }));

  ExpectCatalogError(
      PostJson(kUs, "/v1/lab/tables/rename", Rename("sales", "customers", "sales", "again")), 404,
      "NoSuchTableException");
  ExpectCatalogError(
      PostJson(kUs, "/v1/lab/tables/rename", Rename("sales", "orders", "nope", "orders")), 404,
      "NoSuchNamespaceException");
  ExpectCatalogError(
      PostJson(kUs, "/v1/lab/tables/rename", Rename("sales", "orders", "clickstream", "clients")),
      409, "AlreadyExistsException");
  ExpectCatalogError(PostJson(kUs, "/v1/lab/tables/rename", {{"source", "sales.orders"}}), 400,
                     "BadRequestException");
}

TEST_F(LabTableMovesTest, PausedWritesRefuseTheNewWritesAndChangeNothing) {
  const std::string orders = MetadataLocation(kUs, "sales", "orders");
  json transaction = {{"table-changes", {AppendChange(kUs, "sales", "orders")}}};
  ASSERT_TRUE(lab_->SetWritesPaused(kUs, true).ok());
  ExpectCatalogError(PostJson(kUs, "/v1/lab/transactions/commit", transaction), 403,
                     "ForbiddenException");
  ExpectCatalogError(Delete(kUs, TablePath("sales", "orders")), 403, "ForbiddenException");
  ExpectCatalogError(
      PostJson(kUs, "/v1/lab/tables/rename", Rename("sales", "orders", "sales", "renamed")), 403,
      "ForbiddenException");
  ExpectCatalogError(PostJson(kUs, "/v1/lab/namespaces/sales/register",
                              {{"name", "registered"}, {"metadata-location", orders}}),
                     403, "ForbiddenException");
  ExpectCatalogError(PostJson(kUs, "/v1/lab/namespaces/sales/views",
                              NewViewRequest("paused_view", {"sales"}, "SELECT 1")),
                     403, "ForbiddenException");
  EXPECT_EQ(MetadataLocation(kUs, "sales", "orders"), orders);
  EXPECT_EQ(Status(kUs, TablePath("sales", "renamed")), 404);
  EXPECT_EQ(Status(kUs, TablePath("sales", "registered")), 404);
  ASSERT_TRUE(lab_->SetWritesPaused(kUs, false).ok());
  auto committed = PostJson(kUs, "/v1/lab/transactions/commit", transaction);
  ASSERT_TRUE(committed);
  EXPECT_EQ(committed->status, 204) << committed->body;
}

}  // namespace
}  // namespace icewarden::lab::testing
