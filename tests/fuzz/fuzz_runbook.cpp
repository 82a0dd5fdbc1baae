// The runbook YAML with its templates (runbooks/): any text is a Runbook or a list of
// FILE:LINE:COL errors; a runbook that parses is planned for a failover with every ${...}
// resolved (env and file lookups answer for some names and not for others) and rendered.
// Seeds: examples/runbooks/*.yaml.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "actions/action.h"
#include "runbooks/plan.h"
#include "runbooks/runbook_parser.h"
#include "state/clock.h"

namespace {

const icewarden::ActionRegistry& Registry() {
  static const icewarden::ActionRegistry* registry = [] {
    auto* r = new icewarden::ActionRegistry();
    icewarden::ActionEnv env;
    env.clock = icewarden::SystemClock();
    (void)icewarden::registerBuiltinActions(*r, env);
    return r;
  }();
  return *registry;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  icewarden::RunbookLoad load = icewarden::ParseRunbook(text, "fuzz.yaml", Registry());
  for (const auto& e : load.errors) (void)e.ToString();
  if (!load.ok()) return 0;
  icewarden::TemplateBindings bindings;
  bindings.failover_id = "fo-fuzz";
  bindings.from = "us-east-1";
  bindings.to = "eu-central-1";
  bindings.scope = "owner:us-east-1";
  bindings.env = [](const std::string& name) -> std::optional<std::string> {
    if (name.size() % 2 == 1) return std::nullopt;
    return "c2VjcmV0";
  };
  bindings.base_dir = "/nonexistent-icewarden-fuzz";  // ${file:...} never reads a real file
  auto params = icewarden::BindRunbookParameters(*load.runbook, {});
  if (params.ok()) bindings.params = *params;
  auto plan = icewarden::PlanRunbook(*load.runbook, Registry(), bindings);
  if (plan.ok()) {
    (void)icewarden::RenderPlanText(*plan);
    // As `icewarden runbook plan --output json` writes it.
    (void)icewarden::RenderPlanJson(*plan).dump(2, ' ', false,
                                                nlohmann::json::error_handler_t::replace);
  }
  return 0;
}
