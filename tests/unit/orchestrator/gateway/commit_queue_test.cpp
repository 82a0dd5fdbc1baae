#include "orchestrator/gateway/commit_queue.h"

#include <gtest/gtest.h>

#include <atomic>
#include <mutex>
#include <thread>
#include <vector>

namespace icewarden {
namespace {

using namespace std::chrono_literals;

const TableIdent kOrders{{"sales"}, "orders"};
const TableIdent kEvents{{"clickstream"}, "events"};

// Waits until `n` writes are waiting in `queue`.
void AwaitWaiting(const CommitQueue& queue, std::size_t n) {
  for (int i = 0; i < 2000 && queue.Waiting() < n; ++i) std::this_thread::sleep_for(1ms);
  ASSERT_EQ(queue.Waiting(), n);
}

TEST(CommitQueueTest, WritesToOneTableGoOneAtATimeInArrivalOrder) {
  CommitQueue queue(16);
  CommitQueue::Refusal refusal;
  CommitQueue::Turn first = queue.Enter({kOrders}, 5s, &refusal);
  ASSERT_EQ(refusal, CommitQueue::Refusal::kNone);

  std::mutex mu;
  std::vector<int> order;
  std::vector<std::thread> writers;
  for (int i = 0; i < 5; ++i) {
    writers.emplace_back([&, i] {
      CommitQueue::Refusal r;
      CommitQueue::Turn turn = queue.Enter({kOrders}, 5s, &r);
      ASSERT_EQ(r, CommitQueue::Refusal::kNone);
      std::lock_guard lock(mu);
      order.push_back(i);
    });
    // Each arrives after the one before it is waiting.
    AwaitWaiting(queue, static_cast<std::size_t>(i + 1));
  }
  {
    std::lock_guard lock(mu);
    EXPECT_TRUE(order.empty()) << "nobody goes while the first write holds the table";
  }
  first.Release();
  for (auto& w : writers) w.join();
  EXPECT_EQ(order, (std::vector<int>{0, 1, 2, 3, 4}));
}

TEST(CommitQueueTest, AnotherTableDoesNotWait) {
  CommitQueue queue(16);
  CommitQueue::Refusal refusal;
  CommitQueue::Turn orders = queue.Enter({kOrders}, 5s, &refusal);
  CommitQueue::Turn events = queue.Enter({kEvents}, 10ms, &refusal);
  EXPECT_EQ(refusal, CommitQueue::Refusal::kNone);
}

TEST(CommitQueueTest, AFullTableRefusesTheNextWriteAndATimedOutWriteGivesItsPlaceUp) {
  CommitQueue queue(1);
  CommitQueue::Refusal refusal;
  CommitQueue::Turn holder = queue.Enter({kOrders}, 5s, &refusal);
  std::atomic<bool> second_went{false};
  std::thread second([&] {
    CommitQueue::Refusal r;
    CommitQueue::Turn t = queue.Enter({kOrders}, 5s, &r);
    EXPECT_EQ(r, CommitQueue::Refusal::kNone);
    second_went = true;
  });
  AwaitWaiting(queue, 1);
  queue.Enter({kOrders}, 5s, &refusal);
  EXPECT_EQ(refusal, CommitQueue::Refusal::kFull);
  holder.Release();
  second.join();
  EXPECT_TRUE(second_went);

  // A write that waits too long leaves, and the one after it is not stuck behind its ticket.
  CommitQueue wide(4);
  CommitQueue::Turn h = wide.Enter({kOrders}, 5s, &refusal);
  wide.Enter({kOrders}, 20ms, &refusal);
  EXPECT_EQ(refusal, CommitQueue::Refusal::kTimedOut);
  std::atomic<bool> third_went{false};
  std::thread third([&] {
    CommitQueue::Refusal r;
    CommitQueue::Turn t = wide.Enter({kOrders}, 5s, &r);
    third_went = r == CommitQueue::Refusal::kNone;
  });
  AwaitWaiting(wide, 1);
  h.Release();
  third.join();
  EXPECT_TRUE(third_went);
}

TEST(CommitQueueTest, WritesOfSeveralTablesTakeTurnsInOneOrderAndDoNotDeadlock) {
  CommitQueue queue(64);
  std::atomic<int> done{0};
  std::vector<std::thread> writers;
  for (int i = 0; i < 8; ++i) {
    writers.emplace_back([&, i] {
      for (int k = 0; k < 50; ++k) {
        CommitQueue::Refusal r;
        // Half name the tables one way round, half the other.
        auto turn = queue.Enter(
            i % 2 ? std::vector{kOrders, kEvents} : std::vector{kEvents, kOrders}, 5s, &r);
        ASSERT_EQ(r, CommitQueue::Refusal::kNone);
      }
      ++done;
    });
  }
  for (auto& w : writers) w.join();
  EXPECT_EQ(done, 8);
  EXPECT_EQ(queue.Waiting(), 0u);
}

}  // namespace
}  // namespace icewarden
