#include "examples/lab/metadata_text.h"

#include <algorithm>
#include <array>

#include "examples/lab/table_metadata.h"

namespace icewarden::lab {
namespace {

using nlohmann::json;

// Where the value starting at `at` ends (one past it), or npos when the text is not compact
// JSON. Strings are skipped whole (an escaped quote does not end them); brackets are counted.
std::size_t ValueEnd(std::string_view text, std::size_t at) {
  int depth = 0;
  for (std::size_t i = at; i < text.size(); ++i) {
    char c = text[i];
    if (c == '"') {
      for (++i; i < text.size() && text[i] != '"'; ++i) {
        if (text[i] == '\\') ++i;
      }
      if (i >= text.size()) return std::string_view::npos;
      if (depth == 0) return i + 1;
    } else if (c == '{' || c == '[') {
      ++depth;
    } else if (c == '}' || c == ']') {
      if (depth == 0) return i;  // the enclosing object's end: a scalar ended here
      if (--depth == 0) return i + 1;
    } else if (c == ',' && depth == 0) {
      return i;
    } else if (c == ' ' || c == '\n' || c == '\t' || c == '\r') {
      return std::string_view::npos;  // not dump()'s compact form
    }
  }
  return std::string_view::npos;
}

bool IsSkipped(const std::string& key) {
  static const std::array<std::string_view, 5> kLong = {"partition-specs", "schemas",
                                                        "snapshot-log", "snapshots", "sort-orders"};
  return std::find(kLong.begin(), kLong.end(), key) != kLong.end();
}

}  // namespace

std::optional<std::vector<TextMember>> TopLevelMembers(std::string_view text) {
  std::vector<TextMember> members;
  if (text.size() < 2 || text.front() != '{' || text.back() != '}') return std::nullopt;
  std::size_t i = 1;
  if (text[i] == '}') return i + 1 == text.size() ? std::optional(members) : std::nullopt;
  while (true) {
    if (text[i] != '"') return std::nullopt;
    std::size_t key_end = text.find('"', i + 1);
    if (key_end == std::string_view::npos) return std::nullopt;
    std::string_view key = text.substr(i + 1, key_end - i - 1);
    if (key.find('\\') != std::string_view::npos) return std::nullopt;
    if (key_end + 1 >= text.size() || text[key_end + 1] != ':') return std::nullopt;
    std::size_t value_at = key_end + 2;
    std::size_t value_end = ValueEnd(text, value_at);
    // At the text's end, the value took the closing brace: `{"a":{}` is not an object.
    if (value_end == std::string_view::npos || value_end == value_at || value_end >= text.size())
      return std::nullopt;
    members.push_back({std::string(key), text.substr(value_at, value_end - value_at)});
    if (value_end + 1 == text.size() && text[value_end] == '}') return members;
    if (text[value_end] != ',') return std::nullopt;
    i = value_end + 1;
  }
}

json ParseSmallMembers(const std::vector<TextMember>& members) {
  // One parse of the small members put together: a parse per member cost more in setting up
  // the parser than in parsing.
  std::string text = "{";
  for (const auto& member : members) {
    if (IsSkipped(member.key)) continue;
    if (text.size() > 1) text += ',';
    text += '"';
    text += member.key;  // has no escapes (TopLevelMembers)
    text += "\":";
    text += member.value;
  }
  text += '}';
  return json::parse(text);
}

std::string SpliceMembers(const std::vector<TextMember>& members, const json& changes) {
  std::size_t size = 2;
  for (const auto& member : members) size += member.key.size() + member.value.size() + 4;
  std::string out;
  out.reserve(size + 256);
  out += '{';
  bool first = true;
  auto key = [&](const std::string& name) {
    if (!first) out += ',';
    first = false;
    if (name.find_first_of("\"\\") == std::string::npos &&
        std::all_of(name.begin(), name.end(), [](char c) { return c >= 0x20 && c < 0x7f; })) {
      out += '"';
      out += name;  // dump() would write it as it is
      out += "\":";
    } else {
      out += json(name).dump();
      out += ':';
    }
  };
  auto change = changes.begin();
  for (const auto& member : members) {
    while (change != changes.end() && change.key() < member.key) {
      key(change.key());
      out += change.value().dump();
      ++change;
    }
    key(member.key);
    if (change != changes.end() && change.key() == member.key) {
      out += change.value().dump();
      ++change;
    } else {
      out += member.value;
    }
  }
  for (; change != changes.end(); ++change) {
    key(change.key());
    out += change.value().dump();
  }
  out += '}';
  return out;
}

bool AllSnapshotsReferencedIn(const std::vector<TextMember>& members) {
  json partial = json::object();
  for (const auto& member : members) {
    if (member.key == "refs" || member.key == "snapshots") {
      partial[member.key] = json::parse(member.value);
    }
  }
  if (!partial.contains("snapshots") || partial["snapshots"].empty()) return true;
  if (!partial.contains("refs")) partial["refs"] = json::object();
  return AllSnapshotsReferenced(partial);
}

}  // namespace icewarden::lab
