// The real Timers on an io_context: order, cancellation, Post from another thread.
#include "health/asio_timers.h"

#include <utility>

#include <boost/asio/io_context.hpp>

#include <gtest/gtest.h>

#include <thread>
#include <vector>

namespace icewarden {
namespace {

using namespace std::chrono_literals;

TEST(AsioTimersTest, RunsDueTimersInOrderAndNeverACancelledOne) {
  boost::asio::io_context io;
  auto timers = MakeAsioTimers(io);
  std::vector<int> ran;
  const auto start = timers->Now();
  timers->RunAfter(30ms, [&] { ran.push_back(2); });
  TimerHandle cancelled = timers->RunAfter(10ms, [&] { ran.push_back(99); });
  timers->RunAfter(5ms, [&] { ran.push_back(1); });
  cancelled.Cancel();
  cancelled.Cancel();  // idempotent
  io.run_for(2s);
  EXPECT_EQ(ran, (std::vector<int>{1, 2}));
  EXPECT_GE(timers->Now() - start, 30ms);
}

TEST(AsioTimersTest, CancelAfterTheTimerFiredIsHarmless) {
  boost::asio::io_context io;
  auto timers = MakeAsioTimers(io);
  int ran = 0;
  TimerHandle h = timers->RunAfter(0ms, [&] { ++ran; });
  io.run_for(1s);
  h.Cancel();
  EXPECT_EQ(ran, 1);
}

TEST(AsioTimersTest, PostFromAnotherThreadRunsOnTheLoop) {
  boost::asio::io_context io;
  auto timers = MakeAsioTimers(io);
  std::thread::id ran_on;
  std::thread worker([&] { timers->Post([&] { ran_on = std::this_thread::get_id(); }); });
  worker.join();
  io.run_for(1s);
  EXPECT_EQ(ran_on, std::this_thread::get_id());
}

}  // namespace
}  // namespace icewarden
