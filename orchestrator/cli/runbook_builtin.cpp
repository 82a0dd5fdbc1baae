// The runbook commands with the real action kinds. Apart from cli_runbook.cpp so that tests
// of the commands link with a fake registry alone.

#include <cstdlib>
#include <iostream>

#include "orchestrator/cli/cli.h"
#include "orchestrator/cli/runbook.h"
#include "orchestrator/gateway/gateway.h"

namespace icewarden {
namespace {

// Every kind, for validation and plans only: nothing here runs an action, so the
// environment they would run in stays empty.
bool BuiltinRegistry(ActionRegistry* registry) {
  Status s = registerBuiltinActions(*registry, ActionEnv{});
  if (s.ok()) s = registry->Register(MakeGatewayFenceAction(std::nullopt));
  if (!s.ok()) {
    std::cerr << "icewarden: " << s.message() << '\n';
    return false;
  }
  return true;
}

std::optional<std::string> ProcessEnvironment(const std::string& name) {
  const char* v = std::getenv(name.c_str());
  if (v == nullptr) return std::nullopt;
  return std::string(v);
}

}  // namespace

int CmdRunbookValidate(const std::string& file) {
  ActionRegistry registry;
  if (!BuiltinRegistry(&registry)) return kExitFailed;
  return RunbookValidateCommand(file, registry, std::cout, std::cerr);
}

int CmdRunbookPlan(const std::string& file, const std::string& from, const std::string& to,
                   const std::string& scope, const std::map<std::string, std::string>& params,
                   const std::string& output) {
  ActionRegistry registry;
  if (!BuiltinRegistry(&registry)) return kExitFailed;
  RunbookPlanOptions options;
  options.file = file;
  options.from = from;
  options.to = to;
  options.scope = scope;
  options.params = params;
  options.output = output;
  return RunbookPlanCommand(options, registry, ProcessEnvironment, std::cout, std::cerr);
}

}  // namespace icewarden
