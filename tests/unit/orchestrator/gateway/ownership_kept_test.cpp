// The gateway keeps ownership rows for the snapshot they were read under, and only then: a row
// kept past a change to the store would send a write to the region the table left.
#include <gtest/gtest.h>

#include <vector>

#include "orchestrator/gateway/write_admission.h"
#include "state/sqlite_store.h"
#include "tests/fakes/fake_clock.h"
#include "tests/fakes/store_builders.h"

namespace icewarden::testing {
namespace {

const std::vector<std::string> kRegions = {"us-east-1", "eu-central-1"};

class OwnershipKeptTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto store = OpenSqliteStore({":memory:"}, clock_);
    ASSERT_TRUE(store.ok()) << store.status().message();
    store_ = std::move(store).value();
    std::vector<OwnershipChange> claim{Change("sales.orders", 0, "us-east-1")};
    ASSERT_TRUE(store_->CompareAndSetOwnership(claim, Why("ownership.set", "x")).ok());
  }

  Ownership Row() {
    auto row = admission_.OwnershipOf(*store_, T("sales.orders"));
    EXPECT_TRUE(row.ok()) << row.status().message();
    EXPECT_TRUE(row.ok() && row->has_value());
    return row.ok() && row->has_value() ? **row : Ownership{};
  }

  std::shared_ptr<FakeClock> clock_ = std::make_shared<FakeClock>();
  std::unique_ptr<StateStore> store_;
  WriteAdmission admission_{kRegions};
};

TEST_F(OwnershipKeptTest, ARowIsReadOncePerSnapshotAndAgainAfterTheStoreChanged) {
  StoreWatch watch(*store_, admission_, std::chrono::milliseconds(20));
  watch.PollOnce();
  ASSERT_TRUE(admission_.Snapshot()->revision.has_value()) << "SQLite can tell a change";

  EXPECT_EQ(Row().owner, "us-east-1");
  EXPECT_EQ(Row().owner, "us-east-1");
  EXPECT_EQ(admission_.Kept().reads, 1) << "the second answer is the kept row";
  EXPECT_EQ(admission_.Kept().hits, 1);

  std::vector<OwnershipChange> move{Change("sales.orders", 1, "eu-central-1", "fo-1")};
  ASSERT_TRUE(store_->CompareAndSetOwnership(move, Why("ownership.set", "x")).ok());
  watch.PollOnce();  // what StoreWatch's thread does every store_poll
  const Ownership now = Row();
  EXPECT_EQ(now.owner, "eu-central-1") << "the snapshot after the change dropped the kept row";
  EXPECT_EQ(now.epoch, 2);
  EXPECT_EQ(admission_.Kept().reads, 2);
}

TEST_F(OwnershipKeptTest, APollThatFindsNoChangeKeepsTheRows) {
  StoreWatch watch(*store_, admission_, std::chrono::milliseconds(20));
  watch.PollOnce();
  Row();
  const auto refreshes = admission_.Snapshot()->refreshes;
  watch.PollOnce();
  EXPECT_EQ(admission_.Snapshot()->refreshes, refreshes) << "nothing changed: nothing published";
  Row();
  EXPECT_EQ(admission_.Kept().reads, 1);
}

TEST_F(OwnershipKeptTest, ASnapshotThatCannotTellAChangeKeepsNothing) {
  StoreSnapshot snapshot;
  snapshot.readable = true;  // no revision: a store that cannot say "nothing changed"
  admission_.Publish(snapshot);
  Row();
  Row();
  EXPECT_EQ(admission_.Kept().reads, 2);
  EXPECT_EQ(admission_.Kept().size, 0u);

  StoreSnapshot unreadable;
  unreadable.revision = 7;
  unreadable.error = "etcd is down";
  admission_.Publish(unreadable);
  Row();
  Row();
  EXPECT_EQ(admission_.Kept().reads, 4) << "an unreadable store's rows are never kept";
}

TEST_F(OwnershipKeptTest, TheKeptRowsAreBounded) {
  StoreSnapshot snapshot;
  snapshot.readable = true;
  snapshot.revision = 1;
  admission_.Publish(snapshot);
  for (std::size_t i = 0; i < WriteAdmission::kKeptRows + 10; ++i) {
    auto row = admission_.OwnershipOf(*store_, T("ns.t" + std::to_string(i)));
    ASSERT_TRUE(row.ok());
    EXPECT_FALSE(row->has_value()) << "no such table: kept as unowned";
  }
  EXPECT_LE(admission_.Kept().size, WriteAdmission::kKeptRows);
  EXPECT_GT(admission_.Kept().size, 0u);
}

}  // namespace
}  // namespace icewarden::testing
