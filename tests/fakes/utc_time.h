// Unix milliseconds of a UTC wall time, for tests that write instants as dates (cron schedules,
// the drill scheduler's daylight-saving days).
// Thread-safety: a plain function.
#pragma once

#include <date/date.h>

#include <chrono>

#include "state/clock.h"

namespace icewarden::testing {

inline UnixMillis Utc(int y, unsigned m, unsigned d, int h, int min) {
  using namespace std::chrono;
  const date::sys_days day = date::year(y) / date::month(m) / date::day(d);
  return duration_cast<milliseconds>((day + hours(h) + minutes(min)).time_since_epoch()).count();
}

}  // namespace icewarden::testing
