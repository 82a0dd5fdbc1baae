// Query strings of API requests: split from the target, percent-decoded, bounded, and
// checked against the parameters a route knows, with errors that say how to fix them.
// Thread-safety: plain values.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "state/status.h"

namespace icewarden {

// "/api/v1/ownership?limit=5" → path "/api/v1/ownership", query "limit=5". Views into
// `target`; no decoding.
struct SplitTarget {
  std::string_view path;
  std::string_view query;
};
SplitTarget SplitRequestTarget(std::string_view target);

// Decodes %XX escapes (and '+' as a space when `plus_is_space`). kInvalidArgument for a
// truncated or non-hex escape, or an escape that decodes to a NUL byte.
Result<std::string> PercentDecode(std::string_view s, bool plus_is_space);

// ?limit= of the API's pages: lists of records (failovers, audit events) and lists of tables
// (ownership, lag), a default and a bound each.
inline constexpr std::int64_t kListPageDefault = 100;
inline constexpr std::int64_t kListPageMax = 1000;
inline constexpr std::int64_t kTablePageDefault = 1000;
inline constexpr std::int64_t kTablePageMax = 10000;

class QueryParams {
 public:
  static constexpr std::size_t kMaxParams = 32;

  // Parses "a=1&b=x%20y". Empty pieces ("a=1&&b=2") are skipped; a name without '=' has an
  // empty value. kInvalidArgument when a name appears twice, there are more than
  // kMaxParams parameters, or an escape is malformed.
  static Result<QueryParams> Parse(std::string_view query);

  // kInvalidArgument naming the first parameter not in `allowed` and listing the allowed
  // ones (or saying that the route takes none).
  Status OnlyAllowed(const std::vector<std::string_view>& allowed) const;

  std::optional<std::string> Get(std::string_view name) const;

  // A free-text filter: absent is nullopt; present must be non-empty and at most
  // kMaxTextBytes, else kInvalidArgument naming it with `example` ("owner=us-east-1").
  static constexpr std::size_t kMaxTextBytes = 1024;
  Result<std::optional<std::string>> Text(std::string_view name, std::string_view example) const;

  // The decimal integer `name` in [min, max]; `fallback` when absent. kInvalidArgument
  // ("limit must be an integer from 1 to 10000, got 'abc'") otherwise.
  Result<std::int64_t> Integer(std::string_view name, std::int64_t fallback, std::int64_t min,
                               std::int64_t max) const;

 private:
  std::map<std::string, std::string, std::less<>> values_;
};

}  // namespace icewarden
