// CronSchedule: when a scheduled drill is due, from a five-field cron expression read in an
// IANA time zone ("30 2 * * 1-5" in "Europe/Berlin").
//
// Fields: minute (0-59), hour (0-23), day of month (1-31), month (1-12 or JAN-DEC), day of
// week (0-7 or SUN-SAT, 0 and 7 both Sunday); each `*`, a value, a range `a-b`, a step
// `*/n` or `a-b/n`, or a comma-separated list of these. When both day fields are
// restricted a day matches either (as Vixie cron does).
//
// Daylight saving: a local time that a spring-forward transition skips (02:30 in Berlin on
// the last Sunday of March) fires once, at the transition (03:00 local); a local time that
// a fall-back transition repeats fires once, at its first occurrence. A drill is therefore
// never skipped on the short day and never run twice on the long one.
//
// Time zones come from the OS database (/usr/share/zoneinfo) through Howard Hinnant's
// date/tz library (Debian's libhowardhinnant-date-dev, built with USE_OS_TZDB); GCC 12's
// libstdc++ has no std::chrono time-zone support.
// Thread-safety: a parsed schedule is immutable; NextFireAfter may be called from any thread.
#pragma once

#include <bitset>
#include <optional>
#include <string>
#include <string_view>

#include "state/clock.h"
#include "state/status.h"

namespace icewarden {

struct CronSchedule {
  std::string expression{};
  std::string time_zone{};
  std::bitset<60> minutes{};
  std::bitset<24> hours{};
  std::bitset<32> days_of_month{};  // 1..31
  std::bitset<13> months{};         // 1..12
  std::bitset<7> days_of_week{};    // 0 = Sunday
  bool any_day_of_month = true;     // the field was "*"
  bool any_day_of_week = true;
};

// kInvalidArgument saying which field is wrong and why, or that the time zone is unknown.
Result<CronSchedule> ParseCronSchedule(std::string_view expression, std::string_view time_zone);

// Whether `time_zone` names a zone of the OS database.
bool IsKnownTimeZone(std::string_view time_zone);

// The first instant strictly after `after` at which the schedule fires; nullopt when it
// never does within eight years (e.g. "0 0 30 2 *").
std::optional<UnixMillis> NextFireAfter(const CronSchedule& schedule, UnixMillis after);

}  // namespace icewarden
