#include "runbooks/runbook_steps.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>

#include "runbooks/template.h"

namespace icewarden {
namespace {

const std::vector<std::string> kStepKeys = {"id",    "action",     "params",   "timeout",
                                            "retry", "on_failure", "parallel", "compensate"};
const std::vector<std::string> kRetryKeys = {"attempts", "initial_backoff", "max_backoff",
                                             "multiplier", "jitter"};
const std::vector<std::string> kOnFailure = {"abort", "continue", "compensate"};

bool IsStepId(const std::string& s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
  });
}

// YAML 1.2 core schema for plain scalars; quoted scalars are always strings.
nlohmann::json ScalarJson(const YAML::Node& node) {
  const std::string& s = node.Scalar();
  if (node.Tag() != "?") return s;
  if (s.empty() || s == "~" || s == "null" || s == "Null" || s == "NULL") return nullptr;
  if (s == "true" || s == "True" || s == "TRUE") return true;
  if (s == "false" || s == "False" || s == "FALSE") return false;
  const char* begin = s.data();
  const char* end = s.data() + s.size();
  if (*begin == '+') ++begin;
  int64_t i = 0;
  auto [iptr, iec] = std::from_chars(begin, end, i);
  if (iec == std::errc() && iptr == end && begin != end) return i;
  bool numeric_chars = std::all_of(begin, end, [](char c) {
    return (c >= '0' && c <= '9') || c == '.' || c == 'e' || c == 'E' || c == '-' || c == '+';
  });
  if (numeric_chars && begin != end && std::isdigit(static_cast<unsigned char>(s.back()))) {
    char* parsed_end = nullptr;
    double d = std::strtod(begin, &parsed_end);
    if (parsed_end == end && std::isfinite(d)) return d;
  }
  return s;
}

// The copy of params that Validate sees: a string that is exactly "${params.NAME}" of a
// typed parameter becomes a value of that type, so that an integer param written as a
// template of an integer parameter is not reported as a string. Other templates stay
// strings; actions accept "${...}" wherever they take a string.
nlohmann::json ForValidation(const nlohmann::json& v, const std::vector<RunbookParameter>& ps) {
  if (v.is_object()) {
    nlohmann::json out = nlohmann::json::object();
    for (auto it = v.begin(); it != v.end(); ++it) out[it.key()] = ForValidation(it.value(), ps);
    return out;
  }
  if (v.is_array()) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& item : v) out.push_back(ForValidation(item, ps));
    return out;
  }
  if (!v.is_string()) return v;
  auto name = WholeParameterTemplate(v.get<std::string>());
  if (!name) return v;
  auto p = std::find_if(ps.begin(), ps.end(), [&](const auto& x) { return x.name == *name; });
  if (p == ps.end()) return v;
  if (p->type == "integer") return 1;
  if (p->type == "boolean") return false;
  if (p->type == "duration") return "1s";
  return v;
}

// The value at a param path ("records[0].value", "headers.Authorization"), or nullptr.
const nlohmann::json* ValueAt(const nlohmann::json& root, const std::string& path) {
  const nlohmann::json* v = &root;
  std::size_t i = 0;
  while (i < path.size() && v != nullptr) {
    if (path[i] == '.') ++i;
    if (path[i] == '[') {
      std::size_t close = path.find(']', i);
      if (close == std::string::npos || !v->is_array()) return nullptr;
      std::size_t index = std::stoul(path.substr(i + 1, close - i - 1));
      v = index < v->size() ? &(*v)[index] : nullptr;
      i = close + 1;
      continue;
    }
    std::size_t end = path.find_first_of(".[", i);
    std::string key = path.substr(i, end == std::string::npos ? std::string::npos : end - i);
    if (!v->is_object() || !v->contains(key)) return nullptr;
    v = &(*v)[key];
    i = end == std::string::npos ? path.size() : end;
  }
  return v;
}

// A string that still holds a template has no value yet, so only its JSON type can be
// checked now; its format (a DNS name, an address, a scope) is checked once resolved, by
// `runbook plan` and before every run. An action's error about such a string is a type
// error only if the param accepts some non-string JSON value: probe with one of each kind.
bool IsFormatErrorOnTemplate(const Action& action, const nlohmann::json& params,
                             const std::string& path) {
  const nlohmann::json* v = ValueAt(params, path);
  if (v == nullptr || !v->is_string() || v->get<std::string>().find("${") == std::string::npos)
    return false;
  for (const nlohmann::json& probe : {nlohmann::json(1), nlohmann::json(false),
                                      nlohmann::json::array(), nlohmann::json::object()}) {
    nlohmann::json copy = params;
    *const_cast<nlohmann::json*>(ValueAt(copy, path)) = probe;
    auto errors = action.Validate(copy);
    const bool accepted = std::none_of(errors.begin(), errors.end(),
                                       [&](const ParamError& e) { return e.path == path; });
    if (accepted) return false;  // the param wants that kind, not a string: a type error
  }
  return true;
}

// "records[0].type" -> "records[0]" -> "records" -> "".
std::string ParentPath(const std::string& path) {
  size_t cut = path.find_last_of(".[");
  return cut == std::string::npos ? "" : path.substr(0, cut);
}

std::string ShownParamPath(const std::string& params_path, const std::string& path) {
  if (path.empty()) return params_path;
  return params_path + (path[0] == '[' ? "" : ".") + path;
}

YAML::Mark MarkOf(const SourcePos& pos) {
  YAML::Mark m;
  m.line = pos.line - 1;
  m.column = pos.column - 1;
  return m;
}

}  // namespace

std::optional<double> ReadNumber(const YamlValue& value) {
  if (value.node().IsScalar()) {
    nlohmann::json j = ScalarJson(value.node());
    if (j.is_number()) return j.get<double>();
  }
  value.Error("expected a number, got " + value.Describe());
  return std::nullopt;
}

StepReader::StepReader(const ActionRegistry& registry,
                       const std::vector<RunbookParameter>& parameters, std::string file,
                       YamlIssues* issues)
    : registry_(registry), parameters_(parameters), file_(std::move(file)), issues_(issues) {}

SourcePos StepReader::Pos(const YAML::Mark& mark) const {
  return SourcePos{file_, mark.line + 1, mark.column + 1};
}

std::optional<StepRead> StepReader::Read(const YamlValue& item, RunbookSection section) const {
  auto map = item.Map(kStepKeys);
  if (!map) return std::nullopt;
  StepRead read;
  RunbookStep& step = read.step;
  step.pos = Pos(item.mark());
  if (auto v = map->Require("id")) {
    if (auto id = v->String()) {
      if (IsStepId(*id)) {
        step.id = *id;
        read.id_mark = v->mark();
      } else {
        v->Error("a step id is lowercase letters, digits, '-' and '_', got " + v->Describe());
      }
    }
  }
  const Action* action = nullptr;
  if (auto v = map->Require("action")) action = ReadAction(*v, &step.action);
  auto params_value = map->Get("params");
  step.params = ReadParams(params_value, &step.param_pos);
  if (map->Read("timeout", &step.timeout) &&
      (step.timeout.count() <= 0 || step.timeout > kMaxStepTimeout)) {
    map->Get("timeout")->Error("must be longer than 0 and at most " +
                               FormatDuration(kMaxStepTimeout));
  }
  if (auto v = map->Get("retry")) step.retry = ReadRetry(*v);
  if (auto v = map->Get("on_failure")) {
    if (auto s = v->OneOf(kOnFailure)) {
      if (*s == "continue") step.on_failure = OnFailure::kContinue;
      if (*s == "compensate") {
        step.on_failure = OnFailure::kCompensate;
        if (section == RunbookSection::kCompensate) {
          v->Error("'compensate' has no meaning in the compensate section; use abort or continue");
        }
      }
    }
  }
  if (auto v = map->Get("parallel")) {
    if (auto group = v->String()) {
      if (group->empty()) {
        v->Error("a parallel group needs a name");
      } else {
        step.parallel_group = *group;
        read.parallel_mark = v->mark();
      }
    }
  }
  if (auto v = map->Get("compensate")) {
    if (section == RunbookSection::kCompensate) {
      v->Error("a step of the compensate section has no compensation of its own");
    } else {
      step.compensate = ReadCompensation(*v);
    }
  }
  if (action != nullptr &&
      (!params_value || params_value->IsNull() || params_value->node().IsMap())) {
    YAML::Mark fallback = params_value ? params_value->mark() : item.mark();
    CheckParams(action, step.params, step.param_pos, JoinPath(item.path(), "params"), fallback);
  }
  return read;
}

const Action* StepReader::ReadAction(const YamlValue& value, std::string* kind) const {
  auto s = value.String();
  if (!s) return nullptr;
  *kind = *s;
  const Action* action = registry_.Find(*s);
  if (action != nullptr) return action;
  std::string message = registry_.UnknownKindMessage(*s);
  if (auto close = ClosestMatch(*s, registry_.Kinds()))
    message += "; did you mean '" + *close + "'?";
  value.Error(message);
  return nullptr;
}

nlohmann::json StepReader::ReadParams(const std::optional<YamlValue>& value,
                                      std::map<std::string, SourcePos>* positions) const {
  if (!value || value->IsNull()) return nlohmann::json::object();
  if (!value->node().IsMap()) {
    value->Error("expected a mapping of param names to values, got " + value->Describe());
    return nlohmann::json::object();
  }
  return ParamsJson(*value, "", positions);
}

nlohmann::json StepReader::ParamsJson(const YamlValue& value, const std::string& json_path,
                                      std::map<std::string, SourcePos>* positions) const {
  // Every value copied gets a position, so positions counts the copy. YAML aliases make a
  // small file expand to billions of values ("billion laughs"): stop at a bound.
  if (positions->size() >= kMaxParamValues) {
    if (positions->size() == kMaxParamValues) {
      value.Error("a step's params hold more than " + std::to_string(kMaxParamValues) +
                  " values (aliases count every time they are used)");
      (*positions)["<too many>"] = Pos(value.mark());
    }
    return nullptr;
  }
  (*positions)[json_path] = Pos(value.mark());
  const YAML::Node& node = value.node();
  if (node.IsMap()) {
    nlohmann::json out = nlohmann::json::object();
    std::map<std::string, int> first_line;
    for (auto it = node.begin(); it != node.end(); ++it) {
      YAML::Node key = it->first;
      YAML::Node child = it->second;
      if (!key.IsScalar()) {
        issues_->Add(key.Mark(), JoinPath(value.path(), "<key>") + ": a key must be a plain name");
        continue;
      }
      std::string name = key.Scalar();
      std::string path = JoinPath(value.path(), name);
      if (auto seen = first_line.find(name); seen != first_line.end()) {
        issues_->Add(key.Mark(),
                     path + ": duplicate key (first at line " + std::to_string(seen->second) + ")");
        continue;
      }
      first_line[name] = key.Mark().line + 1;
      YAML::Mark mark = child.IsNull() ? key.Mark() : child.Mark();
      out[name] = ParamsJson(YamlValue(child, mark, path, issues_),
                             json_path.empty() ? name : json_path + "." + name, positions);
    }
    return out;
  }
  if (node.IsSequence()) {
    nlohmann::json out = nlohmann::json::array();
    size_t i = 0;
    for (const auto& child : node) {
      YAML::Mark mark = child.IsNull() ? value.mark() : child.Mark();
      out.push_back(ParamsJson(YamlValue(child, mark, JoinPath(value.path(), i), issues_),
                               json_path + "[" + std::to_string(i) + "]", positions));
      ++i;
    }
    return out;
  }
  if (node.IsScalar()) return ScalarJson(node);
  return nullptr;
}

StepRetry StepReader::ReadRetry(const YamlValue& value) const {
  StepRetry retry;
  auto map = value.Map(kRetryKeys);
  if (!map) return retry;
  if (map->Read("attempts", &retry.attempts) &&
      (retry.attempts < 1 || retry.attempts > kMaxStepAttempts)) {
    map->Get("attempts")
        ->Error("must be from 1 (the first try counts) to " + std::to_string(kMaxStepAttempts) +
                ", got " + std::to_string(retry.attempts));
  }
  if (map->Read("initial_backoff", &retry.initial_backoff) && retry.initial_backoff > kMaxBackoff)
    map->Get("initial_backoff")->Error("must be at most " + FormatDuration(kMaxBackoff));
  const bool has_max = map->Read("max_backoff", &retry.max_backoff);
  if (has_max && retry.max_backoff > kMaxBackoff) {
    map->Get("max_backoff")->Error("must be at most " + FormatDuration(kMaxBackoff));
  } else if (has_max && retry.max_backoff < retry.initial_backoff) {
    map->Get("max_backoff")
        ->Error("must not be shorter than initial_backoff (" +
                FormatDuration(retry.initial_backoff) + ")");
  }
  if (auto v = map->Get("multiplier")) {
    if (auto n = ReadNumber(*v)) {
      if (*n < 1.0) v->Error("must be at least 1, got " + v->Describe());
      retry.multiplier = *n;
    }
  }
  if (auto v = map->Get("jitter")) {
    if (auto n = ReadNumber(*v)) {
      if (*n < 0.0 || *n > 1.0) v->Error("must be from 0 to 1, got " + v->Describe());
      retry.jitter = *n;
    }
  }
  return retry;
}

std::optional<StepCompensation> StepReader::ReadCompensation(const YamlValue& value) const {
  auto map = value.Map({"action", "params"});
  if (!map) return std::nullopt;
  StepCompensation c;
  c.pos = Pos(value.mark());
  const Action* action = nullptr;
  if (auto v = map->Require("action")) action = ReadAction(*v, &c.action);
  auto params_value = map->Get("params");
  std::map<std::string, SourcePos> positions;
  c.params = ReadParams(params_value, &positions);
  if (action != nullptr &&
      (!params_value || params_value->IsNull() || params_value->node().IsMap())) {
    YAML::Mark fallback = params_value ? params_value->mark() : value.mark();
    CheckParams(action, c.params, positions, JoinPath(value.path(), "params"), fallback);
  }
  return c;
}

void StepReader::CheckParams(const Action* action, const nlohmann::json& params,
                             const std::map<std::string, SourcePos>& positions,
                             const std::string& yaml_params_path,
                             const YAML::Mark& fallback) const {
  auto mark_of = [&](std::string path) {
    while (true) {
      if (auto it = positions.find(path); it != positions.end()) return MarkOf(it->second);
      if (path.empty()) return fallback;
      path = ParentPath(path);
    }
  };
  std::vector<std::string> declared;
  for (const auto& p : parameters_) declared.push_back(p.name);
  auto template_problems = FindTemplateProblems(params, declared);
  for (const auto& p : template_problems) {
    issues_->Add(mark_of(p.path), ShownParamPath(yaml_params_path, p.path) + ": " + p.message);
  }
  const nlohmann::json for_validation = ForValidation(params, parameters_);
  for (const auto& e : action->Validate(for_validation)) {
    // A param with a bad template has been reported already; its type follows from that.
    bool reported = std::any_of(template_problems.begin(), template_problems.end(),
                                [&](const TemplateProblem& p) { return p.path == e.path; });
    if (reported || IsFormatErrorOnTemplate(*action, for_validation, e.path)) continue;
    issues_->Add(mark_of(e.path), ShownParamPath(yaml_params_path, e.path) + ": " + e.message);
  }
}

}  // namespace icewarden
