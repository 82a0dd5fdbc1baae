// The lab catalog's views over HTTP: list, create, load, HEAD, replace, rename and drop with
// the spec's ViewMetadata and errors, and their replication to the replica region.
#include "tests/integration/lab/lab_fixture.h"

namespace icewarden::lab::testing {
namespace {

using LabViewsTest = LabTest;

std::string ViewPath(const std::string& ns, const std::string& view) {
  return "/v1/lab/namespaces/" + ns + "/views/" + view;
}

TEST_F(LabViewsTest, CreateLoadReplaceRenameDropAndReplicate) {
  auto created = PostJson(kUs, "/v1/lab/namespaces/sales/views",
                          NewViewRequest("daily", {"sales"}, "SELECT * FROM orders"));
  ASSERT_TRUE(created);
  ASSERT_EQ(created->status, 200) << created->body;
  json view = json::parse(created->body);
  const json& metadata = view["metadata"];
  EXPECT_EQ(metadata["format-version"], 1);
  EXPECT_EQ(metadata["current-version-id"], 1);
  EXPECT_EQ(metadata["versions"].size(), 1u);
  EXPECT_EQ(metadata["versions"][0]["schema-id"], 0);
  EXPECT_EQ(metadata["schemas"][0]["schema-id"], 0);
  EXPECT_EQ(metadata["version-log"].size(), 1u);
  EXPECT_EQ(metadata["properties"]["comment"], "a lab view");
  EXPECT_EQ(metadata["location"], "s3://icewarden-lab/warehouse/sales/daily");
  const std::string uuid = metadata["view-uuid"];
  const std::string location = view["metadata-location"];

  EXPECT_EQ(GetJson(kUs, "/v1/lab/namespaces/sales/views")["identifiers"],
            json::parse(R"([{"namespace":["sales"],"name":"daily"}])"));
  EXPECT_EQ(GetJson(kUs, ViewPath("sales", "daily"))["metadata-location"], location);
  auto head = Client(kUs)->Head(ViewPath("sales", "daily"));
  ASSERT_TRUE(head);
  EXPECT_EQ(head->status, 204);
  ExpectCatalogError(Client(kUs)->Get(ViewPath("sales", "nope")), 404, "NoSuchViewException");
  ExpectCatalogError(Client(kUs)->Get("/v1/lab/namespaces/nope/views"), 404,
                     "NoSuchNamespaceException");
  ExpectCatalogError(PostJson(kUs, "/v1/lab/namespaces/sales/views",
                              NewViewRequest("daily", {"sales"}, "SELECT 2")),
                     409, "AlreadyExistsException");
  ExpectCatalogError(PostJson(kUs, "/v1/lab/namespaces/sales/views",
                              NewViewRequest("orders", {"sales"}, "SELECT 2")),
                     409, "AlreadyExistsException");  // a table's name
  json no_schema = NewViewRequest("bad", {"sales"}, "SELECT 1");
  no_schema.erase("schema");
  ExpectCatalogError(PostJson(kUs, "/v1/lab/namespaces/sales/views", no_schema), 400,
                     "BadRequestException");

  // Replace: a new version made current, under assert-view-uuid.
  json version = NewViewRequest("daily", {"sales"}, "SELECT id FROM orders")["view-version"];
  version["schema-id"] = 0;
  json replace = {{"requirements", {{{"type", "assert-view-uuid"}, {"uuid", uuid}}}},
                  {"updates",
                   {{{"action", "add-view-version"}, {"view-version", version}},
                    {{"action", "set-current-view-version"}, {"view-version-id", -1}},
                    {{"action", "set-properties"}, {"updates", {{"owner", "tests"}}}}}}};
  auto replaced = PostJson(kUs, ViewPath("sales", "daily"), replace);
  ASSERT_TRUE(replaced);
  ASSERT_EQ(replaced->status, 200) << replaced->body;
  json after = json::parse(replaced->body);
  EXPECT_EQ(after["metadata"]["current-version-id"], 2);
  EXPECT_EQ(after["metadata"]["versions"].size(), 2u);
  EXPECT_EQ(after["metadata"]["version-log"].size(), 2u);
  EXPECT_EQ(after["metadata"]["properties"]["owner"], "tests");
  EXPECT_EQ(after["metadata"]["view-uuid"], uuid);
  const std::string replaced_location = after["metadata-location"];
  EXPECT_NE(replaced_location, location);
  json stale = replace;
  stale["requirements"][0]["uuid"] = "00000000-0000-4000-8000-000000000000";
  ExpectCatalogError(PostJson(kUs, ViewPath("sales", "daily"), stale), 409,
                     "CommitFailedException");
  ExpectCatalogError(
      PostJson(kUs, ViewPath("sales", "daily"), {{"updates", {{{"action", "add-snapshot"}}}}}), 400,
      "BadRequestException");
  EXPECT_EQ(GetJson(kUs, ViewPath("sales", "daily"))["metadata-location"], replaced_location);

  // Replicated to the region that does not own sales.*.
  EXPECT_TRUE(Eventually([&] {
    lab_->ReplicateNow();
    json copy = GetJson(kEu, ViewPath("sales", "daily"));
    return copy.is_object() && copy["metadata-location"] == replaced_location;
  }));

  auto renamed = PostJson(kUs, "/v1/lab/views/rename",
                          {{"source", {{"namespace", {"sales"}}, {"name", "daily"}}},
                           {"destination", {{"namespace", {"sales"}}, {"name", "weekly"}}}});
  ASSERT_TRUE(renamed);
  EXPECT_EQ(renamed->status, 204) << renamed->body;
  EXPECT_EQ(GetJson(kUs, ViewPath("sales", "weekly"))["metadata"]["view-uuid"], uuid);
  ExpectCatalogError(Client(kUs)->Get(ViewPath("sales", "daily")), 404, "NoSuchViewException");
  ExpectCatalogError(PostJson(kUs, "/v1/lab/views/rename",
                              {{"source", {{"namespace", {"sales"}}, {"name", "daily"}}},
                               {"destination", {{"namespace", {"sales"}}, {"name", "x"}}}}),
                     404, "NoSuchViewException");
  EXPECT_TRUE(Eventually([&] {
    lab_->ReplicateNow();
    auto gone = Client(kEu)->Get(ViewPath("sales", "daily"));
    json moved = GetJson(kEu, ViewPath("sales", "weekly"));
    return gone && gone->status == 404 && moved.is_object();
  }));

  auto dropped = Client(kUs)->Delete(ViewPath("sales", "weekly"));
  ASSERT_TRUE(dropped);
  EXPECT_EQ(dropped->status, 204) << dropped->body;
  ExpectCatalogError(Client(kUs)->Delete(ViewPath("sales", "weekly")), 404, "NoSuchViewException");
  EXPECT_EQ(GetJson(kUs, "/v1/lab/namespaces/sales/views")["identifiers"], json::array());
  EXPECT_TRUE(Eventually([&] {
    lab_->ReplicateNow();
    auto gone = Client(kEu)->Get(ViewPath("sales", "weekly"));
    return gone && gone->status == 404;
  }));
}

}  // namespace
}  // namespace icewarden::lab::testing
