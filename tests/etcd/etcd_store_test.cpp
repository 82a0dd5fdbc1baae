// What only the etcd store promises beyond the StateStore contract: a write carries the leader's
// fence, so a deposed leader's write fails in etcd itself; a batch over the cluster's txn limit
// is refused before anything is sent; a value it cannot read names its key.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "actions/action.h"
#include "actions/catalog_checks.h"
#include "state/etcd_leader.h"
#include "state/etcd_store.h"
#include "tests/etcd/etcd_member.h"
#include "tests/fakes/fake_clock.h"
#include "tests/fakes/store_builders.h"

namespace icewarden::testing {
namespace {

class EtcdStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(member_.WaitReady());
    client_ = std::make_shared<EtcdClient>(EtcdClientOptions{{member_.url()}});
  }
  std::unique_ptr<StateStore> Open(EtcdStoreOptions o) {
    auto s = OpenEtcdStore(client_, std::move(o), clock_);
    EXPECT_TRUE(s.ok()) << s.status().ToString();
    return s.ok() ? std::move(s).value() : nullptr;
  }

  EtcdMember member_;
  std::shared_ptr<EtcdClient> client_;
  std::shared_ptr<FakeClock> clock_ = std::make_shared<FakeClock>();
};

TEST_F(EtcdStoreTest, ADeposedLeadersWritesChangeNothing) {
  EtcdLeaderKey a(*client_, "/icewarden/leader", "replica-a", std::chrono::seconds(5));
  EtcdLeaderKey b(*client_, "/icewarden/leader", "replica-b", std::chrono::seconds(5));
  ASSERT_TRUE(a.TryAcquire().ok() && a.term().has_value());
  EtcdStoreOptions as_a;
  as_a.fence = [&a] { return std::optional<EtcdCompare>(a.StillMine()); };
  std::unique_ptr<StateStore> store_a = Open(as_a);
  ASSERT_NE(store_a, nullptr);
  std::vector<OwnershipChange> claim{Change("s.t", 0, "east")};
  ASSERT_TRUE(store_a->CompareAndSetOwnership(claim, Why("ownership.set", "s.t")).ok());

  // A loses the key (its lease ended) and B takes it; A does not know yet.
  const std::int64_t old_lease = a.term()->lease;
  ASSERT_TRUE(client_->LeaseRevoke(old_lease).ok());
  auto won = b.TryAcquire();
  ASSERT_TRUE(won.ok() && won->has_value());

  std::vector<OwnershipChange> move{Change("s.t", 1, "west")};
  Status s = store_a->CompareAndSetOwnership(move, Why("ownership.set", "s.t"));
  EXPECT_EQ(s.code(), StatusCode::kFailedPrecondition) << s.ToString();
  EXPECT_NE(s.message().find("leader key"), std::string::npos) << s.message();
  EXPECT_EQ(store_a->AppendAudit(Why("note", "x")).code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(store_a->CreateFailover(SampleFailover("fo-1"), Why("p", "fo-1")).code(),
            StatusCode::kFailedPrecondition);

  EtcdStoreOptions as_b;
  as_b.fence = [&b] { return std::optional<EtcdCompare>(b.StillMine()); };
  std::unique_ptr<StateStore> store_b = Open(as_b);
  ASSERT_NE(store_b, nullptr);
  auto row = store_b->GetOwnership(T("s.t"));
  ASSERT_TRUE(row.ok() && row->has_value());
  EXPECT_EQ((*row)->owner, "east");
  EXPECT_EQ((*row)->epoch, 1);
  auto audit = store_b->ListAudit(AuditQueryAll());
  ASSERT_TRUE(audit.ok());
  EXPECT_EQ(audit->size(), 1u) << "only the claim made while A led";
  auto none = store_b->GetFailover("fo-1");
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->has_value());
  EXPECT_TRUE(store_b->CompareAndSetOwnership(move, Why("ownership.set", "s.t")).ok());
}

TEST_F(EtcdStoreTest, ABatchOverTheTxnLimitIsRefusedBeforeAnythingIsSent) {
  EtcdStoreOptions small;
  small.max_txn_ops = 16;
  std::unique_ptr<StateStore> store = Open(small);
  ASSERT_NE(store, nullptr);
  std::vector<OwnershipChange> batch;
  for (int i = 0; i < 15; ++i) batch.push_back(Change("s.t" + std::to_string(i), 0, "east"));
  Status s = store->CompareAndSetOwnership(batch, Why("ownership.set", "s"));
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s.ToString();
  EXPECT_NE(s.message().find("max_txn_ops"), std::string::npos) << s.message();
  auto rows = store->ListOwnership(AllOwnership());
  ASSERT_TRUE(rows.ok());
  EXPECT_TRUE(rows->empty());
  batch.resize(14);  // 14 rows + the audit event and its counter
  EXPECT_TRUE(store->CompareAndSetOwnership(batch, Why("ownership.set", "s")).ok());
}

// ownership.transfer's default batch (500) is over etcd's default txn limit: the transfer sizes
// its batches by the store, so a failover on etcd moves every table, in more transactions.
TEST_F(EtcdStoreTest, OwnershipTransferSizesItsBatchesByTheStoresLimit) {
  EtcdStoreOptions small;
  small.max_txn_ops = 16;
  std::unique_ptr<StateStore> store = Open(small);
  ASSERT_NE(store, nullptr);
  std::vector<OwnershipChange> claim;
  for (int i = 0; i < 40; ++i) claim.push_back(Change("eu.t" + std::to_string(i), 0, "eu"));
  for (std::size_t i = 0; i < claim.size(); i += 10) {
    std::span<const OwnershipChange> part(claim.data() + i, 10);
    ASSERT_TRUE(store->CompareAndSetOwnership(part, Why("ownership.set", "eu")).ok());
  }
  ActionEnv env;
  env.clock = clock_;
  env.store = store.get();
  ActionContext ctx;
  ctx.failover_id = "fo-1";
  ctx.step_id = "move";
  ctx.from = "eu";
  ctx.to = "us";
  ctx.scope = "namespace:eu";
  ctx.deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  auto result = MakeOwnershipTransferAction(env)->Run(
      nlohmann::json{{"write_catalog_properties", false}}, ctx);
  ASSERT_TRUE(result.ok()) << result.reason;
  auto detail = nlohmann::json::parse(result.detail_json);
  EXPECT_EQ(detail["moved"], 40);
  EXPECT_EQ(detail["batches"], 3) << "14 rows per txn: 14 + 14 + 12";
  auto counts = store->CountOwnershipByOwner();
  ASSERT_TRUE(counts.ok());
  EXPECT_EQ(*counts, (std::vector<std::pair<std::string, std::int64_t>>{{"us", 40}}));
}

TEST_F(EtcdStoreTest, AValueItCannotReadNamesItsKey) {
  std::unique_ptr<StateStore> store = Open(EtcdStoreOptions{});
  ASSERT_NE(store, nullptr);
  ASSERT_TRUE(client_->Put("/icewarden/regions/east", "{\"health\":\"sideways\"}").ok());
  auto r = store->GetRegion("east");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInternal);
  EXPECT_NE(r.status().message().find("/icewarden/regions/east"), std::string::npos)
      << r.status().message();
  EXPECT_NE(r.status().message().find("sideways"), std::string::npos) << r.status().message();
}

TEST_F(EtcdStoreTest, OpeningRefusesWhatCannotWork) {
  EtcdStoreOptions no_slash;
  no_slash.prefix = "/icewarden";
  auto a = OpenEtcdStore(client_, no_slash, clock_);
  EXPECT_EQ(a.status().code(), StatusCode::kInvalidArgument);
  auto unreachable = std::make_shared<EtcdClient>(EtcdClientOptions{
      {"http://127.0.0.1:" + std::to_string(FreePort())}, std::chrono::milliseconds(300)});
  auto b = OpenEtcdStore(unreachable, EtcdStoreOptions{}, clock_);
  EXPECT_EQ(b.status().code(), StatusCode::kUnavailable) << b.status().ToString();
}

}  // namespace
}  // namespace icewarden::testing
