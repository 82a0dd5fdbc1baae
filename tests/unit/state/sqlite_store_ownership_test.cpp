// The SQLite schema's own guard of ownership: one owner per table and epochs that never go
// down, even against raw SQL. The compare-and-set contract is tested for both backends in
// tests/etcd/store_contract_ownership_test.cpp.
#include <atomic>
#include <thread>

#include "tests/unit/state/sqlite_store_fixture.h"

namespace icewarden::testing {
namespace {

TEST_F(SqliteStoreTest, EpochsNeverDecreaseEvenThroughRawSql) {
  std::vector<OwnershipChange> claim{Change("sales.orders", 0, "a")};
  ASSERT_TRUE(store_->CompareAndSetOwnership(claim, Why("ownership.set", "x")).ok());
  std::vector<OwnershipChange> move{Change("sales.orders", 1, "b")};
  ASSERT_TRUE(store_->CompareAndSetOwnership(move, Why("ownership.set", "x")).ok());
  store_.reset();

  std::string error;
  EXPECT_NE(RawExec(path_, "UPDATE ownership SET epoch = epoch - 1", &error), SQLITE_OK);
  EXPECT_NE(error.find("epoch must increase"), std::string::npos) << error;
  EXPECT_NE(RawExec(path_, "UPDATE ownership SET owner = 'c'"), SQLITE_OK)
      << "changing the owner without bumping the epoch must be refused";
  EXPECT_NE(RawExec(path_, "DELETE FROM ownership"), SQLITE_OK)
      << "deleting would let the table be claimed again at epoch 1";
  // The triggers refuse exactly the bad updates, not every update.
  EXPECT_EQ(RawExec(path_, "UPDATE ownership SET epoch = epoch + 1, owner = 'c'"), SQLITE_OK);

  Reopen();
  Ownership o = MustGet("sales.orders");
  EXPECT_EQ(o.epoch, 3);
  EXPECT_EQ(o.owner, "c");
}

TEST_F(SqliteStoreTest, SecondOwnerRowIsImpossible) {
  std::vector<OwnershipChange> claim{Change("sales.orders", 0, "a")};
  ASSERT_TRUE(store_->CompareAndSetOwnership(claim, Why("ownership.set", "x")).ok());
  store_.reset();
  EXPECT_NE(RawExec(path_,
                    "INSERT INTO ownership (namespace_key, name, owner, epoch, updated_at,"
                    " failover_id) VALUES ('sales', 'orders', 'b', 7, 0, '')"),
            SQLITE_OK);
  EXPECT_NE(RawExec(path_,
                    "INSERT INTO ownership (namespace_key, name, owner, epoch, updated_at,"
                    " failover_id) VALUES ('sales', 'other', 'b', 0, 0, '')"),
            SQLITE_OK)
      << "epoch 0 is not a recorded ownership";
  EXPECT_EQ(RawQueryText(path_, "SELECT COUNT(*) FROM ownership"), "1");
  EXPECT_EQ(RawQueryText(path_, "PRAGMA journal_mode"), "wal");
}

}  // namespace
}  // namespace icewarden::testing
