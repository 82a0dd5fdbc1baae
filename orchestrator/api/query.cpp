#include "orchestrator/api/query.h"

#include <charconv>

namespace icewarden {
namespace {

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Quotes a value for an error message, shortened so a huge parameter cannot make a huge
// response.
std::string Quoted(std::string_view v) {
  constexpr std::size_t kMax = 64;
  // Appended, not `"'" + std::string(v)`: GCC 12 at -O3 flags that operator+ with a false
  // -Wrestrict (GCC bug 105651), fatal in CI's -Werror Release build.
  std::string out = "'";
  out += v.substr(0, kMax);
  out += v.size() > kMax ? "...'" : "'";
  return out;
}

}  // namespace

SplitTarget SplitRequestTarget(std::string_view target) {
  const std::size_t q = target.find('?');
  if (q == std::string_view::npos) return {target, {}};
  return {target.substr(0, q), target.substr(q + 1)};
}

Result<std::string> PercentDecode(std::string_view s, bool plus_is_space) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (c == '+' && plus_is_space) {
      out += ' ';
    } else if (c == '%') {
      const bool complete = i + 2 < s.size();
      const int hi = complete ? HexValue(s[i + 1]) : -1;
      const int lo = complete ? HexValue(s[i + 2]) : -1;
      if (hi < 0 || lo < 0)
        return Status::InvalidArgument("malformed percent-escape in " + Quoted(s) +
                                       ": use %XX with two hex digits");
      const char decoded = static_cast<char>(hi * 16 + lo);
      if (decoded == '\0') return Status::InvalidArgument("%00 is not allowed in " + Quoted(s));
      out += decoded;
      i += 2;
    } else {
      out += c;
    }
  }
  return out;
}

Result<QueryParams> QueryParams::Parse(std::string_view query) {
  QueryParams params;
  std::size_t start = 0;
  while (start <= query.size()) {
    std::size_t end = query.find('&', start);
    if (end == std::string_view::npos) end = query.size();
    const std::string_view piece = query.substr(start, end - start);
    start = end + 1;
    if (piece.empty()) continue;
    const std::size_t eq = piece.find('=');
    auto name = PercentDecode(piece.substr(0, eq), true);
    if (!name.ok()) return name.status();
    auto value = PercentDecode(eq == std::string_view::npos ? "" : piece.substr(eq + 1), true);
    if (!value.ok()) return value.status();
    if (params.values_.size() >= kMaxParams)
      return Status::InvalidArgument("too many query parameters (at most " +
                                     std::to_string(kMaxParams) + ")");
    if (!params.values_.emplace(*name, *value).second)
      return Status::InvalidArgument("query parameter " + Quoted(*name) +
                                     " is given more than once; give it once");
  }
  return params;
}

Status QueryParams::OnlyAllowed(const std::vector<std::string_view>& allowed) const {
  for (const auto& [name, value] : values_) {
    bool known = false;
    for (std::string_view a : allowed) known = known || a == name;
    if (known) continue;
    if (allowed.empty())
      return Status::InvalidArgument("unknown query parameter " + Quoted(name) +
                                     ": this route takes no query parameters");
    std::string list;
    for (std::string_view a : allowed) list += (list.empty() ? "" : ", ") + std::string(a);
    return Status::InvalidArgument("unknown query parameter " + Quoted(name) +
                                   "; this route accepts: " + list);
  }
  return Status::Ok();
}

std::optional<std::string> QueryParams::Get(std::string_view name) const {
  auto it = values_.find(name);
  if (it == values_.end()) return std::nullopt;
  return it->second;
}

Result<std::optional<std::string>> QueryParams::Text(std::string_view name,
                                                     std::string_view example) const {
  auto v = Get(name);
  if (!v) return std::optional<std::string>();
  if (v->empty() || v->size() > kMaxTextBytes) {
    return Status::InvalidArgument(std::string(name) + " must be non-empty and at most " +
                                   std::to_string(kMaxTextBytes) + " bytes, e.g. " +
                                   std::string(example));
  }
  return v;
}

Result<std::int64_t> QueryParams::Integer(std::string_view name, std::int64_t fallback,
                                          std::int64_t min, std::int64_t max) const {
  auto it = values_.find(name);
  if (it == values_.end()) return fallback;
  const std::string& v = it->second;
  std::int64_t n = 0;
  const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
  if (v.empty() || ec != std::errc() || end != v.data() + v.size() || n < min || n > max) {
    return Status::InvalidArgument(std::string(name) + " must be an integer from " +
                                   std::to_string(min) + " to " + std::to_string(max) + ", got " +
                                   Quoted(v));
  }
  return n;
}

}  // namespace icewarden
