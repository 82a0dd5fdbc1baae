// Reading one runbook step (and its params) from YAML: the part of runbook_parser.cpp that
// knows about actions. Internal to runbooks/; callers use runbook_parser.h.
//
// A step's params are free-form YAML turned into JSON, with the position of every value
// kept by its JSON path ("records[0].type") so that problems found later, by the action's
// Validate or by the template check, point at the line that holds the param.
// Thread-safety: a StepReader and the YamlIssues it reports into belong to one thread.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "actions/action.h"
#include "runbooks/runbook.h"
#include "runbooks/yaml_reader.h"

namespace icewarden {

// A step as read, with the marks the cross-step checks (unique ids, parallel groups) point at.
struct StepRead {
  RunbookStep step{};
  std::optional<YAML::Mark> id_mark{};        // set when the id was read
  std::optional<YAML::Mark> parallel_mark{};  // set when a parallel group was read
};

class StepReader {
 public:
  StepReader(const ActionRegistry& registry, const std::vector<RunbookParameter>& parameters,
             std::string file, YamlIssues* issues);

  // Reads one item of a section's list. Problems go to the issues list; nullopt when the
  // item is not even a mapping.
  std::optional<StepRead> Read(const YamlValue& item, RunbookSection section) const;

 private:
  // The JSON of `value` (any YAML), with the position of every value under it.
  nlohmann::json ParamsJson(const YamlValue& value, const std::string& json_path,
                            std::map<std::string, SourcePos>* positions) const;
  // Reads "params:" (absent or empty: {}), reporting anything but a mapping.
  nlohmann::json ReadParams(const std::optional<YamlValue>& value,
                            std::map<std::string, SourcePos>* positions) const;
  const Action* ReadAction(const YamlValue& value, std::string* kind) const;
  StepRetry ReadRetry(const YamlValue& value) const;
  std::optional<StepCompensation> ReadCompensation(const YamlValue& value) const;
  // Template check and the action's Validate, each problem at its param's position.
  void CheckParams(const Action* action, const nlohmann::json& params,
                   const std::map<std::string, SourcePos>& positions,
                   const std::string& yaml_params_path, const YAML::Mark& fallback) const;
  SourcePos Pos(const YAML::Mark& mark) const;

  const ActionRegistry& registry_;
  const std::vector<RunbookParameter>& parameters_;
  std::string file_;
  YamlIssues* issues_;
};

// The number a YAML scalar holds ("2", "1.5"); reports and returns nullopt otherwise.
std::optional<double> ReadNumber(const YamlValue& value);

}  // namespace icewarden
