#include "orchestrator/config/cron_schedule.h"

#include <date/tz.h>

#include <array>
#include <cctype>
#include <charconv>
#include <vector>

namespace icewarden {
namespace {

struct FieldSpec {
  const char* name;
  int min, max;
  std::vector<std::string_view> names;  // names[i] means min + i
};

const std::array<FieldSpec, 5> kFields{{
    {"minute", 0, 59, {}},
    {"hour", 0, 23, {}},
    {"day of month", 1, 31, {}},
    {"month",
     1,
     12,
     {"JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC"}},
    // 7 is Sunday too; folded into 0 below.
    {"day of week", 0, 7, {"SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"}},
}};

std::vector<std::string_view> Split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  std::size_t start = 0;
  for (;;) {
    std::size_t at = s.find(sep, start);
    out.push_back(
        s.substr(start, at == std::string_view::npos ? std::string_view::npos : at - start));
    if (at == std::string_view::npos) return out;
    start = at + 1;
  }
}

std::optional<int> Value(std::string_view s, const FieldSpec& f) {
  int v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec == std::errc() && p == s.data() + s.size()) return v;
  for (std::size_t i = 0; i < f.names.size(); ++i) {
    const std::string_view n = f.names[i];
    if (s.size() != n.size()) continue;
    bool same = true;
    for (std::size_t k = 0; k < n.size(); ++k)
      same = same && std::toupper(static_cast<unsigned char>(s[k])) == n[k];
    if (same) return f.min + static_cast<int>(i);
  }
  return std::nullopt;
}

// "'TEXT' TAIL", appended piece by piece: GCC 12 at -O3 misreports `"'" + std::string(x) + ...`
// as an overlapping memcpy (-Wrestrict), which -Werror makes fatal in the Release build.
std::string Quoted(std::string_view text, std::string_view tail) {
  std::string out = "'";
  out += text;
  out += "' ";
  out += tail;
  return out;
}

// Sets the field's bits; an error message when the text is not a valid field.
std::optional<std::string> ParseField(std::string_view text, const FieldSpec& f,
                                      std::vector<bool>* bits, bool* any) {
  *any = text == "*";
  for (std::string_view part : Split(text, ',')) {
    if (part.empty()) return std::string("an empty list item");
    int step = 1;
    if (auto slash = part.find('/'); slash != std::string_view::npos) {
      auto n = Value(part.substr(slash + 1), FieldSpec{f.name, 0, 0, {}});
      if (!n || *n < 1)
        return "step " + Quoted(part.substr(slash + 1), "must be a whole number of at least 1");
      step = *n;
      part = part.substr(0, slash);
    }
    int lo = f.min, hi = f.max;
    if (part != "*") {
      auto dash = part.find('-');
      auto a = Value(part.substr(0, dash), f);
      if (!a) return Quoted(part.substr(0, dash), "is not a value");
      lo = hi = *a;
      if (dash != std::string_view::npos) {
        auto b = Value(part.substr(dash + 1), f);
        if (!b) return Quoted(part.substr(dash + 1), "is not a value");
        hi = *b;
      } else if (step != 1) {
        hi = f.max;  // "5/15": from 5 on, every 15
      }
    }
    if (lo < f.min || hi > f.max || lo > hi)
      return Quoted(part, "is outside " + std::to_string(f.min) + "-" + std::to_string(f.max));
    for (int v = lo; v <= hi; v += step) (*bits)[static_cast<std::size_t>(v)] = true;
  }
  return std::nullopt;
}

const date::time_zone* FindZone(std::string_view name) {
  try {
    return date::locate_zone(name);
  } catch (const std::exception&) {
    return nullptr;
  }
}

}  // namespace

bool IsKnownTimeZone(std::string_view time_zone) { return FindZone(time_zone) != nullptr; }

Result<CronSchedule> ParseCronSchedule(std::string_view expression, std::string_view time_zone) {
  std::vector<std::string_view> fields;
  for (std::string_view f : Split(expression, ' '))
    if (!f.empty()) fields.push_back(f);
  if (fields.size() != 5)
    return Status::InvalidArgument(
        "a cron schedule has five fields (minute hour day-of-month month day-of-week), got " +
        std::to_string(fields.size()) + " in '" + std::string(expression) + "'");
  CronSchedule s;
  s.expression = std::string(expression);
  s.time_zone = std::string(time_zone);
  for (std::size_t i = 0; i < 5; ++i) {
    const FieldSpec& f = kFields[i];
    std::vector<bool> bits(static_cast<std::size_t>(f.max) + 1, false);
    bool any = false;
    if (auto err = ParseField(fields[i], f, &bits, &any))
      return Status::InvalidArgument(std::string(f.name) + " field '" + std::string(fields[i]) +
                                     "': " + *err);
    for (std::size_t v = 0; v < bits.size(); ++v) {
      if (!bits[v]) continue;
      switch (i) {
        case 0:
          s.minutes.set(v);
          break;
        case 1:
          s.hours.set(v);
          break;
        case 2:
          s.days_of_month.set(v);
          break;
        case 3:
          s.months.set(v);
          break;
        default:
          s.days_of_week.set(v % 7);
          break;
      }
    }
    if (i == 2) s.any_day_of_month = any;
    if (i == 4) s.any_day_of_week = any;
  }
  if (time_zone.empty())
    return Status::InvalidArgument("a schedule needs a time zone, e.g. UTC or Europe/Berlin");
  if (!IsKnownTimeZone(time_zone))
    return Status::InvalidArgument("unknown time zone '" + std::string(time_zone) +
                                   "': use an IANA name from /usr/share/zoneinfo, e.g. "
                                   "America/New_York");
  return s;
}

std::optional<UnixMillis> NextFireAfter(const CronSchedule& s, UnixMillis after) {
  using std::chrono::milliseconds;
  const date::time_zone* zone = FindZone(s.time_zone);
  if (zone == nullptr) return std::nullopt;
  const date::sys_time<milliseconds> after_sys{milliseconds(after)};
  // Start a day early: the local day of `after` may hold a time (moved by a transition) that
  // is still ahead.
  auto local_day = date::floor<date::days>(zone->to_local(after_sys)) - date::days(1);
  for (int n = 0; n < 366 * 8; ++n, local_day += date::days(1)) {
    const date::year_month_day ymd(local_day);
    const date::weekday wd(local_day);
    if (!s.months.test(static_cast<unsigned>(ymd.month()))) continue;
    const bool dom = s.days_of_month.test(static_cast<unsigned>(ymd.day()));
    const bool dow = s.days_of_week.test(wd.c_encoding());
    const bool day_ok = s.any_day_of_month  ? (s.any_day_of_week || dow)
                        : s.any_day_of_week ? dom
                                            : (dom || dow);
    if (!day_ok) continue;
    for (int h = 0; h < 24; ++h) {
      if (!s.hours.test(static_cast<std::size_t>(h))) continue;
      for (int m = 0; m < 60; ++m) {
        if (!s.minutes.test(static_cast<std::size_t>(m))) continue;
        const auto local = date::local_time<milliseconds>(local_day) + std::chrono::hours(h) +
                           std::chrono::minutes(m);
        const date::local_info info = zone->get_info(local);
        date::sys_time<milliseconds> at;
        if (info.result == date::local_info::nonexistent) {
          // Skipped by a spring-forward: fire at the transition, the first instant after the
          // gap (info.second is the offset that starts there).
          at = date::sys_time<milliseconds>(info.second.begin);
        } else {
          // Unique, or repeated by a fall-back: the first occurrence.
          at = date::sys_time<milliseconds>(local.time_since_epoch() - info.first.offset);
        }
        if (at > after_sys) return at.time_since_epoch().count();
      }
    }
  }
  return std::nullopt;
}

}  // namespace icewarden
