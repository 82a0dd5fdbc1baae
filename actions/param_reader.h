// Reading an action's params (JSON, already templated) while collecting every problem as a
// ParamError with the JSON path of the offending value ("records[0].type"), so Validate
// can report them all at once and Run can share the same parsing.
//
// Every Read* returns nullopt when the value is absent (reporting "missing required param"
// if `required`) or has the wrong type (reporting what was expected and what was found).
// Thread-safety: a ParamReader belongs to one thread; the free functions are pure.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "actions/action.h"
#include "state/json_text.h"

namespace icewarden {

// "url" under "" is "url"; "type" under "records[0]" is "records[0].type".
std::string ParamPath(const std::string& parent, const std::string& key);
std::string ParamPath(const std::string& parent, size_t index);

// One syntax for every action's durations: "500ms", "30s", "5m", "1h30m", "2d", or "0"; a
// number needs its unit. nullopt for anything else (negative, fractional, overflowing).
// The longest duration a param may name. Longer is a mistake in a failover runbook, and
// deadlines are steady_clock time points: "now + d" must not overflow.
inline constexpr std::chrono::milliseconds kMaxParamDuration = std::chrono::hours(24 * 30);

// The shortest poll interval a param may name: a catalog or HTTP endpoint polled in a tight
// loop by a failover is a load test nobody asked for.
inline constexpr std::chrono::milliseconds kMinPollInterval{50};

std::optional<std::chrono::milliseconds> ParseParamDuration(std::string_view text);
// The shortest exact form: 1500ms -> "1500ms", 30000ms -> "30s", 120000ms -> "2m".
std::string FormatParamDuration(std::chrono::milliseconds d);

class ParamReader {
 public:
  explicit ParamReader(std::vector<ParamError>* errors) : errors_(errors) {}

  void Error(std::string path, std::string message);
  bool ok() const { return errors_->empty(); }
  const std::vector<ParamError>& errors() const { return *errors_; }

  // The params themselves must be an object; reports "params must be a mapping" otherwise.
  bool RequireObject(const nlohmann::json& value, const std::string& path);
  // Reports every key of `object` (under `parent`) that is not in `allowed`.
  void RejectUnknown(const nlohmann::json& object, const std::string& parent,
                     const std::vector<std::string>& allowed);

  // The member, or nullptr when absent or null (reported when `required`).
  const nlohmann::json* Member(const nlohmann::json& object, const std::string& parent,
                               const std::string& key, bool required);

  std::optional<std::string> String(const nlohmann::json& object, const std::string& parent,
                                    const std::string& key, bool required);
  // A non-empty string that is one of `choices`.
  std::optional<std::string> OneOf(const nlohmann::json& object, const std::string& parent,
                                   const std::string& key, const std::vector<std::string>& choices,
                                   bool required);
  std::optional<int64_t> Integer(const nlohmann::json& object, const std::string& parent,
                                 const std::string& key, bool required);
  // A duration string ("30s") or a whole number of seconds.
  std::optional<std::chrono::milliseconds> Duration(const nlohmann::json& object,
                                                    const std::string& parent,
                                                    const std::string& key, bool required);
  // A mapping of string to string (numbers and booleans are not converted: a header
  // value of `true` is almost always a YAML surprise).
  std::optional<std::map<std::string, std::string>> StringMap(const nlohmann::json& object,
                                                              const std::string& parent,
                                                              const std::string& key,
                                                              bool required);
  // A string, or a list of strings (one or more).
  std::optional<std::vector<std::string>> StringOrList(const nlohmann::json& object,
                                                       const std::string& parent,
                                                       const std::string& key, bool required);

 private:
  std::vector<ParamError>* errors_;
};

// "a string", "an integer", "a mapping", "a list", "a boolean", "null".
std::string DescribeJsonType(const nlohmann::json& value);

// The first error as one sentence, for Run when handed params that do not validate.
std::string FirstParamError(const std::vector<ParamError>& errors);

}  // namespace icewarden
