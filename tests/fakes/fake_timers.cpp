#include "tests/fakes/fake_timers.h"

#include <memory>

namespace icewarden::testing {

TimerHandle FakeTimers::RunAfter(std::chrono::milliseconds delay, std::function<void()> fn) {
  requested_.push_back(delay);
  if (delay.count() < 0) delay = std::chrono::milliseconds(0);
  auto key = std::make_pair(now_ + delay, next_id_++);
  timers_.emplace(key, std::move(fn));
  // The handle must not outlive the FakeTimers in a way that matters: tests destroy
  // timers last. Erasing a key that already ran is a no-op.
  return TimerHandle([this, key] { timers_.erase(key); });
}

void FakeTimers::Post(std::function<void()> fn) {
  std::lock_guard lock(posted_mu_);
  posted_.push_back(std::move(fn));
}

int FakeTimers::RunPosted() {
  int ran = 0;
  for (;;) {
    std::function<void()> fn;
    {
      std::lock_guard lock(posted_mu_);
      if (posted_.empty()) return ran;
      fn = std::move(posted_.front());
      posted_.pop_front();
    }
    fn();
    ++ran;
  }
}

void FakeTimers::MoveTo(std::chrono::steady_clock::time_point t) {
  if (t <= now_) return;
  if (clock_) clock_->Advance(std::chrono::duration_cast<std::chrono::milliseconds>(t - now_));
  now_ = t;
}

void FakeTimers::Advance(std::chrono::milliseconds d) {
  RunPosted();
  const auto target = now_ + d;
  while (!timers_.empty() && timers_.begin()->first.first <= target) {
    auto node = timers_.extract(timers_.begin());
    MoveTo(node.key().first);
    node.mapped()();
    RunPosted();
  }
  MoveTo(target);
}

std::chrono::milliseconds FakeTimers::NextDue() const {
  if (timers_.empty()) return std::chrono::milliseconds(-1);
  return std::chrono::duration_cast<std::chrono::milliseconds>(timers_.begin()->first.first - now_);
}

}  // namespace icewarden::testing
