// Plan: what a runbook would do for one failover, step by step, without doing any of it
// (`icewarden runbook plan`, drills in plan mode).
//
// Every step's params are resolved with the failover's bindings; values that come from
// ${env.NAME} and ${file:PATH} are masked ("***") in everything a plan holds, including
// the action's Plan() line, which is computed on the real values (an action may check a
// secret's form) with every secret masked in its text. A plan never holds a
// secret, so it can be printed, logged and attached to a drill report.
// Thread-safety: pure functions; the registry is only read.
#pragma once

#include <chrono>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "actions/action.h"
#include "runbooks/runbook.h"
#include "runbooks/template.h"
#include "state/status.h"

namespace icewarden {

struct RunbookPlanCompensation {
  std::string action{};
  nlohmann::json params = nlohmann::json::object();  // resolved, secrets masked
  std::string plan_line{};
};

struct RunbookPlanEntry {
  int number = 0;  // 1-based, in run order across sections
  RunbookSection section = RunbookSection::kPromote;
  std::string step_id{};
  std::string action{};
  std::string parallel_group{};  // empty: runs alone
  std::chrono::milliseconds timeout{0};
  StepRetry retry{};
  OnFailure on_failure = OnFailure::kAbort;
  nlohmann::json params = nlohmann::json::object();       // resolved, secrets masked
  std::string plan_line{};                                // the action's Plan() on `params`
  std::optional<RunbookPlanCompensation> compensation{};  // the step's inline compensation
};

struct RunbookPlan {
  std::string runbook{};
  std::string description{};
  std::string source_file{};
  std::string failover_id{}, from{}, to{}, scope{};
  std::map<std::string, nlohmann::json> parameters{};  // as bound: given, else default
  std::vector<RunbookGuard> guards{};
  std::vector<RunbookPlanEntry> entries{};  // fence, promote, verify, then compensate
};

// The runbook's parameters as JSON values of their declared types: each given value (a
// string as typed on a command line, or already a JSON value of the right type), else the
// default. Fails with kInvalidArgument naming every unknown parameter, ill-typed value and
// required parameter that was not given. Parameters that are neither given nor defaulted
// are left out (a template naming one fails to resolve).
Result<std::map<std::string, nlohmann::json>> BindRunbookParameters(
    const Runbook& runbook, const std::map<std::string, nlohmann::json>& given);

// Binds bindings.params with BindRunbookParameters, then resolves every step in run order.
// Fails with kInvalidArgument on a parameter problem or a template that does not resolve
// (unset env var, unreadable file; the message never holds a secret), or with
// kFailedPrecondition when a step names an action kind the registry does not know.
Result<RunbookPlan> PlanRunbook(const Runbook& runbook, const ActionRegistry& registry,
                                const TemplateBindings& bindings);

// A numbered list by section, for people.
std::string RenderPlanText(const RunbookPlan& plan);
// {"runbook", "failover": {...}, "parameters", "guards", "steps": [...]}, for scripts.
nlohmann::json RenderPlanJson(const RunbookPlan& plan);

}  // namespace icewarden
