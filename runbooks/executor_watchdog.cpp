#include "runbooks/executor_watchdog.h"

namespace icewarden {

DeadlineWatchdog::DeadlineWatchdog() : thread_([this] { Loop(); }) {}

DeadlineWatchdog::~DeadlineWatchdog() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

std::uint64_t DeadlineWatchdog::Arm(std::chrono::steady_clock::time_point deadline,
                                    Cancellation* cancel) {
  std::uint64_t token;
  bool wake;
  {
    std::lock_guard lock(mu_);
    token = next_token_++;
    armed_.emplace(token, Armed{deadline, cancel});
    wake = deadline < waiting_until_;
  }
  if (wake) cv_.notify_all();
  return token;
}

void DeadlineWatchdog::Disarm(std::uint64_t token) {
  // Cancellation happens under the lock, so once the entry is gone it is never touched.
  std::lock_guard lock(mu_);
  armed_.erase(token);
}

void DeadlineWatchdog::Loop() {
  std::unique_lock lock(mu_);
  while (!stopping_) {
    const auto now = std::chrono::steady_clock::now();
    auto earliest = std::chrono::steady_clock::time_point::max();
    for (auto it = armed_.begin(); it != armed_.end();) {
      if (it->second.deadline <= now) {
        it->second.cancel->Cancel();
        it = armed_.erase(it);
      } else {
        earliest = std::min(earliest, it->second.deadline);
        ++it;
      }
    }
    waiting_until_ = earliest;
    if (earliest == std::chrono::steady_clock::time_point::max()) {
      cv_.wait(lock);
    } else {
      cv_.wait_until(lock, earliest);
    }
    waiting_until_ = std::chrono::steady_clock::time_point::min();
  }
}

}  // namespace icewarden
