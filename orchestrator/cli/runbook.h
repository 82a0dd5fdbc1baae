// `icewarden runbook validate FILE` and `icewarden runbook plan FILE --from R --to R --scope S
// [--param NAME=VALUE]... [--output table|json]`: the commands that read a runbook file.
// Neither talks to a daemon.
//
// Exit codes as in cli.h: 0 ok, 2 an invalid runbook, a missing or ill-typed parameter, a
// template that does not resolve, or bad usage. Errors in the file are printed to stderr as
// FILE:LINE:COL: message, in file order.
// Thread-safety: call from one thread.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "actions/action.h"
#include "state/status.h"

namespace icewarden {

struct RunbookPlanOptions {
  std::string file{};
  std::string from{}, to{}, scope{};
  std::map<std::string, std::string> params{};  // --param NAME=VALUE
  std::string output = "table";                 // table | json
  // A plan belongs to no failover yet; ${failover.id} shows as this.
  std::string failover_id = "<failover-id>";
};

// With every built-in action kind (registerBuiltinActions), the process environment, and
// stdout/stderr.
int CmdRunbookValidate(const std::string& file);
int CmdRunbookPlan(const std::string& file, const std::string& from, const std::string& to,
                   const std::string& scope, const std::map<std::string, std::string>& params,
                   const std::string& output);

// The same with the registry, the environment (for ${env.NAME}) and the streams given.
int RunbookValidateCommand(const std::string& file, const ActionRegistry& registry,
                           std::ostream& out, std::ostream& err);
int RunbookPlanCommand(const RunbookPlanOptions& options, const ActionRegistry& registry,
                       const std::function<std::optional<std::string>(const std::string&)>& env,
                       std::ostream& out, std::ostream& err);

// "--param NAME=VALUE" values as a map; fails naming a value without '=' or an empty NAME,
// or a NAME given twice.
Result<std::map<std::string, std::string>> ParseParamAssignments(
    const std::vector<std::string>& assignments);

}  // namespace icewarden
