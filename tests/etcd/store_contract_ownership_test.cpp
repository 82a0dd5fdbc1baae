// The ownership contract for both backends (store_contract_fixture.h): compare-and-set on the
// epoch, whole-batch atomicity, duplicates, paging in (namespace, name) order, counts, and
// concurrent writers that never lose an update.
#include <atomic>
#include <thread>

#include "tests/etcd/store_contract_fixture.h"

namespace icewarden::testing {
namespace {

TEST_P(StoreContractTest, CasClaimsAtEpochOneThenBumps) {
  std::vector<OwnershipChange> claim{Change("sales.eu.orders", 0, "us-east-1")};
  ASSERT_TRUE(store_->CompareAndSetOwnership(claim, Why("ownership.set", "x")).ok());
  Ownership o = MustGet("sales.eu.orders");
  EXPECT_EQ(o.owner, "us-east-1");
  EXPECT_EQ(o.epoch, 1);
  EXPECT_EQ(o.updated_at, clock_->Now());
  EXPECT_EQ(o.failover_id, "");
  EXPECT_EQ(o.table, T("sales.eu.orders"));

  clock_->Advance(std::chrono::seconds(5));
  std::vector<OwnershipChange> move{Change("sales.eu.orders", 1, "eu-west-1", "fo-1")};
  ASSERT_TRUE(store_->CompareAndSetOwnership(move, Why("ownership.set", "x")).ok());
  o = MustGet("sales.eu.orders");
  EXPECT_EQ(o.owner, "eu-west-1");
  EXPECT_EQ(o.epoch, 2);
  EXPECT_EQ(o.updated_at, clock_->Now());
  EXPECT_EQ(o.failover_id, "fo-1");
}

TEST_P(StoreContractTest, CasConflictLeavesWholeBatchUnapplied) {
  std::vector<OwnershipChange> claim{Change("s.t1", 0, "a"), Change("s.t2", 0, "a"),
                                     Change("s.t3", 0, "a")};
  ASSERT_TRUE(store_->CompareAndSetOwnership(claim, Why("ownership.set", "s")).ok());
  const std::size_t audit_before = AllAudit().size();

  // t1 matches and comes first, so it is written before t2 fails: only a rollback of the
  // whole batch leaves it at epoch 1.
  std::vector<OwnershipChange> batch{Change("s.t1", 1, "b"), Change("s.t2", 5, "b"),
                                     Change("s.t3", 1, "b")};
  Status s = store_->CompareAndSetOwnership(batch, Why("ownership.set", "s"));
  EXPECT_EQ(s.code(), StatusCode::kConflict) << s.ToString();
  EXPECT_NE(s.message().find("s.t2"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("epoch 1"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("owned by a"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("expected epoch 5"), std::string::npos) << s.message();
  for (const char* t : {"s.t1", "s.t2", "s.t3"}) {
    Ownership o = MustGet(t);
    EXPECT_EQ(o.epoch, 1) << t;
    EXPECT_EQ(o.owner, "a") << t;
  }
  EXPECT_EQ(AllAudit().size(), audit_before) << "a refused batch must not be audited";

  // Claiming a table that already has an owner is a conflict too, as is moving one that has
  // none; and a new table in a failing batch is not created.
  std::vector<OwnershipChange> reclaim{Change("s.new", 0, "b"), Change("s.t3", 0, "b")};
  EXPECT_EQ(store_->CompareAndSetOwnership(reclaim, Why("ownership.set", "s")).code(),
            StatusCode::kConflict);
  Result<std::optional<Ownership>> fresh = store_->GetOwnership(T("s.new"));
  ASSERT_TRUE(fresh.ok());
  EXPECT_FALSE(fresh->has_value());
  std::vector<OwnershipChange> ghost{Change("s.ghost", 3, "b")};
  Status g = store_->CompareAndSetOwnership(ghost, Why("ownership.set", "s"));
  EXPECT_EQ(g.code(), StatusCode::kConflict);
  EXPECT_NE(g.message().find("no owner"), std::string::npos) << g.message();
}

TEST_P(StoreContractTest, DuplicateTableInBatchIsInvalid) {
  std::vector<OwnershipChange> batch{Change("s.t1", 0, "a"), Change("s.t2", 0, "a"),
                                     Change("s.t1", 0, "b")};
  Status s = store_->CompareAndSetOwnership(batch, Why("ownership.set", "s"));
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s.ToString();
  EXPECT_NE(s.message().find("s.t1"), std::string::npos);
  Result<std::vector<Ownership>> all = store_->ListOwnership(AllOwnership());
  ASSERT_TRUE(all.ok());
  EXPECT_TRUE(all->empty());
  EXPECT_TRUE(AllAudit().empty());
}

TEST_P(StoreContractTest, SameNameInDifferentNamespacesIsNotADuplicate) {
  std::vector<OwnershipChange> batch{Change("a.b.t", 0, "x"), Change("a.bt", 0, "x"),
                                     Change("a.b.t2", 0, "x")};
  ASSERT_TRUE(store_->CompareAndSetOwnership(batch, Why("ownership.set", "a")).ok());
  EXPECT_EQ(MustGet("a.bt").epoch, 1);
}

TEST_P(StoreContractTest, OwnershipPagesInNamespaceNameOrder) {
  std::vector<OwnershipChange> claim;
  for (const char* ns : {"sales.eu", "sales", "hr", "sales.us"}) {
    for (int i = 9; i >= 0; --i) {
      std::string table = std::string(ns) + ".t" + std::to_string(i);
      claim.push_back(Change(table, 0, i % 3 == 0 ? "east" : "west"));
    }
  }
  ASSERT_TRUE(store_->CompareAndSetOwnership(claim, Why("ownership.set", "*")).ok());

  Result<std::vector<Ownership>> all = store_->ListOwnership(AllOwnership());
  ASSERT_TRUE(all.ok());
  ASSERT_EQ(all->size(), 40u);
  for (std::size_t i = 1; i < all->size(); ++i) {
    const TableIdent& a = (*all)[i - 1].table;
    const TableIdent& b = (*all)[i].table;
    EXPECT_LT(std::make_pair(a.NamespaceKey(), a.name), std::make_pair(b.NamespaceKey(), b.name));
  }
  EXPECT_EQ((*all)[0].table, T("hr.t0"));

  std::vector<Ownership> paged;
  OwnershipQuery q;
  q.limit = 7;
  for (;;) {
    Result<std::vector<Ownership>> page = store_->ListOwnership(q);
    ASSERT_TRUE(page.ok());
    ASSERT_LE(page->size(), 7u);
    if (page->empty()) break;
    paged.insert(paged.end(), page->begin(), page->end());
    q.after = page->back().table;
  }
  ASSERT_EQ(paged.size(), all->size());
  for (std::size_t i = 0; i < paged.size(); ++i) EXPECT_EQ(paged[i].table, (*all)[i].table);

  OwnershipQuery east_query;
  east_query.owner = "east";
  east_query.after = T("sales.t3");
  east_query.limit = 0;
  Result<std::vector<Ownership>> east = store_->ListOwnership(east_query);
  ASSERT_TRUE(east.ok());
  std::vector<std::string> names;
  for (const Ownership& o : *east) names.push_back(o.table.ToString());
  EXPECT_EQ(names, (std::vector<std::string>{"sales.t6", "sales.t9", "sales.eu.t0", "sales.eu.t3",
                                             "sales.eu.t6", "sales.eu.t9", "sales.us.t0",
                                             "sales.us.t3", "sales.us.t6", "sales.us.t9"}));

  Result<std::vector<std::pair<std::string, std::int64_t>>> counts =
      store_->CountOwnershipByOwner();
  ASSERT_TRUE(counts.ok());
  EXPECT_EQ(*counts,
            (std::vector<std::pair<std::string, std::int64_t>>{{"east", 16}, {"west", 24}}));
}

TEST_P(StoreContractTest, ConcurrentCompareAndSetNeverLosesAnUpdate) {
  std::vector<OwnershipChange> claim{Change("s.hot", 0, "r0")};
  ASSERT_TRUE(store_->CompareAndSetOwnership(claim, Why("ownership.set", "s.hot")).ok());
  std::atomic<int> wins{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 25; ++i) {
        Result<std::optional<Ownership>> cur = store_->GetOwnership(T("s.hot"));
        if (!cur.ok() || !cur->has_value()) continue;
        std::vector<OwnershipChange> move{Change("s.hot", (*cur)->epoch, "r" + std::to_string(t))};
        if (store_->CompareAndSetOwnership(move, Why("ownership.set", "s.hot")).ok()) ++wins;
      }
    });
  }
  for (std::thread& th : threads) th.join();
  EXPECT_GT(wins.load(), 0);
  EXPECT_EQ(MustGet("s.hot").epoch, 1 + wins.load());
  EXPECT_EQ(AllAudit().size(), static_cast<std::size_t>(1 + wins.load()));
}

}  // namespace
}  // namespace icewarden::testing
