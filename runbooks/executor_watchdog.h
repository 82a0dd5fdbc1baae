// DeadlineWatchdog: cancels running steps whose deadline has passed.
//
// One thread serves every step an executor runs, so arming a deadline costs a lock and a
// notify rather than a thread per step. Deadlines are std::chrono::steady_clock time points
// because that is what ActionContext::deadline and ActionContext::expired() use.
//
// Thread-safety: Arm and Disarm may be called from any thread.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <mutex>
#include <thread>

#include "actions/action.h"

namespace icewarden {

class DeadlineWatchdog {
 public:
  DeadlineWatchdog();
  ~DeadlineWatchdog();  // stops the thread; cancels nothing still armed
  DeadlineWatchdog(const DeadlineWatchdog&) = delete;
  DeadlineWatchdog& operator=(const DeadlineWatchdog&) = delete;

  // Cancels `cancel` at `deadline` unless disarmed first. `cancel` must outlive the arming.
  // Returns a token for Disarm.
  std::uint64_t Arm(std::chrono::steady_clock::time_point deadline, Cancellation* cancel);
  // After Disarm returns, the watchdog no longer touches the Cancellation of `token`.
  void Disarm(std::uint64_t token);

 private:
  void Loop();

  struct Armed {
    std::chrono::steady_clock::time_point deadline;
    Cancellation* cancel;
  };
  std::mutex mu_;
  std::condition_variable cv_;
  std::map<std::uint64_t, Armed> armed_;
  std::uint64_t next_token_ = 1;
  bool stopping_ = false;
  // What the thread is sleeping until; Arm wakes it only for an earlier deadline.
  std::chrono::steady_clock::time_point waiting_until_ =
      std::chrono::steady_clock::time_point::min();
  std::thread thread_;
};

}  // namespace icewarden
