// FakeTimers: Timers (health/probe.h) on a clock that moves only when the test says so.
// Advance(d) runs every timer that falls due within d, in due order (ties in the order they
// were armed), moving Now() to each one's due time before running it; timers armed while
// advancing run in the same call if they fall due in time. Posted functions run at the
// start of Advance() and in RunPosted(). When given a FakeClock, it moves in lockstep.
// Thread-safety: Post may be called from any thread; everything else from the test thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <utility>

#include "health/probe.h"
#include "tests/fakes/fake_clock.h"

namespace icewarden::testing {

class FakeTimers final : public Timers {
 public:
  explicit FakeTimers(FakeClock* clock = nullptr) : clock_(clock) {}

  std::chrono::steady_clock::time_point Now() const override { return now_; }
  TimerHandle RunAfter(std::chrono::milliseconds delay, std::function<void()> fn) override;
  void Post(std::function<void()> fn) override;

  void Advance(std::chrono::milliseconds d);
  // Runs posted functions (and any they post) until none is left; returns how many ran.
  int RunPosted();

  // Timers armed and not yet run or cancelled.
  size_t pending() const { return timers_.size(); }
  // Delay until the earliest pending timer, or -1ms when none.
  std::chrono::milliseconds NextDue() const;
  // Every delay RunAfter was asked for, in order.
  const std::vector<std::chrono::milliseconds>& requested() const { return requested_; }

 private:
  void MoveTo(std::chrono::steady_clock::time_point t);

  FakeClock* clock_;
  std::chrono::steady_clock::time_point now_{std::chrono::hours(1)};
  std::uint64_t next_id_ = 0;
  // (due, id) -> fn: ordered by due time, then by arming order.
  std::map<std::pair<std::chrono::steady_clock::time_point, std::uint64_t>, std::function<void()>>
      timers_;
  std::vector<std::chrono::milliseconds> requested_;
  std::mutex posted_mu_;
  std::deque<std::function<void()>> posted_;
};

}  // namespace icewarden::testing
