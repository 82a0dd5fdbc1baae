#include "orchestrator/cli/runbook.h"

#include <filesystem>

#include <nlohmann/json.hpp>

#include "orchestrator/cli/cli.h"
#include "runbooks/plan.h"
#include "runbooks/runbook_parser.h"

namespace icewarden {
namespace {

// Prints a failed load and says whether there was one.
bool ReportErrors(const std::string& file, const RunbookLoad& load, std::ostream& err) {
  if (load.ok()) return false;
  for (const auto& e : load.errors) err << e.ToString() << '\n';
  err << file << ": " << load.errors.size() << " error" << (load.errors.size() == 1 ? "" : "s")
      << '\n';
  return true;
}

}  // namespace

int RunbookValidateCommand(const std::string& file, const ActionRegistry& registry,
                           std::ostream& out, std::ostream& err) {
  RunbookLoad load = LoadRunbook(file, registry);
  if (ReportErrors(file, load, err)) return kExitUsage;
  const Runbook& rb = *load.runbook;
  size_t total = rb.fence.size() + rb.promote.size() + rb.verify.size() + rb.compensate.size();
  out << file << ": ok (" << total << " steps: fence " << rb.fence.size() << ", promote "
      << rb.promote.size() << ", verify " << rb.verify.size() << ", compensate "
      << rb.compensate.size() << ")\n";
  return kExitOk;
}

int RunbookPlanCommand(const RunbookPlanOptions& options, const ActionRegistry& registry,
                       const std::function<std::optional<std::string>(const std::string&)>& env,
                       std::ostream& out, std::ostream& err) {
  if (options.output != "table" && options.output != "json") {
    err << "icewarden: --output must be table or json, got '" << options.output << "'\n";
    return kExitUsage;
  }
  for (const auto& [flag, value] :
       {std::pair{"--from", options.from}, {"--to", options.to}, {"--scope", options.scope}}) {
    if (value.empty()) {
      err << "icewarden: " << flag << " is required\n";
      return kExitUsage;
    }
  }
  if (options.from == options.to) {
    err << "icewarden: --from and --to both name '" << options.from
        << "'; a failover moves ownership between two regions\n";
    return kExitUsage;
  }
  RunbookLoad load = LoadRunbook(options.file, registry);
  if (ReportErrors(options.file, load, err)) return kExitUsage;

  TemplateBindings bindings;
  bindings.failover_id = options.failover_id;
  bindings.from = options.from;
  bindings.to = options.to;
  bindings.scope = options.scope;
  for (const auto& [name, value] : options.params) bindings.params[name] = value;
  bindings.env = env;
  // ${file:relative} is relative to the runbook, wherever the command runs.
  bindings.base_dir = std::filesystem::path(options.file).parent_path().string();
  auto plan = PlanRunbook(*load.runbook, registry, bindings);
  if (!plan.ok()) {
    err << options.file << ": " << plan.status().message() << '\n';
    return kExitUsage;
  }
  if (options.output == "json") {
    // A runbook's text need not be UTF-8 (a Latin-1 description): replaced, not thrown.
    out << RenderPlanJson(plan.value())
               .dump(2, ' ', false, nlohmann::json::error_handler_t::replace)
        << '\n';
  } else {
    out << RenderPlanText(plan.value());
  }
  return kExitOk;
}

Result<std::map<std::string, std::string>> ParseParamAssignments(
    const std::vector<std::string>& assignments) {
  std::map<std::string, std::string> out;
  for (const auto& a : assignments) {
    size_t eq = a.find('=');
    if (eq == std::string::npos || eq == 0) {
      return Status::InvalidArgument("--param expects NAME=VALUE, got '" + a + "'");
    }
    std::string name = a.substr(0, eq);
    if (!out.emplace(name, a.substr(eq + 1)).second) {
      return Status::InvalidArgument("--param " + name + " is given twice");
    }
  }
  return out;
}

}  // namespace icewarden
