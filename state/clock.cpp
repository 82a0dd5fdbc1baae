#include "state/clock.h"

#include <cstdio>
#include <ctime>
#include <string>

namespace icewarden {
namespace {

class RealClock final : public Clock {
 public:
  UnixMillis Now() const override {
    return std::chrono::duration_cast<std::chrono::milliseconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
  }
  std::chrono::steady_clock::time_point Monotonic() const override {
    return std::chrono::steady_clock::now();
  }
};

}  // namespace

std::shared_ptr<Clock> SystemClock() {
  static const auto clock = std::make_shared<RealClock>();
  return clock;
}

std::string FormatUnixMillis(UnixMillis t) {
  std::time_t secs = static_cast<std::time_t>(t / 1000);
  int millis = static_cast<int>(t % 1000);
  if (millis < 0) {
    millis += 1000;
    --secs;
  }
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[80];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900,
                tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, millis);
  return buf;
}

}  // namespace icewarden
