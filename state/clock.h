// Clock: the one way icewarden reads time.
//
// Every timestamp written to the state store, every timeout, probe interval, cooldown and
// quiet window goes through a Clock, so tests can run a ten-minute scenario in
// milliseconds with a fake one (tests/fakes/fake_clock.h).
// Thread-safety: implementations must be safe to call from any thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

namespace icewarden {

// Milliseconds since the Unix epoch, UTC. The unit of every persisted timestamp.
using UnixMillis = std::int64_t;

class Clock {
 public:
  virtual ~Clock() = default;
  // Wall-clock time for records people read (audit, failover history).
  virtual UnixMillis Now() const = 0;
  // Monotonic time for measuring intervals; never goes backwards.
  virtual std::chrono::steady_clock::time_point Monotonic() const = 0;
};

// The real clock. Stateless; one shared instance is fine.
std::shared_ptr<Clock> SystemClock();

// "2026-11-29T08:41:07.123Z"
std::string FormatUnixMillis(UnixMillis t);

}  // namespace icewarden
