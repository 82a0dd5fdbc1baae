// The top of a runbook: name, parameters, guards and the four step sections, and the checks
// that span steps (unique ids, parallel groups, at least one promote step). One step is
// read by runbook_steps.cpp.

#include "runbooks/runbook_parser.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <map>
#include <set>

#include "runbooks/runbook_steps.h"
#include "runbooks/yaml_reader.h"

namespace icewarden {
namespace {

// A runbook is a few pages of YAML; anything this large is the wrong file.
constexpr size_t kMaxRunbookBytes = 1024 * 1024;

const std::vector<std::string> kTopKeys = {"name",  "description", "parameters", "guards",
                                           "fence", "promote",     "verify",     "compensate"};
const std::vector<std::string> kParameterKeys = {"name", "type", "required", "default",
                                                 "description"};
const std::vector<std::string> kParameterTypes = {"string", "integer", "boolean", "duration"};

// Guard kinds and the keys each takes besides "kind".
const std::map<std::string, std::vector<std::string>> kGuardKeys = {
    {"target_healthy", {}}, {"max_lag", {"max_staleness"}},
    {"no_overlap", {}},     {"cooldown", {"period"}},
    {"leadership", {}},
};

bool IsParameterName(const std::string& s) {
  if (s.empty() || (s[0] >= '0' && s[0] <= '9')) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
  });
}

RunbookLoad Failed(const std::string& file, const YamlIssues& issues) {
  RunbookLoad load;
  for (auto& issue : issues.InFileOrder()) {
    load.errors.push_back({SourcePos{file, issue.line, issue.column}, std::move(issue.message)});
  }
  return load;
}

class DocumentReader {
 public:
  DocumentReader(const ActionRegistry& registry, std::string file, YamlIssues* issues)
      : registry_(registry), file_(std::move(file)), issues_(issues) {}

  Runbook Read(const YamlValue& root) {
    Runbook rb;
    rb.source_file = file_;
    auto map = root.Map(kTopKeys);
    if (!map) return rb;
    if (auto v = map->Require("name")) {
      if (auto s = v->String()) {
        if (s->empty()) v->Error("must not be empty");
        rb.name = *s;
      }
    }
    map->Read("description", &rb.description);
    if (auto v = map->Get("parameters")) rb.parameters = ReadParameters(*v);
    if (auto v = map->Get("guards")) rb.guards = ReadGuards(*v);

    StepReader steps(registry_, rb.parameters, file_, issues_);
    std::vector<std::pair<RunbookSection, std::vector<StepRead>>> sections;
    for (RunbookSection s : {RunbookSection::kFence, RunbookSection::kPromote,
                             RunbookSection::kVerify, RunbookSection::kCompensate}) {
      std::vector<StepRead> read;
      if (auto v = map->Get(RunbookSectionName(s)); v && !v->IsNull()) {
        if (auto items = v->List()) {
          for (const auto& item : *items) {
            if (auto step = steps.Read(item, s)) read.push_back(std::move(*step));
          }
        }
      }
      sections.emplace_back(s, std::move(read));
    }
    CheckUniqueIds(sections);
    CheckParallelGroups(sections);
    if (sections[1].second.empty()) {
      auto promote = map->Get("promote");
      const YamlValue& where = promote ? *promote : root;
      where.Error(std::string(promote ? "" : "missing 'promote': ") +
                  "a runbook needs at least one promote step");
    }
    for (auto& [section, read] : sections) {
      std::vector<RunbookStep>* out = nullptr;
      switch (section) {
        case RunbookSection::kFence:
          out = &rb.fence;
          break;
        case RunbookSection::kPromote:
          out = &rb.promote;
          break;
        case RunbookSection::kVerify:
          out = &rb.verify;
          break;
        case RunbookSection::kCompensate:
          out = &rb.compensate;
          break;
      }
      for (auto& r : read) out->push_back(std::move(r.step));
    }
    return rb;
  }

 private:
  using Sections = std::vector<std::pair<RunbookSection, std::vector<StepRead>>>;

  std::vector<RunbookParameter> ReadParameters(const YamlValue& value) {
    std::vector<RunbookParameter> out;
    auto items = value.List();
    if (!items) return out;
    std::map<std::string, int> first_line;
    for (const auto& item : *items) {
      auto map = item.Map(kParameterKeys);
      if (!map) continue;
      RunbookParameter p;
      auto name_value = map->Require("name");
      if (!name_value) continue;
      auto name = name_value->String();
      if (!name) continue;
      if (!IsParameterName(*name)) {
        name_value->Error("a parameter name is letters, digits and '_', not starting with a digit");
        continue;
      }
      if (auto seen = first_line.find(*name); seen != first_line.end()) {
        name_value->Error("duplicate parameter '" + *name + "' (first at line " +
                          std::to_string(seen->second) + ")");
        continue;
      }
      first_line[*name] = name_value->mark().line + 1;
      p.name = *name;
      if (auto v = map->Get("type")) {
        if (auto t = v->OneOf(kParameterTypes)) p.type = *t;
      }
      map->Read("required", &p.required);
      map->Read("description", &p.description);
      if (auto v = map->Get("default")) {
        if (p.required) {
          v->Error("a required parameter takes no default; drop 'required' or 'default'");
        } else if (v->node().IsScalar() && CheckDefault(*v, p.type)) {
          p.default_value = v->node().Scalar();
        } else if (!v->node().IsScalar()) {
          v->Error("expected a " + p.type + " value, got " + v->Describe());
        }
      }
      out.push_back(std::move(p));
    }
    return out;
  }

  static bool CheckDefault(const YamlValue& v, const std::string& type) {
    if (type == "integer") return v.Integer().has_value();
    if (type == "boolean") return v.Bool().has_value();
    if (type == "duration") return v.Duration().has_value();
    return v.String().has_value();
  }

  std::vector<RunbookGuard> ReadGuards(const YamlValue& value) {
    std::vector<RunbookGuard> out;
    auto items = value.List();
    if (!items) return out;
    std::vector<std::string> kinds;
    std::vector<std::string> every_key = {"kind"};
    for (const auto& [kind, keys] : kGuardKeys) {
      kinds.push_back(kind);
      every_key.insert(every_key.end(), keys.begin(), keys.end());
    }
    for (const auto& item : *items) {
      // The keys a guard may have depend on its kind, so the kind is looked at first.
      std::vector<std::string> allowed = every_key;
      const YAML::Node& node = item.node();
      if (node.IsMap() && node["kind"] && node["kind"].IsScalar()) {
        if (auto it = kGuardKeys.find(node["kind"].Scalar()); it != kGuardKeys.end()) {
          allowed = it->second;
          allowed.insert(allowed.begin(), "kind");
        }
      }
      auto map = item.Map(allowed);
      if (!map) continue;
      RunbookGuard guard;
      guard.pos = SourcePos{file_, item.mark().line + 1, item.mark().column + 1};
      auto kind_value = map->Require("kind");
      if (!kind_value) continue;
      auto kind = kind_value->OneOf(kinds);
      if (!kind) continue;
      guard.kind = *kind;
      for (const auto& key : kGuardKeys.at(*kind)) {
        std::chrono::milliseconds d{0};
        if (map->Read(key, &d)) guard.params[key] = FormatDuration(d);
      }
      out.push_back(std::move(guard));
    }
    return out;
  }

  void CheckUniqueIds(const Sections& sections) {
    std::map<std::string, std::pair<const char*, int>> first;  // id -> section, line
    for (const auto& [section, steps] : sections) {
      for (const auto& r : steps) {
        if (!r.id_mark) continue;
        auto [it, inserted] = first.emplace(
            r.step.id, std::make_pair(RunbookSectionName(section), r.id_mark->line + 1));
        if (!inserted) {
          issues_->Add(*r.id_mark, "duplicate step id '" + r.step.id + "' (first used in " +
                                       it->second.first + " at line " +
                                       std::to_string(it->second.second) +
                                       "); step ids are unique across all sections");
        }
      }
    }
  }

  // Steps of one parallel group run together, so they must sit next to each other.
  void CheckParallelGroups(const Sections& sections) {
    struct Seen {
      RunbookSection section;
      int line;
    };
    std::map<std::string, Seen> groups;
    for (const auto& [section, steps] : sections) {
      std::string previous;
      std::size_t run = 0;  // steps of the current group so far
      for (const auto& r : steps) {
        const std::string& g = r.step.parallel_group;
        run = !g.empty() && g == previous ? run + 1 : 1;
        if (!g.empty() && run == kMaxParallelGroupSteps + 1) {
          issues_->Add(*r.parallel_mark, "parallel group '" + g + "' has more than " +
                                             std::to_string(kMaxParallelGroupSteps) +
                                             " steps; each runs on its own thread");
        }
        if (!g.empty() && g != previous) {
          if (auto it = groups.find(g); it != groups.end()) {
            std::string message = "parallel group '" + g + "' must be consecutive steps of one " +
                                  "section; it started in " +
                                  RunbookSectionName(it->second.section) + " at line " +
                                  std::to_string(it->second.line);
            if (it->second.section == section) message += " and other steps come between";
            issues_->Add(*r.parallel_mark, message);
          } else {
            groups[g] = Seen{section, r.parallel_mark->line + 1};
          }
        }
        previous = g;
      }
    }
  }

  const ActionRegistry& registry_;
  std::string file_;
  YamlIssues* issues_;
};

}  // namespace

std::string RunbookError::ToString() const {
  if (pos.line == 0) return pos.file + ": " + message;
  return pos.ToString() + ": " + message;
}

RunbookLoad LoadRunbook(const std::string& path, const ActionRegistry& registry) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    RunbookLoad load;
    load.errors.push_back(
        {SourcePos{path, 0, 0}, std::string("cannot read: ") + std::strerror(errno)});
    return load;
  }
  std::string text(kMaxRunbookBytes + 1, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<size_t>(in.gcount()));
  if (text.size() > kMaxRunbookBytes) {
    RunbookLoad load;
    load.errors.push_back({SourcePos{path, 0, 0}, "larger than 1 MiB; is this a runbook?"});
    return load;
  }
  return ParseRunbook(text, path, registry);
}

RunbookLoad ParseRunbook(const std::string& yaml_text, const std::string& path_for_errors,
                         const ActionRegistry& registry) {
  YamlIssues issues;
  YamlDocuments documents;
  try {
    documents = LoadYamlDocuments(yaml_text);
  } catch (const YAML::Exception& e) {
    // yaml-cpp reports syntax errors by exception; they stop here as positioned errors.
    issues.Add(e.mark, "YAML syntax error: " + e.msg);
    return Failed(path_for_errors, issues);
  }
  if (!documents.first.IsDefined() || documents.first.IsNull()) {
    issues.Add(YAML::Mark(), "the file is empty; expected a mapping with 'name' and 'promote'");
    return Failed(path_for_errors, issues);
  }
  if (documents.another)
    issues.Add(*documents.another, "a runbook file holds one YAML document, found another");
  DocumentReader reader(registry, path_for_errors, &issues);
  Runbook rb = reader.Read(YamlValue::Root(documents.first, &issues));
  if (!issues.empty()) return Failed(path_for_errors, issues);
  RunbookLoad load;
  load.runbook = std::move(rb);
  return load;
}

}  // namespace icewarden
