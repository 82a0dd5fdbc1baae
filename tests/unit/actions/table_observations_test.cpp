// TableObservations: what a failover's steps keep of the tables they read, for one another.
#include "actions/table_observations.h"

#include <gtest/gtest.h>

namespace icewarden {
namespace {

TableIdent Table(const std::string& name) { return TableIdent{{"sales"}, name}; }

TableSnapshotView View(const std::string& etag, std::int64_t snapshot) {
  TableSnapshotView v;
  v.etag = etag;
  v.metadata_location = "s3://lake/sales/t/metadata/" + std::to_string(snapshot) + ".json";
  v.current_snapshot_id = snapshot;
  v.refs["main"] = snapshot;
  v.snapshot_log.push_back({snapshot, 1000});
  v.metadata_log.push_back({"s3://lake/sales/t/metadata/0.json", 1000});
  v.properties["icewarden.epoch"] = "3";
  return v;
}

TEST(TableObservationsTest, KeepsWhatEachFailoverSawPerRegionWithoutTheLogs) {
  TableObservations seen;
  seen.Remember("fo-1", "us-east-1", Table("orders"), View("\"e1\"", 7));
  auto found = seen.Find("fo-1", "us-east-1", Table("orders"));
  ASSERT_TRUE(found);
  EXPECT_EQ(found->etag, "\"e1\"");
  EXPECT_EQ(found->refs.at("main"), 7);
  EXPECT_EQ(found->properties.at("icewarden.epoch"), "3");
  EXPECT_TRUE(found->snapshot_log.empty());
  EXPECT_TRUE(found->metadata_log.empty());
  EXPECT_FALSE(seen.Find("fo-1", "eu-central-1", Table("orders")));
  EXPECT_FALSE(seen.Find("fo-2", "us-east-1", Table("orders")));
  EXPECT_FALSE(seen.Find("fo-1", "us-east-1", Table("customers")));

  seen.Remember("fo-1", "us-east-1", Table("orders"), View("\"e2\"", 8));  // a newer answer
  EXPECT_EQ(seen.Find("fo-1", "us-east-1", Table("orders"))->etag, "\"e2\"");
  EXPECT_EQ(seen.size(), 1u);
}

TEST(TableObservationsTest, AnAnswerWithoutAnETagIsNotKept) {
  TableObservations seen;
  seen.Remember("fo-1", "us-east-1", Table("orders"), View("", 7));
  EXPECT_EQ(seen.size(), 0u);
  EXPECT_FALSE(seen.Find("fo-1", "us-east-1", Table("orders")));
}

TEST(TableObservationsTest, BoundedAndForgottenPerFailover) {
  TableObservations seen(2);
  seen.Remember("fo-1", "us-east-1", Table("a"), View("\"a\"", 1));
  seen.Remember("fo-2", "us-east-1", Table("b"), View("\"b\"", 2));
  seen.Remember("fo-2", "us-east-1", Table("c"), View("\"c\"", 3));  // no room: not kept
  EXPECT_EQ(seen.size(), 2u);
  EXPECT_FALSE(seen.Find("fo-2", "us-east-1", Table("c")));
  seen.Remember("fo-2", "us-east-1", Table("b"), View("\"b2\"", 4));  // replacing needs no room
  EXPECT_EQ(seen.Find("fo-2", "us-east-1", Table("b"))->etag, "\"b2\"");

  seen.Forget("fo-1");
  EXPECT_EQ(seen.size(), 1u);
  EXPECT_FALSE(seen.Find("fo-1", "us-east-1", Table("a")));
  seen.Remember("fo-2", "us-east-1", Table("c"), View("\"c\"", 3));  // room again
  EXPECT_TRUE(seen.Find("fo-2", "us-east-1", Table("c")));
  seen.Forget("fo-2");
  seen.Forget("fo-3");  // unknown: nothing happens
  EXPECT_EQ(seen.size(), 0u);
}

}  // namespace
}  // namespace icewarden
