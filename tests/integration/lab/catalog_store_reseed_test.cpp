// CatalogStore::ReseedReplica, what a rewind does to a diverged replica's store: the table's
// metadata files become the owner's, as a region lacking the table receives them, and its own
// divergent files are forgotten (were the replica to own the table later, a region still at one
// of them must count as diverged from it). The pointer moves compare-and-swap, like a commit.
#include <gtest/gtest.h>

#include <filesystem>
#include <limits>
#include <string>
#include <vector>

#include "examples/lab/catalog_store.h"
#include "tests/fakes/test_paths.h"

namespace icewarden::lab {
namespace {

using nlohmann::json;

constexpr int64_t kEverything = std::numeric_limits<int64_t>::max();

// The metadata of a table whose one snapshot is `snapshot_id`: enough for the store, which reads
// only the properties and the current snapshot.
json Metadata(int64_t snapshot_id) {
  return {{"format-version", 2},
          {"table-uuid", "5b1f6a2e-8d3c-4f0b-9a7e-2c4d6e8f0a1b"},
          {"current-snapshot-id", snapshot_id},
          {"snapshots", {{{"snapshot-id", snapshot_id}}}},
          {"properties", json::object()}};
}

class LabCatalogStoreReseed : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = icewarden::testing::MakeTempDir("icewarden-lab-reseed");
    LabStatus status = LabStatus::Ok();
    owner_ = CatalogStore::Open(dir_ + "/owner.db", &status);
    ASSERT_TRUE(owner_) << status.message();
    replica_ = CatalogStore::Open(dir_ + "/replica.db", &status);
    ASSERT_TRUE(replica_) << status.message();
    ASSERT_EQ(owner_->CreateNamespace({"sales"}, json::object()), StoreOutcome::kOk);
    ASSERT_EQ(owner_->CreateTable(table_, "m/00000", Metadata(1), 1000), StoreOutcome::kOk);
    ASSERT_EQ(Swap(*owner_, "m/00000", "m/00001", 2), StoreOutcome::kOk);
    ASSERT_EQ(Replicate(), StoreOutcome::kOk);
    // The replica diverges (a rogue commit), and the owner moves on.
    ASSERT_EQ(Swap(*replica_, "m/00001", "m/00002-rogue", 3), StoreOutcome::kOk);
    ASSERT_EQ(Swap(*owner_, "m/00001", "m/00002", 4), StoreOutcome::kOk);
    ASSERT_EQ(owner_->PlanReplication(table_, "m/00002-rogue", kEverything).kind,
              ReplicationPlan::Kind::kDiverged);
  }

  void TearDown() override {
    owner_.reset();
    replica_.reset();
    std::filesystem::remove_all(dir_);
  }

  StoreOutcome Swap(CatalogStore& store, const std::string& from, const std::string& to,
                    int64_t snapshot_id) {
    json metadata = Metadata(snapshot_id);
    return store.SwapTable(table_, from, to, metadata, metadata.dump(), snapshot_id * 1000);
  }

  StoreOutcome Replicate() {
    std::string location = replica_->CurrentLocation(table_).value_or("");
    return replica_->ApplyReplication(table_, location,
                                      owner_->PlanReplication(table_, location, kEverything));
  }

  static std::vector<std::string> Locations(CatalogStore& store, const TableIdent& table) {
    std::vector<std::string> locations;
    for (const auto& row : store.MetadataFiles(table)) locations.push_back(row.location);
    return locations;
  }

  std::string dir_;
  std::unique_ptr<CatalogStore> owner_, replica_;
  const TableIdent table_{{"sales"}, "orders"};
};

TEST_F(LabCatalogStoreReseed, TheReplicasHistoryBecomesTheOwners) {
  ReplicationPlan fresh = owner_->PlanReplication(table_, "", kEverything);
  ASSERT_EQ(replica_->ReseedReplica(table_, "m/00002-rogue", fresh), StoreOutcome::kOk);

  const std::vector<std::string> expected = {"m/00000", "m/00001", "m/00002"};
  EXPECT_EQ(Locations(*owner_, table_), expected);
  EXPECT_EQ(Locations(*replica_, table_), expected);
  auto loaded = replica_->LoadTable(table_);
  ASSERT_TRUE(loaded);
  EXPECT_EQ(loaded->location, "m/00002");
  EXPECT_EQ(loaded->metadata, Metadata(4));
  ASSERT_EQ(replica_->Heads().size(), 1u);
  EXPECT_EQ(replica_->Heads()[0].main_snapshot_id, 4);
  // As a region lacking the table receives it: the newest file's JSON only.
  EXPECT_EQ(replica_->MetadataFile(table_, "m/00002"), Metadata(4));
  EXPECT_FALSE(replica_->MetadataFile(table_, "m/00001").has_value());
  EXPECT_FALSE(replica_->MetadataFile(table_, "m/00002-rogue").has_value());
  // The rogue file is in no history now: not in the replica's, as an owner, either.
  EXPECT_EQ(replica_->PlanReplication(table_, "m/00002-rogue", kEverything).kind,
            ReplicationPlan::Kind::kDiverged);
  EXPECT_EQ(owner_->PlanReplication(table_, "m/00002", kEverything).kind,
            ReplicationPlan::Kind::kNothing);

  // Replication fast-forwards it from there.
  ASSERT_EQ(Swap(*owner_, "m/00002", "m/00003", 5), StoreOutcome::kOk);
  ASSERT_EQ(Replicate(), StoreOutcome::kOk);
  EXPECT_EQ(replica_->CurrentLocation(table_), "m/00003");
}

TEST_F(LabCatalogStoreReseed, IsCompareAndSwapOnTheReplicasPointer) {
  ReplicationPlan fresh = owner_->PlanReplication(table_, "", kEverything);
  EXPECT_EQ(replica_->ReseedReplica(table_, "m/00001", fresh), StoreOutcome::kConflict);
  EXPECT_EQ(replica_->CurrentLocation(table_), "m/00002-rogue");
  EXPECT_EQ(Locations(*replica_, table_),
            (std::vector<std::string>{"m/00000", "m/00001", "m/00002-rogue"}));
  EXPECT_EQ(replica_->MetadataFile(table_, "m/00002-rogue"), Metadata(3));

  EXPECT_EQ(replica_->ReseedReplica({{"sales"}, "missing"}, "m/00002-rogue", fresh),
            StoreOutcome::kNotFound);
  EXPECT_TRUE(Locations(*replica_, {{"sales"}, "missing"}).empty());
}

}  // namespace
}  // namespace icewarden::lab
