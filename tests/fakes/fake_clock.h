// FakeClock: time that moves only when a test says so.
#pragma once

#include <atomic>

#include "state/clock.h"

namespace icewarden::testing {

class FakeClock final : public Clock {
 public:
  explicit FakeClock(UnixMillis start = 1'780'000'000'000) : now_(start) {}
  UnixMillis Now() const override { return now_.load(); }
  std::chrono::steady_clock::time_point Monotonic() const override {
    return std::chrono::steady_clock::time_point(std::chrono::milliseconds(now_.load()));
  }
  void Advance(std::chrono::milliseconds d) { now_ += d.count(); }
  void Set(UnixMillis t) { now_ = t; }

 private:
  std::atomic<UnixMillis> now_;
};

}  // namespace icewarden::testing
