// The store timer contract for both backends (store_contract_fixture.h, issue 30): a timer runs
// on the store's clock (SQLite: the host's, here the fake clock; etcd: a lease etcd counts
// down), is listed by prefix while it runs, starts again when started again, survives a
// restart, and is gone once it has run out. A read-only store lists timers and starts none.
#include <thread>

#include "tests/etcd/store_contract_fixture.h"

namespace icewarden::testing {
namespace {

using namespace std::chrono_literals;

std::vector<std::string> Names(const std::vector<StoreTimer>& timers) {
  std::vector<std::string> out;
  for (const StoreTimer& t : timers) out.push_back(t.name);
  return out;
}

TEST_P(StoreContractTest, TimersRunOnTheStoresClockAndAreListedByPrefixUntilTheyRunOut) {
  ASSERT_TRUE(store_->StartTimer("cooldown/fo-1", 60s).ok());
  ASSERT_TRUE(store_->StartTimer("cooldown/fo-2", 60s).ok());
  ASSERT_TRUE(store_->StartTimer("approval/fo-1/abe@1", 60s).ok());
  auto listed = store_->ListTimers("cooldown/");
  ASSERT_TRUE(listed.ok()) << listed.status().ToString();
  EXPECT_EQ(Names(*listed), (std::vector<std::string>{"cooldown/fo-1", "cooldown/fo-2"}));
  for (const StoreTimer& t : *listed) {
    EXPECT_EQ(t.ttl, 60s) << t.name;
    EXPECT_GE(t.elapsed.count(), 0) << t.name;
    EXPECT_LT(t.elapsed, t.ttl) << t.name;
  }
  EXPECT_EQ(Names(*store_->ListTimers("approval/fo-1/")),
            std::vector<std::string>{"approval/fo-1/abe@1"});
  EXPECT_TRUE(store_->ListTimers("approval/fo-2/")->empty());

  if (!etcd()) {  // the fake clock moves SQLite's; etcd's runs on its own
    clock_->Advance(30s);
    EXPECT_EQ((*store_->ListTimers("cooldown/fo-1"))[0].elapsed, 30s);
    ASSERT_TRUE(store_->StartTimer("cooldown/fo-1", 60s).ok());
    EXPECT_EQ((*store_->ListTimers("cooldown/fo-1"))[0].elapsed, 0s) << "started again";
  }

  Reopen();
  EXPECT_EQ(store_->ListTimers("cooldown/")->size(), 2u) << "timers survive a restart";

  ASSERT_TRUE(store_->StartTimer("cooldown/short", 1s).ok());
  if (!etcd()) clock_->Advance(1s);
  // etcd expires the lease on its own clock: wait for it (bounded), no timing asserted.
  std::vector<std::string> names;
  for (int i = 0; i < 100; ++i) {
    names = Names(*store_->ListTimers("cooldown/short"));
    if (names.empty()) break;
    std::this_thread::sleep_for(100ms);
  }
  EXPECT_TRUE(names.empty()) << "a timer that ran out is not listed";
}

TEST_P(StoreContractTest, ATimerNeedsANameAndATtlAndAReadOnlyStoreStartsNone) {
  EXPECT_EQ(store_->StartTimer("", 1s).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(store_->StartTimer("cooldown/x", 0s).code(), StatusCode::kInvalidArgument);
  ASSERT_TRUE(store_->StartTimer("cooldown/x", 60s).ok());
  auto ro = Open(/*read_only=*/true);
  ASSERT_TRUE(ro.ok()) << ro.status().ToString();
  EXPECT_EQ((*ro)->ListTimers("cooldown/")->size(), 1u);
  EXPECT_EQ((*ro)->StartTimer("cooldown/y", 60s).code(), StatusCode::kFailedPrecondition);
}

}  // namespace
}  // namespace icewarden::testing
