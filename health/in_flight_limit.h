// InFlightLimit: at most `max` asynchronous operations at once; the others wait, first in,
// first out. A job is handed a `release` that it calls exactly once, when its operation has
// completed (successfully or not); that frees the slot for the next waiting job, which may
// then start from inside `release`. Calling `release` a second time does nothing.
//
// Used by LagMonitor so that one round never has more than `max` catalog requests
// outstanding, however many tables and namespaces the catalogs hold.
// Thread-safety: none; one thread, the transport's executor, like the clients it throttles.
// The limit must outlive every job it has started (its owner keeps it alive until the last
// release).
#pragma once

#include <deque>
#include <functional>
#include <memory>
#include <utility>

namespace icewarden {

class InFlightLimit {
 public:
  using Job = std::function<void(std::function<void()> release)>;

  explicit InFlightLimit(int max) : max_(max < 1 ? 1 : max) {}
  InFlightLimit(const InFlightLimit&) = delete;
  InFlightLimit& operator=(const InFlightLimit&) = delete;

  // Starts `job` now if a slot is free, else when one is released.
  void Run(Job job) {
    waiting_.push_back(std::move(job));
    StartWaiting();
  }

  int in_flight() const { return in_flight_; }
  int peak() const { return peak_; }  // the most ever in flight at once
  size_t waiting() const { return waiting_.size(); }

 private:
  void StartWaiting() {
    while (in_flight_ < max_ && !waiting_.empty()) {
      Job job = std::move(waiting_.front());
      waiting_.pop_front();
      ++in_flight_;
      if (in_flight_ > peak_) peak_ = in_flight_;
      auto released = std::make_shared<bool>(false);
      job([this, released] {
        if (*released) return;
        *released = true;
        --in_flight_;
        StartWaiting();
      });
    }
  }

  int max_;
  int in_flight_ = 0;
  int peak_ = 0;
  std::deque<Job> waiting_;
};

}  // namespace icewarden
