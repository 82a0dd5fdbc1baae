// EtcdLeaderKey against a real etcd member: one leader at a time, a term's writes fenced by
// its create revision (a deposed leader's conditioned write fails in etcd itself), a leader
// whose lease lapses loses the key only after the bound it was told to stop acting by, and a
// renewal notices a key that is gone.
#include "state/etcd_leader.h"

#include <gtest/gtest.h>

#include <thread>

#include "tests/etcd/etcd_member.h"

namespace icewarden {
namespace {

using namespace std::chrono_literals;
using Steady = std::chrono::steady_clock;

class EtcdLeaderTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    member_ = new testing::EtcdMember();
    ASSERT_TRUE(member_->WaitReady()) << "etcd did not start at " << member_->url();
  }
  static void TearDownTestSuite() {
    delete member_;
    member_ = nullptr;
  }
  EtcdClient Client() { return EtcdClient({{member_->url()}, 2s}); }
  static testing::EtcdMember* member_;
};
testing::EtcdMember* EtcdLeaderTest::member_ = nullptr;

// A write of `value` to `key` that lands only while `leader`'s term is current.
Result<EtcdTxnResult> FencedPut(EtcdClient& etcd, const EtcdLeaderKey& leader,
                                const std::string& key, const std::string& value) {
  return etcd.Txn({leader.StillMine()}, {{EtcdOp::Kind::kPut, key, value, "", 0}});
}

TEST_F(EtcdLeaderTest, OneLeaderAtATimeAndADeposedLeadersWritesFail) {
  EtcdClient etcd = Client();
  EtcdLeaderKey a(etcd, "/l1/leader", "replica-a", 10s);
  EtcdLeaderKey b(etcd, "/l1/leader", "replica-b", 10s);

  auto a_term = a.TryAcquire();
  ASSERT_TRUE(a_term.ok()) << a_term.status().ToString();
  ASSERT_TRUE(a_term->has_value());
  EXPECT_GT((*a_term)->revision, 0);
  EXPECT_GT((*a_term)->act_until, Steady::now());
  auto b_term = b.TryAcquire();
  ASSERT_TRUE(b_term.ok()) << b_term.status().ToString();
  EXPECT_FALSE(b_term->has_value()) << "the key is held";
  auto holder = b.Holder();
  ASSERT_TRUE(holder.ok() && holder->has_value());
  EXPECT_EQ((*holder)->value, "replica-a");

  auto again = a.TryAcquire();  // the holder asking again keeps its term
  ASSERT_TRUE(again.ok() && again->has_value()) << again.status().ToString();
  EXPECT_EQ((*again)->revision, (*a_term)->revision);

  auto write = FencedPut(etcd, a, "/l1/ownership/t", "a@1");
  ASSERT_TRUE(write.ok());
  EXPECT_TRUE(write->succeeded);

  // a's term ends; b leads. a still believes nothing (it was not told): its fenced write fails.
  EtcdLeaderKey a_stale = a;  // a paused process's view of its term
  ASSERT_TRUE(a.Resign().ok());
  auto b_now = b.TryAcquire();
  ASSERT_TRUE(b_now.ok() && b_now->has_value()) << b_now.status().ToString();
  EXPECT_GT((*b_now)->revision, (*a_term)->revision) << "terms' fencing tokens only grow";
  auto late = FencedPut(etcd, a_stale, "/l1/ownership/t", "a@stale");
  ASSERT_TRUE(late.ok()) << late.status().ToString();
  EXPECT_FALSE(late->succeeded);
  auto b_write = FencedPut(etcd, b, "/l1/ownership/t", "b@2");
  ASSERT_TRUE(b_write.ok());
  EXPECT_TRUE(b_write->succeeded);
  EXPECT_EQ(etcd.Range("/l1/ownership/t")->kvs.at(0).value, "b@2");
}

TEST_F(EtcdLeaderTest, ALapsedLeaseFreesTheKeyOnlyAfterTheLeaderWasToldToStop) {
  EtcdClient etcd = Client();
  EtcdLeaderKey a(etcd, "/l2/leader", "replica-a", 2s, 500ms);
  EtcdLeaderKey b(etcd, "/l2/leader", "replica-b", 2s, 500ms);
  auto a_term = a.TryAcquire();
  ASSERT_TRUE(a_term.ok() && a_term->has_value()) << a_term.status().ToString();
  const auto stop_by = (*a_term)->act_until;

  // a stops renewing (a paused or partitioned leader). b tries until the key is free.
  std::optional<Steady::time_point> b_leads;
  for (int i = 0; i < 100 && !b_leads; ++i) {
    auto b_term = b.TryAcquire();
    ASSERT_TRUE(b_term.ok()) << b_term.status().ToString();
    if (b_term->has_value()) b_leads = Steady::now();
    if (!b_leads) std::this_thread::sleep_for(100ms);
  }
  ASSERT_TRUE(b_leads) << "the lapsed lease never freed the key";
  EXPECT_GE(*b_leads, stop_by) << "b led while a could still have been acting";

  // a wakes up and renews: its term is over, and it is told so.
  auto renewed = a.Renew();
  ASSERT_FALSE(renewed.ok());
  EXPECT_EQ(renewed.status().code(), StatusCode::kFailedPrecondition)
      << renewed.status().ToString();
  EXPECT_FALSE(a.term().has_value());
}

TEST_F(EtcdLeaderTest, RenewingMovesTheBoundAndNoticesAKeyThatIsGone) {
  EtcdClient etcd = Client();
  EtcdLeaderKey a(etcd, "/l3/leader", "replica-a", 5s);
  auto a_term = a.TryAcquire();
  ASSERT_TRUE(a_term.ok() && a_term->has_value()) << a_term.status().ToString();
  std::this_thread::sleep_for(50ms);
  auto renewed = a.Renew();
  ASSERT_TRUE(renewed.ok()) << renewed.status().ToString();
  EXPECT_GT(renewed->act_until, (*a_term)->act_until);

  // Someone deletes the key (an operator's mistake): the lease lives, the term does not.
  ASSERT_TRUE(etcd.DeleteRange("/l3/leader").ok());
  auto lost = a.Renew();
  ASSERT_FALSE(lost.ok());
  EXPECT_EQ(lost.status().code(), StatusCode::kFailedPrecondition) << lost.status().ToString();
  EXPECT_FALSE(a.term().has_value());
}

}  // namespace
}  // namespace icewarden
