// Parameter templates in runbook steps: ${failover.id} ${from} ${to} ${scope}
// ${params.NAME} ${env.NAME} ${file:PATH}. Resolution walks a step's params (any JSON) and
// replaces templates inside strings. Values that come from env and file are secrets: the
// masked copy shows them as "***" and is what plans, logs and the step journal carry.
// A string that is exactly one template of a non-string parameter (e.g. "${params.port}"
// for an integer parameter) becomes that JSON type.
// Thread-safety: pure functions.
#pragma once

#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "state/status.h"

namespace icewarden {

struct TemplateBindings {
  std::string failover_id{}, from{}, to{}, scope{};
  // Runbook parameters, already defaulted and type-checked, as JSON values.
  std::map<std::string, nlohmann::json> params{};
  std::function<std::optional<std::string>(const std::string&)> env{};  // empty: none set
  std::string base_dir{};  // ${file:relative} resolves against this
};

struct ResolvedParams {
  nlohmann::json value;   // to run with
  nlohmann::json masked;  // to show: secrets replaced by "***"
};

// Fails with kInvalidArgument naming the param path and the template ("params.url: unknown
// template ${form}; known: ${failover.id} ${from} ${to} ${scope} ${params.NAME} ${env.NAME}
// ${file:PATH}"), or an unset env var / unreadable file (never printing a secret).
Result<ResolvedParams> ResolveTemplates(const nlohmann::json& params,
                                        const TemplateBindings& bindings);

// Static check without bindings, for `runbook validate`: every template is well-formed and
// names a known variable or a declared runbook parameter. One message per problem, each
// prefixed with its param path.
std::vector<std::string> CheckTemplates(const nlohmann::json& params,
                                        const std::vector<std::string>& declared_parameters);

// What CheckTemplates reports, with the param path kept apart from the message so that the
// runbook parser can point at the param's line: path is relative to params
// ("records[0].value", "" for params itself) and message has no path prefix.
struct TemplateProblem {
  std::string path{};
  std::string message{};
};
std::vector<TemplateProblem> FindTemplateProblems(
    const nlohmann::json& params, const std::vector<std::string>& declared_parameters);

// NAME when `s` is exactly one template "${params.NAME}" and nothing else; else nullopt.
std::optional<std::string> WholeParameterTemplate(const std::string& s);

}  // namespace icewarden
