// ParsedAction: the Action methods every kind with a params reader would otherwise repeat.
// Validate returns the reader's errors; Plan and Run read the params once and refuse invalid
// ones the same way ("KIND: invalid params: PATH: why" in a plan, a failed result in a run),
// then hand the typed spec to PlanSpec / RunSpec.
// Thread-safety: as Action (the reader must be const and stateless).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "actions/action.h"
#include "actions/param_reader.h"

namespace icewarden {

template <class Spec>
class ParsedAction : public Action {
 public:
  std::vector<ParamError> Validate(const nlohmann::json& params) const final {
    std::vector<ParamError> errors;
    Read(params, errors);
    return errors;
  }

  std::string Plan(const nlohmann::json& params) const final {
    std::vector<ParamError> errors;
    std::optional<Spec> spec = Read(params, errors);
    if (!spec) return std::string(kind()) + ": " + FirstParamError(errors);
    return PlanSpec(*spec);
  }

  ActionResult Run(const nlohmann::json& params, const ActionContext& ctx) final {
    std::vector<ParamError> errors;
    std::optional<Spec> spec = Read(params, errors);
    if (!spec) return ActionResult::Failed(FirstParamError(errors));
    return RunSpec(*spec, ctx);
  }

 protected:
  // The params as this kind reads them; nullopt, with at least one error, when invalid.
  virtual std::optional<Spec> Read(const nlohmann::json& params,
                                   std::vector<ParamError>& errors) const = 0;
  virtual std::string PlanSpec(const Spec& spec) const = 0;
  virtual ActionResult RunSpec(const Spec& spec, const ActionContext& ctx) = 0;
};

}  // namespace icewarden
