// RequirementProblems: checks the `requirements` of a CommitTableRequest against the spec's
// TableRequirement schemas, which Prism does not do (TableRequirement is a discriminator
// without oneOf, so Prism accepts any object with a string `type`). The check is read from
// the spec itself: the discriminator mapping names the schema for each `type`; that schema's
// `required` fields must be present, and its `properties` must have the declared JSON type
// (string or integer; null only where `nullable: true`) and `const` value.
#pragma once

#include <yaml-cpp/yaml.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace icewarden::conformance {

// Problems in one property against its schema, "" when none.
inline std::string PropertyProblem(const std::string& where, const nlohmann::json& value,
                                   const YAML::Node& schema) {
  const bool nullable = schema["nullable"] && schema["nullable"].as<bool>();
  if (value.is_null()) return nullable ? "" : where + " is null but not nullable";
  const std::string type = schema["type"] ? schema["type"].as<std::string>() : "";
  if (type == "string" && !value.is_string()) return where + " must be a string";
  if (type == "integer" && !value.is_number_integer()) return where + " must be an integer";
  if (schema["const"] && (!value.is_string() || value != schema["const"].as<std::string>())) {
    return where + " must be \"" + schema["const"].as<std::string>() + "\"";
  }
  return "";
}

inline std::vector<std::string> RequirementProblems(const YAML::Node& spec,
                                                    const std::string& commit_body) {
  std::vector<std::string> problems;
  const nlohmann::json body = nlohmann::json::parse(commit_body, nullptr, false);
  if (!body.is_object() || !body.contains("requirements") || !body["requirements"].is_array()) {
    return {"CommitTableRequest needs a requirements array"};
  }
  const YAML::Node schemas = spec["components"]["schemas"];
  const YAML::Node mapping = schemas["TableRequirement"]["discriminator"]["mapping"];
  if (!mapping) return {"the spec has no TableRequirement discriminator mapping"};
  const auto& requirements = body["requirements"];
  for (size_t i = 0; i < requirements.size(); ++i) {
    const auto& r = requirements[i];
    const std::string where = "requirements[" + std::to_string(i) + "]";
    if (!r.is_object() || !r.contains("type") || !r["type"].is_string()) {
      problems.push_back(where + " needs a string type");
      continue;
    }
    const std::string type = r["type"].get<std::string>();
    if (!mapping[type]) {
      problems.push_back(where + ": unknown requirement type " + type);
      continue;
    }
    const std::string ref = mapping[type].as<std::string>();
    const YAML::Node schema = schemas[ref.substr(ref.rfind('/') + 1)];
    if (!schema) {
      problems.push_back(where + ": the spec has no schema " + ref);
      continue;
    }
    for (const auto& required : schema["required"]) {
      if (!r.contains(required.as<std::string>())) {
        problems.push_back(where + " (" + type + ") lacks required " + required.as<std::string>());
      }
    }
    for (const auto& property : schema["properties"]) {
      const std::string name = property.first.as<std::string>();
      if (!r.contains(name)) continue;
      std::string problem = PropertyProblem(where + "." + name, r[name], property.second);
      if (!problem.empty()) problems.push_back(problem);
    }
  }
  return problems;
}

// Problems of an error answer with `status` against the spec's IcebergErrorResponse (an object
// with "error" only) and ErrorModel (its required fields, their types, code in its range and
// equal to the status): for the refusals Prism never sees, because it answers the request
// itself (a body that is not JSON, a route or method the spec does not have).
inline std::vector<std::string> ErrorModelProblems(const YAML::Node& spec, const std::string& body,
                                                   int status) {
  const YAML::Node schemas = spec["components"]["schemas"];
  const YAML::Node model = schemas["ErrorModel"];
  if (!model || !schemas["IcebergErrorResponse"]) return {"the spec has no ErrorModel"};
  const nlohmann::json j = nlohmann::json::parse(body, nullptr, false);
  if (!j.is_object() || !j.contains("error") || !j["error"].is_object()) {
    return {"the body is not an IcebergErrorResponse {\"error\": {...}}: " + body};
  }
  std::vector<std::string> problems;
  if (j.size() != 1) problems.push_back("IcebergErrorResponse has properties besides error");
  const nlohmann::json& e = j["error"];
  for (const auto& required : model["required"]) {
    if (!e.contains(required.as<std::string>())) {
      problems.push_back("error lacks required " + required.as<std::string>());
    }
  }
  for (const auto& property : model["properties"]) {
    const std::string name = property.first.as<std::string>();
    if (!e.contains(name)) continue;
    std::string problem = PropertyProblem("error." + name, e[name], property.second);
    if (!problem.empty()) problems.push_back(problem);
  }
  if (e.contains("code") && e["code"].is_number_integer()) {
    const int code = e["code"].get<int>();
    if (code < model["properties"]["code"]["minimum"].as<int>() ||
        code > model["properties"]["code"]["maximum"].as<int>()) {
      problems.push_back("error.code " + std::to_string(code) + " is out of the spec's range");
    }
    if (code != status) {
      problems.push_back("error.code " + std::to_string(code) + " is not the status " +
                         std::to_string(status));
    }
  }
  return problems;
}

}  // namespace icewarden::conformance
