#include "orchestrator/config/config.h"

#include <cstdlib>

#include "orchestrator/config/schema.h"
#include "runbooks/yaml_reader.h"

namespace icewarden {
namespace {

// A config is a page of YAML; anything this large is the wrong file.
constexpr size_t kMaxConfigBytes = 4 * 1024 * 1024;

std::vector<ConfigError> ToConfigErrors(const std::string& file, const YamlIssues& issues,
                                        bool warning) {
  std::vector<ConfigError> out;
  for (auto& issue : issues.InFileOrder()) {
    out.push_back({file, issue.line, issue.column, std::move(issue.message), warning});
  }
  return out;
}

ConfigLoad Failed(const std::string& file, const YamlIssues& issues) {
  ConfigLoad load;
  load.errors = ToConfigErrors(file, issues, false);
  return load;
}

}  // namespace

const char* RoleName(Role r) {
  switch (r) {
    case Role::kViewer:
      return "viewer";
    case Role::kOperator:
      return "operator";
    case Role::kApprover:
      return "approver";
    case Role::kAdmin:
      return "admin";
  }
  return "unknown";
}

std::optional<Role> ParseRole(const std::string& s) {
  for (Role r : {Role::kViewer, Role::kOperator, Role::kApprover, Role::kAdmin}) {
    if (s == RoleName(r)) return r;
  }
  return std::nullopt;
}

std::string ConfigError::ToString() const {
  // An error about the file as a whole has no position to point an editor at.
  const std::string text = warning ? "warning: " + message : message;
  if (line == 0) return file + ": " + text;
  return file + ":" + std::to_string(line) + ":" + std::to_string(column) + ": " + text;
}

std::optional<std::string> ProcessEnv(const std::string& name) {
  const char* v = std::getenv(name.c_str());
  if (v == nullptr) return std::nullopt;
  return std::string(v);
}

const RegionConfig* Config::FindRegion(const std::string& name) const {
  for (const auto& r : regions) {
    if (r.name == name) return &r;
  }
  return nullptr;
}

const DrillConfig* Config::FindDrill(const std::string& name) const {
  for (const auto& d : drills) {
    if (d.name == name) return &d;
  }
  return nullptr;
}

const GatewayConfig* Config::FindGateway(const std::string& name) const {
  for (const auto& g : gateways) {
    if (g.name == name) return &g;
  }
  return nullptr;
}

const std::string& Config::OwnerFor(const std::string& dotted_table) const {
  for (const auto& rule : ownership.rules) {
    if (GlobMatch(rule.match, dotted_table)) return rule.owner;
  }
  return ownership.default_owner;
}

ConfigLoad LoadConfig(const std::string& path, EnvLookup env, SecretCheck secrets) {
  auto text = ReadFileText(path, kMaxConfigBytes);
  if (!text.ok()) {
    ConfigLoad load;
    load.errors.push_back({path, 0, 0, text.status().message()});
    return load;
  }
  return ParseConfig(text.value(), path, std::move(env), secrets);
}

ConfigLoad ParseConfig(const std::string& yaml_text, const std::string& path_for_errors,
                       EnvLookup env, SecretCheck secrets) {
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
    issues.Add(YAML::Mark::null_mark(),
               "the file is empty; expected a mapping with 'regions' and 'ownership'");
    return Failed(path_for_errors, issues);
  }
  if (documents.another)
    issues.Add(*documents.another, "a config file holds one YAML document, found another");
  YamlIssues missing_secrets;
  ConfigSources sources{std::filesystem::path(path_for_errors).parent_path(), std::move(env),
                        secrets == SecretCheck::kWarnIfMissing ? &missing_secrets : nullptr};
  Config config = ReadConfigDocument(YamlValue::Root(documents.first, &issues), sources);
  ConfigLoad load = Failed(path_for_errors, issues);
  load.warnings = ToConfigErrors(path_for_errors, missing_secrets, true);
  if (!load.errors.empty()) return load;
  config.source_path = path_for_errors;
  load.config = std::move(config);
  return load;
}

}  // namespace icewarden
