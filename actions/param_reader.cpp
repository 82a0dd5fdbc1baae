#include "actions/param_reader.h"

#include <cctype>

namespace icewarden {

std::string ParamPath(const std::string& parent, const std::string& key) {
  return parent.empty() ? key : parent + "." + key;
}

std::string ParamPath(const std::string& parent, size_t index) {
  return parent + "[" + std::to_string(index) + "]";
}

std::optional<std::chrono::milliseconds> ParseParamDuration(std::string_view text) {
  if (text == "0") return std::chrono::milliseconds(0);
  if (text.empty()) return std::nullopt;
  long long total = 0;
  size_t i = 0;
  while (i < text.size()) {
    size_t digits = i;
    long long n = 0;
    while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) {
      n = n * 10 + (text[i] - '0');
      if (n > 1'000'000'000LL) return std::nullopt;
      ++i;
    }
    if (i == digits) return std::nullopt;
    size_t unit_start = i;
    while (i < text.size() && std::isalpha(static_cast<unsigned char>(text[i]))) ++i;
    std::string_view unit = text.substr(unit_start, i - unit_start);
    long long scale = 0;
    if (unit == "ms")
      scale = 1;
    else if (unit == "s")
      scale = 1000;
    else if (unit == "m")
      scale = 60'000;
    else if (unit == "h")
      scale = 3'600'000;
    else if (unit == "d")
      scale = 86'400'000;
    else
      return std::nullopt;
    total += n * scale;
    if (total > kMaxParamDuration.count()) return std::nullopt;
  }
  return std::chrono::milliseconds(total);
}

std::string FormatParamDuration(std::chrono::milliseconds d) {
  const int64_t ms = d.count();
  if (ms != 0 && ms % 3600000 == 0) return std::to_string(ms / 3600000) + "h";
  if (ms != 0 && ms % 60000 == 0) return std::to_string(ms / 60000) + "m";
  if (ms % 1000 == 0) return std::to_string(ms / 1000) + "s";
  return std::to_string(ms) + "ms";
}

std::string DescribeJsonType(const nlohmann::json& value) {
  switch (value.type()) {
    case nlohmann::json::value_t::null:
      return "null";
    case nlohmann::json::value_t::object:
      return "a mapping";
    case nlohmann::json::value_t::array:
      return "a list";
    case nlohmann::json::value_t::string:
      return "a string";
    case nlohmann::json::value_t::boolean:
      return "a boolean";
    case nlohmann::json::value_t::number_float:
      return "a number with a fraction";
    case nlohmann::json::value_t::number_integer:
    case nlohmann::json::value_t::number_unsigned:
      return "an integer";
    default:
      return "an unsupported value";
  }
}

std::string FirstParamError(const std::vector<ParamError>& errors) {
  if (errors.empty()) return "";
  const ParamError& e = errors.front();
  std::string s = "invalid params: " + (e.path.empty() ? e.message : e.path + ": " + e.message);
  if (errors.size() > 1) s += " (and " + std::to_string(errors.size() - 1) + " more)";
  return s;
}

void ParamReader::Error(std::string path, std::string message) {
  errors_->push_back(ParamError{std::move(path), std::move(message)});
}

bool ParamReader::RequireObject(const nlohmann::json& value, const std::string& path) {
  if (value.is_object()) return true;
  Error(path, "expected a mapping, got " + DescribeJsonType(value));
  return false;
}

void ParamReader::RejectUnknown(const nlohmann::json& object, const std::string& parent,
                                const std::vector<std::string>& allowed) {
  if (!object.is_object()) return;
  for (auto it = object.begin(); it != object.end(); ++it) {
    bool known = false;
    for (const auto& a : allowed) known = known || a == it.key();
    if (known) continue;
    std::string list;
    for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + a;
    Error(ParamPath(parent, it.key()), "unknown param; known: " + list);
  }
}

const nlohmann::json* ParamReader::Member(const nlohmann::json& object, const std::string& parent,
                                          const std::string& key, bool required) {
  if (object.is_object()) {
    auto it = object.find(key);
    if (it != object.end() && !it->is_null()) return &*it;
  }
  if (required) Error(ParamPath(parent, key), "missing required param");
  return nullptr;
}

std::optional<std::string> ParamReader::String(const nlohmann::json& object,
                                               const std::string& parent, const std::string& key,
                                               bool required) {
  const nlohmann::json* v = Member(object, parent, key, required);
  if (!v) return std::nullopt;
  if (!v->is_string()) {
    Error(ParamPath(parent, key), "expected a string, got " + DescribeJsonType(*v));
    return std::nullopt;
  }
  if (required && v->get_ref<const std::string&>().empty()) {
    Error(ParamPath(parent, key), "must not be empty");
    return std::nullopt;
  }
  return v->get<std::string>();
}

std::optional<std::string> ParamReader::OneOf(const nlohmann::json& object,
                                              const std::string& parent, const std::string& key,
                                              const std::vector<std::string>& choices,
                                              bool required) {
  auto s = String(object, parent, key, required);
  if (!s) return std::nullopt;
  for (const auto& c : choices)
    if (*s == c) return s;
  std::string list;
  for (const auto& c : choices) list += (list.empty() ? "" : ", ") + c;
  Error(ParamPath(parent, key), "expected one of " + list + ", got '" + *s + "'");
  return std::nullopt;
}

std::optional<int64_t> ParamReader::Integer(const nlohmann::json& object, const std::string& parent,
                                            const std::string& key, bool required) {
  const nlohmann::json* v = Member(object, parent, key, required);
  if (!v) return std::nullopt;
  if (!v->is_number_integer()) {
    Error(ParamPath(parent, key), "expected an integer, got " + DescribeJsonType(*v));
    return std::nullopt;
  }
  return v->get<int64_t>();
}

std::optional<std::chrono::milliseconds> ParamReader::Duration(const nlohmann::json& object,
                                                               const std::string& parent,
                                                               const std::string& key,
                                                               bool required) {
  const nlohmann::json* v = Member(object, parent, key, required);
  if (!v) return std::nullopt;
  const std::string at_most = ", at most " + FormatParamDuration(kMaxParamDuration);
  if (v->is_number_integer() && v->get<int64_t>() >= 0) {
    if (v->get<int64_t>() <= kMaxParamDuration.count() / 1000)
      return std::chrono::milliseconds(v->get<int64_t>() * 1000);
    Error(ParamPath(parent, key), "expected seconds" + at_most + ", got " + v->dump());
    return std::nullopt;
  }
  if (v->is_string()) {
    if (auto d = ParseParamDuration(v->get_ref<const std::string&>())) return d;
    Error(ParamPath(parent, key), "expected a duration such as 250ms, 30s, 2m or 1h30m" + at_most +
                                      ", got '" + v->get<std::string>() + "'");
    return std::nullopt;
  }
  Error(ParamPath(parent, key), "expected a duration such as 30s, got " + DescribeJsonType(*v));
  return std::nullopt;
}

std::optional<std::map<std::string, std::string>> ParamReader::StringMap(
    const nlohmann::json& object, const std::string& parent, const std::string& key,
    bool required) {
  const nlohmann::json* v = Member(object, parent, key, required);
  if (!v) return std::nullopt;
  const std::string path = ParamPath(parent, key);
  if (!v->is_object()) {
    Error(path, "expected a mapping of strings, got " + DescribeJsonType(*v));
    return std::nullopt;
  }
  std::map<std::string, std::string> out;
  bool good = true;
  for (auto it = v->begin(); it != v->end(); ++it) {
    if (!it->is_string()) {
      Error(ParamPath(path, it.key()), "expected a string, got " + DescribeJsonType(*it));
      good = false;
      continue;
    }
    out[it.key()] = it->get<std::string>();
  }
  if (!good) return std::nullopt;
  return out;
}

std::optional<std::vector<std::string>> ParamReader::StringOrList(const nlohmann::json& object,
                                                                  const std::string& parent,
                                                                  const std::string& key,
                                                                  bool required) {
  const nlohmann::json* v = Member(object, parent, key, required);
  if (!v) return std::nullopt;
  const std::string path = ParamPath(parent, key);
  if (v->is_string()) return std::vector<std::string>{v->get<std::string>()};
  if (!v->is_array() || v->empty()) {
    Error(path, "expected a string or a non-empty list of strings, got " + DescribeJsonType(*v));
    return std::nullopt;
  }
  std::vector<std::string> out;
  bool good = true;
  for (size_t i = 0; i < v->size(); ++i) {
    if (!(*v)[i].is_string()) {
      Error(ParamPath(path, i), "expected a string, got " + DescribeJsonType((*v)[i]));
      good = false;
      continue;
    }
    out.push_back((*v)[i].get<std::string>());
  }
  if (!good) return std::nullopt;
  return out;
}

}  // namespace icewarden
