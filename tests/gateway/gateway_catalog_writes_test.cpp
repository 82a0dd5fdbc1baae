// Through the real `icewarden gateway` (gateway_fixture.h): the lab's answers to transactions,
// renames, drops, registers and views, that each lands in the owner region only (and reaches
// the replica by the lab's replication afterwards), and that ownership refusals apply to them.
#include <gtest/gtest.h>
#include <httplib.h>

#include "tests/gateway/gateway_fixture.h"

namespace icewarden::lab::testing {
namespace {

class GatewayCatalogWritesTest : public GatewayTest {
 protected:
  // A table-change appending to `ns.table` on top of what `gateway` loads.
  json AppendChangeVia(const std::string& gateway, const std::string& ns,
                       const std::string& table) {
    auto loaded = To(gateway)->Get(TablePath(ns, table));
    EXPECT_TRUE(loaded && loaded->status == 200);
    if (!loaded || loaded->status != 200) return nullptr;
    json change =
        AppendCommit(json::parse(loaded->body)["metadata"], "gateway-test", SystemNowMs());
    change["identifier"] = {{"namespace", {ns}}, {"name", table}};
    return change;
  }

  httplib::Result PostVia(const std::string& gateway, const std::string& path, const json& body) {
    return To(gateway)->Post(path, body.dump(), "application/json");
  }

  static json Rename(const std::string& ns, const std::string& from, const std::string& to) {
    return {{"source", {{"namespace", {ns}}, {"name", from}}},
            {"destination", {{"namespace", {ns}}, {"name", to}}}};
  }

  int Status(const std::string& region, const std::string& path) {
    auto result = Client(region)->Get(path);
    return result ? result->status : -1;
  }

  static std::string ViewPath(const std::string& ns, const std::string& view) {
    return "/v1/lab/namespaces/" + ns + "/views/" + view;
  }
};

TEST_F(GatewayCatalogWritesTest, ATransactionCommitsInTheOwnerOnlyAndOneOverTwoOwnersIsRefused) {
  const std::string gw = StartGateway("gw-us");
  lab_->PauseReplication();
  const std::size_t orders_eu = Snapshots(kEu, "sales", "orders");
  const std::size_t orders_us = Snapshots(kUs, "sales", "orders");
  const std::size_t events_us = Snapshots(kUs, "clickstream", "events");
  json transaction = {
      {"table-changes",
       {AppendChangeVia(gw, "sales", "orders"), AppendChangeVia(gw, "clickstream", "events")}}};
  auto r = PostVia(gw, "/v1/lab/transactions/commit", transaction);
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 204) << r->body;
  EXPECT_EQ(r->get_header_value("X-Icewarden-Region"), kUs);
  EXPECT_EQ(Snapshots(kUs, "sales", "orders"), orders_us + 1);
  EXPECT_EQ(Snapshots(kUs, "clickstream", "events"), events_us + 1);
  EXPECT_EQ(Snapshots(kEu, "sales", "orders"), orders_eu) << "nothing was sent to the replica";

  // A requirement that fails: the lab's 409, passed on, and neither table moved.
  json stale = transaction;  // its requirements name the snapshots the first one replaced
  auto conflict = PostVia(gw, "/v1/lab/transactions/commit", stale);
  ASSERT_TRUE(conflict);
  EXPECT_EQ(conflict->status, 409) << conflict->body;
  EXPECT_EQ(Error(conflict)["type"], "CommitFailedException");
  EXPECT_EQ(Snapshots(kUs, "sales", "orders"), orders_us + 1);

  // Two owners: refused by the gateway, sent nowhere.
  json spans = {{"table-changes",
                 {AppendChangeVia(gw, "sales", "orders"), AppendChangeVia(gw, "eu", "orders")}}};
  const std::size_t eu_orders = Snapshots(kEu, "eu", "orders");
  auto refused = PostVia(gw, "/v1/lab/transactions/commit", spans);
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->status, 400) << refused->body;
  EXPECT_EQ(Snapshots(kUs, "sales", "orders"), orders_us + 1);
  EXPECT_EQ(Snapshots(kEu, "eu", "orders"), eu_orders);

  lab_->ResumeReplication();
  EXPECT_TRUE(Eventually(
      [&] { return Replicated("sales", "orders") && Replicated("clickstream", "events"); }));
}

TEST_F(GatewayCatalogWritesTest, RenameDropAndRegisterLandInTheOwnerThenReplicate) {
  const std::string gw = StartGateway("gw-us");
  auto created = PostVia(gw, "/v1/lab/namespaces/sales/tables", NewTableRequest("gw_moves"));
  ASSERT_TRUE(created);
  ASSERT_EQ(created->status, 200) << created->body;
  ASSERT_TRUE(Eventually([&] { return Replicated("sales", "gw_moves"); }));
  const std::string location = MetadataLocation(kUs, "sales", "gw_moves");
  lab_->PauseReplication();

  auto renamed = PostVia(gw, "/v1/lab/tables/rename", Rename("sales", "gw_moves", "gw_moved"));
  ASSERT_TRUE(renamed);
  ASSERT_EQ(renamed->status, 204) << renamed->body;
  EXPECT_EQ(renamed->get_header_value("X-Icewarden-Region"), kUs);
  EXPECT_EQ(MetadataLocation(kUs, "sales", "gw_moved"), location);
  EXPECT_EQ(Status(kUs, TablePath("sales", "gw_moves")), 404);
  EXPECT_EQ(MetadataLocation(kEu, "sales", "gw_moves"), location) << "not sent to the replica";
  EXPECT_EQ(Status(kEu, TablePath("sales", "gw_moved")), 404);

  auto dropped = To(gw)->Delete(TablePath("sales", "gw_moved"));
  ASSERT_TRUE(dropped);
  ASSERT_EQ(dropped->status, 204) << dropped->body;
  EXPECT_EQ(dropped->get_header_value("X-Icewarden-Region"), kUs);
  EXPECT_EQ(Status(kUs, TablePath("sales", "gw_moved")), 404);

  auto registered = PostVia(gw, "/v1/lab/namespaces/sales/register",
                            {{"name", "gw_registered"}, {"metadata-location", location}});
  ASSERT_TRUE(registered);
  ASSERT_EQ(registered->status, 200) << registered->body;
  EXPECT_EQ(registered->get_header_value("X-Icewarden-Region"), kUs);
  EXPECT_EQ(json::parse(registered->body)["metadata-location"], location);
  EXPECT_EQ(Status(kEu, TablePath("sales", "gw_registered")), 404) << "not sent to the replica";

  // Replication then carries all three: the rename's source and the drop go, the registered
  // table comes.
  lab_->ResumeReplication();
  EXPECT_TRUE(Eventually([&] {
    return Status(kEu, TablePath("sales", "gw_moves")) == 404 &&
           Status(kEu, TablePath("sales", "gw_moved")) == 404 &&
           Replicated("sales", "gw_registered");
  }));
}

TEST_F(GatewayCatalogWritesTest, RenameDropAndRegisterOfAnotherRegionsTableAreRefusedWith409) {
  const std::string gw = StartGateway("gw-eu-only");
  lab_->PauseReplication();
  const std::string orders = MetadataLocation(kUs, "sales", "orders");
  auto renamed = PostVia(gw, "/v1/lab/tables/rename", Rename("sales", "orders", "orders_moved"));
  ASSERT_TRUE(renamed);
  EXPECT_EQ(renamed->status, 409) << renamed->body;
  EXPECT_NE(Error(renamed)["type"].get<std::string>().find("owner=us-east-1"), std::string::npos);
  auto dropped = To(gw)->Delete(TablePath("sales", "orders"));
  ASSERT_TRUE(dropped);
  EXPECT_EQ(dropped->status, 409) << dropped->body;
  auto registered = PostVia(gw, "/v1/lab/namespaces/sales/register",
                            {{"name", "orders_again"}, {"metadata-location", orders}});
  ASSERT_TRUE(registered);
  EXPECT_EQ(registered->status, 409) << registered->body;
  auto view = PostVia(gw, "/v1/lab/namespaces/sales/views",
                      NewViewRequest("refused", {"sales"}, "SELECT 1"));
  ASSERT_TRUE(view);
  EXPECT_EQ(view->status, 409) << view->body;
  for (const char* region : {kUs, kEu}) {
    EXPECT_EQ(MetadataLocation(region, "sales", "orders"), orders) << region;
    EXPECT_EQ(Status(region, TablePath("sales", "orders_moved")), 404) << region;
    EXPECT_EQ(Status(region, TablePath("sales", "orders_again")), 404) << region;
    EXPECT_EQ(Status(region, ViewPath("sales", "refused")), 404) << region;
  }
}

TEST_F(GatewayCatalogWritesTest, ViewWritesGoToTheNamespacesOwnerAndReadsToTheRegion) {
  const std::string gw = StartGateway("gw-us");
  lab_->PauseReplication();
  // sales is us-east-1's: created there only.
  auto created = PostVia(gw, "/v1/lab/namespaces/sales/views",
                         NewViewRequest("gw_view", {"sales"}, "SELECT 1"));
  ASSERT_TRUE(created);
  ASSERT_EQ(created->status, 200) << created->body;
  EXPECT_EQ(created->get_header_value("X-Icewarden-Region"), kUs);
  const json view = json::parse(created->body);
  EXPECT_EQ(Status(kEu, ViewPath("sales", "gw_view")), 404) << "not sent to the replica";

  auto listed = To(gw)->Get("/v1/lab/namespaces/sales/views");
  ASSERT_TRUE(listed);
  ASSERT_EQ(listed->status, 200) << listed->body;
  EXPECT_EQ(json::parse(listed->body)["identifiers"],
            json::parse(R"([{"namespace":["sales"],"name":"gw_view"}])"));
  auto loaded = To(gw)->Get(ViewPath("sales", "gw_view"));
  ASSERT_TRUE(loaded);
  ASSERT_EQ(loaded->status, 200) << loaded->body;
  EXPECT_EQ(json::parse(loaded->body)["metadata-location"], view["metadata-location"]);

  json replace = {
      {"requirements", {{{"type", "assert-view-uuid"}, {"uuid", view["metadata"]["view-uuid"]}}}},
      {"updates", {{{"action", "set-properties"}, {"updates", {{"via", "gateway"}}}}}}};
  auto replaced = PostVia(gw, ViewPath("sales", "gw_view"), replace);
  ASSERT_TRUE(replaced);
  ASSERT_EQ(replaced->status, 200) << replaced->body;
  EXPECT_EQ(replaced->get_header_value("X-Icewarden-Region"), kUs);
  EXPECT_EQ(json::parse(replaced->body)["metadata"]["properties"]["via"], "gateway");

  auto renamed = PostVia(gw, "/v1/lab/views/rename", Rename("sales", "gw_view", "gw_view2"));
  ASSERT_TRUE(renamed);
  ASSERT_EQ(renamed->status, 204) << renamed->body;
  EXPECT_EQ(renamed->get_header_value("X-Icewarden-Region"), kUs);

  // eu's namespace is eu-central-1's: the same gateway creates the view there.
  auto eu_view =
      PostVia(gw, "/v1/lab/namespaces/eu/views", NewViewRequest("gw_view", {"eu"}, "SELECT 2"));
  ASSERT_TRUE(eu_view);
  ASSERT_EQ(eu_view->status, 200) << eu_view->body;
  EXPECT_EQ(eu_view->get_header_value("X-Icewarden-Region"), kEu);
  EXPECT_EQ(Status(kUs, ViewPath("eu", "gw_view")), 404);

  lab_->ResumeReplication();
  EXPECT_TRUE(Eventually([&] {
    return Status(kEu, ViewPath("sales", "gw_view2")) == 200 &&
           Status(kEu, ViewPath("sales", "gw_view")) == 404 &&
           Status(kUs, ViewPath("eu", "gw_view")) == 200;
  }));
  auto dropped = To(gw)->Delete(ViewPath("sales", "gw_view2"));
  ASSERT_TRUE(dropped);
  ASSERT_EQ(dropped->status, 204) << dropped->body;
  EXPECT_EQ(dropped->get_header_value("X-Icewarden-Region"), kUs);
  EXPECT_TRUE(Eventually([&] { return Status(kEu, ViewPath("sales", "gw_view2")) == 404; }));
}

}  // namespace
}  // namespace icewarden::lab::testing
