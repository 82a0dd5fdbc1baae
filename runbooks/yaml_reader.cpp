#include "runbooks/yaml_reader.h"

#include <yaml-cpp/eventhandler.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <limits>
#include <sstream>
#include <tuple>

namespace icewarden {
namespace {

// Long scalars are cut in messages: a message names the problem, it does not echo a blob.
constexpr size_t kMaxEchoedScalar = 60;

std::optional<int64_t> ParseInt64(const std::string& s) {
  int64_t v = 0;
  const char* begin = s.data();
  const char* end = s.data() + s.size();
  if (begin != end && *begin == '+') ++begin;
  auto [ptr, ec] = std::from_chars(begin, end, v);
  if (ec != std::errc() || ptr != end || begin == end) return std::nullopt;
  return v;
}

std::string Lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

size_t Levenshtein(const std::string& a, const std::string& b) {
  std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t substitute = prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, substitute});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

const char kDurationForms[] =
    "a duration such as '250ms', '5s', '2m', '1h' or a whole number of seconds";

}  // namespace

namespace {

// Notes where a document's content starts (its first node, as YAML::Node::Mark() would say),
// else where the document starts; the events themselves are not needed.
class DocumentStarts final : public YAML::EventHandler {
 public:
  std::optional<YAML::Mark> document, node;
  void OnDocumentStart(const YAML::Mark& mark) override {
    if (!document) document = mark;
  }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark& mark, YAML::anchor_t) override { Node(mark); }
  void OnAlias(const YAML::Mark& mark, YAML::anchor_t) override { Node(mark); }
  void OnScalar(const YAML::Mark& mark, const std::string&, YAML::anchor_t,
                const std::string&) override {
    Node(mark);
  }
  void OnSequenceStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t,
                       YAML::EmitterStyle::value) override {
    Node(mark);
  }
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t,
                  YAML::EmitterStyle::value) override {
    Node(mark);
  }
  void OnMapEnd() override {}

 private:
  void Node(const YAML::Mark& mark) {
    if (!node) node = mark;
  }
};

}  // namespace

YamlDocuments LoadYamlDocuments(const std::string& text) {
  YamlDocuments out;
  out.first = YAML::Load(text);
  std::istringstream in(text);
  YAML::Parser parser(in);
  DocumentStarts ignored, second;
  if (parser.HandleNextDocument(ignored) && parser.HandleNextDocument(second))
    out.another = second.node       ? *second.node
                  : second.document ? *second.document
                                    : YAML::Mark::null_mark();
  return out;
}

void YamlIssues::Add(const YAML::Mark& mark, std::string message) {
  YamlIssue issue;
  if (mark.line >= 0) {
    issue.line = mark.line + 1;
    issue.column = mark.column + 1;
  }
  issue.message = std::move(message);
  issues_.push_back(std::move(issue));
}

std::vector<YamlIssue> YamlIssues::InFileOrder() const {
  std::vector<YamlIssue> sorted = issues_;
  std::stable_sort(sorted.begin(), sorted.end(), [](const YamlIssue& a, const YamlIssue& b) {
    return std::tie(a.line, a.column) < std::tie(b.line, b.column);
  });
  return sorted;
}

std::string JoinPath(const std::string& parent, const std::string& key) {
  return parent.empty() ? key : parent + "." + key;
}

std::string JoinPath(const std::string& parent, size_t index) {
  return parent + "[" + std::to_string(index) + "]";
}

std::optional<std::string> ClosestMatch(const std::string& word,
                                        const std::vector<std::string>& candidates) {
  for (const auto& c : candidates) {
    if (Lower(c) == Lower(word)) return c;
  }
  std::optional<std::string> best;
  size_t best_distance = 3;
  for (const auto& c : candidates) {
    size_t d = Levenshtein(word, c);
    // Without the length guard every one-letter word is "close" to every other one.
    if (d < best_distance && d < word.size()) {
      best_distance = d;
      best = c;
    }
  }
  return best;
}

std::string QuotedList(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& item : items) {
    if (!out.empty()) out += ", ";
    out += "'" + item + "'";
  }
  return out;
}

std::string FormatDuration(std::chrono::milliseconds d) {
  int64_t ms = d.count();
  if (ms != 0 && ms % 3600000 == 0) return std::to_string(ms / 3600000) + "h";
  if (ms != 0 && ms % 60000 == 0) return std::to_string(ms / 60000) + "m";
  if (ms % 1000 == 0) return std::to_string(ms / 1000) + "s";
  return std::to_string(ms) + "ms";
}

YamlValue::YamlValue(YAML::Node node, YAML::Mark mark, std::string path, YamlIssues* issues)
    : node_(std::move(node)), mark_(mark), path_(std::move(path)), issues_(issues) {}

YamlValue YamlValue::Root(const YAML::Node& node, YamlIssues* issues) {
  return YamlValue(node, node.Mark(), "", issues);
}

void YamlValue::Error(const std::string& message) const {
  issues_->Add(mark_, path_.empty() ? message : path_ + ": " + message);
}

std::string YamlValue::Describe() const {
  if (node_.IsMap()) return "a mapping";
  if (node_.IsSequence()) return "a list";
  if (!node_.IsScalar()) return "nothing";
  std::string s = node_.Scalar();
  if (s.size() > kMaxEchoedScalar) s = s.substr(0, kMaxEchoedScalar) + "...";
  return "'" + s + "'";
}

std::optional<std::string> YamlValue::String() const {
  if (node_.IsScalar()) return node_.Scalar();
  Error("expected a string, got " + Describe());
  return std::nullopt;
}

std::optional<int64_t> YamlValue::Integer() const {
  if (node_.IsScalar()) {
    if (auto v = ParseInt64(node_.Scalar())) return v;
  }
  Error("expected an integer, got " + Describe());
  return std::nullopt;
}

std::optional<bool> YamlValue::Bool() const {
  bool v = false;
  if (node_.IsScalar() && YAML::convert<bool>::decode(node_, v)) return v;
  Error("expected true or false, got " + Describe());
  return std::nullopt;
}

std::optional<std::string> YamlValue::OneOf(const std::vector<std::string>& choices) const {
  auto s = String();
  if (!s) return std::nullopt;
  if (std::find(choices.begin(), choices.end(), *s) != choices.end()) return s;
  std::string message = "expected one of " + QuotedList(choices) + ", got " + Describe();
  if (auto close = ClosestMatch(*s, choices)) message += "; did you mean '" + *close + "'?";
  Error(message);
  return std::nullopt;
}

std::optional<std::chrono::milliseconds> YamlValue::Duration() const {
  if (node_.IsScalar()) {
    const std::string& s = node_.Scalar();
    // Longest suffix first: "ms" must not be read as minutes.
    static const std::pair<const char*, int64_t> kUnits[] = {
        {"ms", 1}, {"s", 1000}, {"m", 60000}, {"h", 3600000}};
    std::string digits = s;
    int64_t unit = 1000;  // a bare number is seconds
    for (const auto& [suffix, factor] : kUnits) {
      size_t n = std::char_traits<char>::length(suffix);
      if (s.size() > n && s.compare(s.size() - n, n, suffix) == 0) {
        digits = s.substr(0, s.size() - n);
        unit = factor;
        break;
      }
    }
    bool all_digits = !digits.empty() && std::all_of(digits.begin(), digits.end(), [](char c) {
      return std::isdigit(static_cast<unsigned char>(c));
    });
    if (all_digits) {
      auto v = ParseInt64(digits);
      if (v && *v <= std::numeric_limits<int64_t>::max() / unit) {
        return std::chrono::milliseconds(*v * unit);
      }
    }
  }
  Error(std::string("expected ") + kDurationForms + ", got " + Describe());
  return std::nullopt;
}

std::optional<std::vector<YamlValue>> YamlValue::List() const {
  if (!node_.IsSequence()) {
    Error("expected a list, got " + Describe());
    return std::nullopt;
  }
  std::vector<YamlValue> items;
  size_t i = 0;
  for (const auto& child : node_) {
    YAML::Mark m = child.IsNull() ? mark_ : child.Mark();
    items.emplace_back(child, m, JoinPath(path_, i++), issues_);
  }
  return items;
}

std::optional<YamlMap> YamlValue::Map(const std::vector<std::string>& allowed) const {
  if (!node_.IsMap()) {
    Error("expected a mapping, got " + Describe());
    return std::nullopt;
  }
  std::vector<YamlMap::Entry> entries;
  for (auto it = node_.begin(); it != node_.end(); ++it) {
    YAML::Node key = it->first;  // a copy: the iterator hands out a temporary
    YAML::Mark key_mark = key.Mark();
    if (!key.IsScalar()) {
      issues_->Add(key_mark, JoinPath(path_, "<key>") + ": a key must be a plain name");
      continue;
    }
    const std::string& name = key.Scalar();
    std::string path = JoinPath(path_, name);
    if (std::find(allowed.begin(), allowed.end(), name) == allowed.end()) {
      if (auto close = ClosestMatch(name, allowed)) {
        issues_->Add(key_mark, path + ": unknown key, did you mean '" + *close + "'?");
      } else {
        issues_->Add(key_mark, path + ": unknown key; allowed keys are " + QuotedList(allowed));
      }
      continue;
    }
    auto first = std::find_if(entries.begin(), entries.end(),
                              [&](const YamlMap::Entry& e) { return e.key == name; });
    if (first != entries.end()) {
      issues_->Add(key_mark, path + ": duplicate key (first at line " +
                                 std::to_string(first->key_mark.line + 1) + ")");
      continue;
    }
    YAML::Node value = it->second;
    YAML::Mark value_mark = value.IsNull() ? key_mark : value.Mark();
    entries.push_back({name, key_mark, YamlValue(value, value_mark, path, issues_)});
  }
  return YamlMap(*this, std::move(entries));
}

YamlMap::YamlMap(YamlValue self, std::vector<Entry> entries)
    : self_(std::move(self)), entries_(std::move(entries)) {}

bool YamlMap::Has(const std::string& key) const { return Get(key).has_value(); }

std::optional<YamlValue> YamlMap::Get(const std::string& key) const {
  for (const auto& e : entries_) {
    if (e.key == key) return e.value;
  }
  return std::nullopt;
}

std::optional<YamlValue> YamlMap::Require(const std::string& key) const {
  auto v = Get(key);
  if (!v) self_.Error("missing required key '" + key + "'");
  return v;
}

bool YamlMap::Read(const std::string& key, std::string* out) const {
  auto v = Get(key);
  if (!v) return false;
  auto s = v->String();
  if (s) *out = *s;
  return s.has_value();
}

bool YamlMap::Read(const std::string& key, int* out) const {
  auto v = Get(key);
  if (!v) return false;
  auto n = v->Integer();
  if (!n) return false;
  if (*n < std::numeric_limits<int>::min() || *n > std::numeric_limits<int>::max()) {
    v->Error("integer " + std::to_string(*n) + " is out of range");
    return false;
  }
  *out = static_cast<int>(*n);
  return true;
}

bool YamlMap::Read(const std::string& key, bool* out) const {
  auto v = Get(key);
  if (!v) return false;
  auto b = v->Bool();
  if (b) *out = *b;
  return b.has_value();
}

bool YamlMap::Read(const std::string& key, std::chrono::milliseconds* out) const {
  auto v = Get(key);
  if (!v) return false;
  auto d = v->Duration();
  if (d) *out = *d;
  return d.has_value();
}

}  // namespace icewarden
