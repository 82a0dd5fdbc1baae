// FakeAction: an Action whose params are checked against a small declared schema (types,
// required keys, allowed values) and whose runs only record that they happened. Used to
// build an ActionRegistry for runbook tests without DNS servers or catalogs.
//
// Like the real actions, a fake accepts a "${...}" template wherever it takes a string,
// including a string with a fixed set of values.
// Thread-safety: Validate and Plan may be called from any thread; Run and the recorded
// calls belong to the test thread.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "actions/action.h"

namespace icewarden::testing {

struct FakeParamSpec {
  // "string", "integer", "number", "boolean", "object", "array" or "any".
  std::string type = "any";
  bool required = false;
  std::vector<std::string> one_of{};  // for strings; empty: any string
};

class FakeAction : public Action {
 public:
  // strict: params not in `spec` are errors ("unknown param").
  FakeAction(std::string kind, std::map<std::string, FakeParamSpec> spec = {}, bool strict = false);

  std::string_view kind() const override { return kind_; }
  bool idempotent() const override { return true; }
  std::vector<ParamError> Validate(const nlohmann::json& params) const override;
  // "KIND {params as JSON}"
  std::string Plan(const nlohmann::json& params) const override;
  ActionResult Run(const nlohmann::json& params, const ActionContext& ctx) override;

  // Runs on top of the schema check, for nested params (dns records).
  std::function<std::vector<ParamError>(const nlohmann::json&)> extra_validate{};
  std::vector<nlohmann::json> runs{};

 private:
  std::string kind_;
  std::map<std::string, FakeParamSpec> spec_;
  bool strict_;
};

// The problem with `value` against `spec`, or "" when it fits.
std::string CheckFakeParam(const nlohmann::json& value, const FakeParamSpec& spec);

// A registry with every planned built-in kind (docs/runbooks.md) as a strict FakeAction
// that knows the kind's planned params and their types.
ActionRegistry FakeBuiltinRegistry();

}  // namespace icewarden::testing
