// YamlValue and YamlMap: typed reading of a parsed YAML document that keeps source
// positions, so every complaint about a file can be reported as LINE:COL with the dotted
// path of the offending key ("regions[1].probe.fall: expected an integer, got 'three'").
//
// Reading never stops at the first problem: every accessor that finds something wrong adds
// a YamlIssue to the shared YamlIssues list and returns nullopt/false, and the caller goes
// on reading the rest of the document. Nothing here throws.
//
// The reader knows nothing about what a particular file means; schemas (config, runbooks)
// are written on top of it.
// Thread-safety: a YamlIssues list and the values that report into it belong to one thread.
#pragma once

#include <yaml-cpp/yaml.h>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace icewarden {

// One problem in a YAML file. line and column are 1-based; line 0 means the file as a whole.
struct YamlIssue {
  int line = 0;
  int column = 0;
  std::string message;
};

class YamlIssues {
 public:
  // A null mark (yaml-cpp's "no position") becomes line 0.
  void Add(const YAML::Mark& mark, std::string message);
  bool empty() const { return issues_.empty(); }
  // Sorted by position; issues at the same position keep the order they were found in.
  std::vector<YamlIssue> InFileOrder() const;

 private:
  std::vector<YamlIssue> issues_;
};

// A YAML file's first document, and where a second one starts if there is one (config and
// runbook files hold exactly one). Throws YAML::Exception on a syntax error, as YAML::Load.
// Not YAML::LoadAll: yaml-cpp 0.7's never returns on some malformed input, a lone "," for
// one, and allocates until the process dies (found by tests/fuzz; its parser reports one
// more empty document each time without consuming the token). Here the parser is asked for
// two documents at most.
struct YamlDocuments {
  YAML::Node first;                   // null for an empty file
  std::optional<YAML::Mark> another;  // the second document's first position
};
YamlDocuments LoadYamlDocuments(const std::string& text);

class YamlMap;

// A node, the path that names it in messages, and where its errors go. Copyable; the
// YamlIssues list must outlive it.
class YamlValue {
 public:
  // `mark` is where errors about this value point: the node's own mark, except for an
  // empty value ("key:"), whose mark yaml-cpp puts on the next line, so callers pass the
  // key's mark instead.
  YamlValue(YAML::Node node, YAML::Mark mark, std::string path, YamlIssues* issues);
  static YamlValue Root(const YAML::Node& node, YamlIssues* issues);

  const YAML::Node& node() const { return node_; }
  const YAML::Mark& mark() const { return mark_; }
  const std::string& path() const { return path_; }
  bool IsNull() const { return node_.IsNull(); }

  // Adds "PATH: message" (just "message" at the root) at this value's position.
  void Error(const std::string& message) const;

  // Each returns nullopt after reporting "PATH: expected <type>, got <what it is>".
  std::optional<std::string> String() const;
  std::optional<int64_t> Integer() const;
  std::optional<bool> Bool() const;
  // A string that must be one of `choices`; a near miss gets "did you mean".
  std::optional<std::string> OneOf(const std::vector<std::string>& choices) const;
  // "250ms", "5s", "2m", "1h", or a whole number meaning seconds; never negative.
  std::optional<std::chrono::milliseconds> Duration() const;
  std::optional<std::vector<YamlValue>> List() const;
  // Keys not in `allowed` are reported (with "did you mean" when one is close) and left
  // out; duplicate keys are reported and only the first is kept.
  std::optional<YamlMap> Map(const std::vector<std::string>& allowed) const;

  // How a value is described after "got": "'three'", "a mapping", "a list", "nothing".
  std::string Describe() const;

 private:
  YAML::Node node_;
  YAML::Mark mark_;
  std::string path_;
  YamlIssues* issues_;
};

// A mapping whose keys have been checked against the allowed list.
class YamlMap {
 public:
  struct Entry {
    std::string key;
    YAML::Mark key_mark;
    YamlValue value;
  };

  YamlMap(YamlValue self, std::vector<Entry> entries);

  const YamlValue& self() const { return self_; }
  bool Has(const std::string& key) const;
  std::optional<YamlValue> Get(const std::string& key) const;
  // Like Get, but reports "PATH: missing required key 'KEY'" at the mapping when absent.
  std::optional<YamlValue> Require(const std::string& key) const;

  // Read the key into *out when it is present and well-typed and say whether it was; an
  // absent key leaves *out untouched (the default) and is not an error.
  bool Read(const std::string& key, std::string* out) const;
  bool Read(const std::string& key, int* out) const;
  bool Read(const std::string& key, bool* out) const;
  bool Read(const std::string& key, std::chrono::milliseconds* out) const;

 private:
  YamlValue self_;
  std::vector<Entry> entries_;
};

// The child paths used in messages: "api" + "listen" -> "api.listen", "regions" + 1 ->
// "regions[1]".
std::string JoinPath(const std::string& parent, const std::string& key);
std::string JoinPath(const std::string& parent, size_t index);

// The candidate a misspelt word most likely meant: a case-insensitive match, else the
// nearest one within Levenshtein distance 2 (and less than the word's length, so that "z"
// is not taken for "a"); nullopt when none is that close.
std::optional<std::string> ClosestMatch(const std::string& word,
                                        const std::vector<std::string>& candidates);
// "'a', 'b', 'c'": for lists of allowed keys and values in messages.
std::string QuotedList(const std::vector<std::string>& items);
// 1500ms -> "1500ms", 5000ms -> "5s", 120000ms -> "2m": the shortest exact form.
std::string FormatDuration(std::chrono::milliseconds d);

}  // namespace icewarden
