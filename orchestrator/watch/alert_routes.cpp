#include "orchestrator/watch/alert_routes.h"

#include <nlohmann/json.hpp>

#include "actions/action.h"
#include "orchestrator/config/config.h"
#include "orchestrator/watch/split_brain.h"

namespace icewarden {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;

// The alert as the route's action kind takes it: the route's params plus what this alert says.
json ParamsFor(const std::string& action,
               const std::vector<std::pair<std::string, std::string>>& route_params,
               const SplitBrainAlert& alert) {
  json p = json::object();
  for (const auto& [k, v] : route_params) p[k] = v;
  std::string tables;
  for (std::size_t i = 0; i < alert.findings.size() && i < 20; ++i) {
    if (i > 0) tables += ',';  // not "(i ? a : b) + string": GCC 12 -O3 -Wrestrict misfires
    tables += alert.findings[i].table.ToString();
  }
  if (action == "alert.alertmanager") {
    p["labels"] = {
        {"alertname", "IcewardenSplitBrain"}, {"severity", "critical"}, {"region", alert.region}};
    p["annotations"] = {{"summary", alert.summary.substr(0, 1024)}, {"tables", tables}};
  } else {
    p["severity"] = "critical";
    p["summary"] = alert.summary.substr(0, 1024);
    json findings = json::array();
    for (const SplitBrainFinding& f : alert.findings)
      findings.push_back({{"table", f.table.ToString()},
                          {"owner", f.owner},
                          {"snapshot_ids", f.snapshot_ids},
                          {"committed_at_unix_ms", f.committed_at}});
    p["details"] = {{"region", alert.region}, {"findings", findings}};
  }
  return p;
}

}  // namespace

std::optional<AlertRoutes> AlertRoutes::Load(const Config& config, const ActionRegistry& actions,
                                             std::vector<std::string>* errors) {
  const std::size_t before = errors->size();
  SplitBrainAlert sample;
  sample.region = "region";
  sample.summary = "split brain";
  std::vector<Route> routes;
  for (const AlertRouteConfig& rc : config.alerts) {
    const std::string where = config.source_path + ":" + std::to_string(rc.line) + ":" +
                              std::to_string(rc.column) + ": alerts route '" + rc.name + "'";
    const Action* action = actions.Find(rc.action);
    if (action == nullptr) {
      errors->push_back(where + ": " + actions.UnknownKindMessage(rc.action));
      continue;
    }
    for (const ParamError& e : action->Validate(ParamsFor(rc.action, rc.params, sample)))
      errors->push_back(where + ": params" + (e.path.empty() ? "" : "." + e.path) + ": " +
                        e.message);
    routes.push_back(Route{rc.name, rc.action, rc.params});
  }
  if (errors->size() != before) return std::nullopt;
  return AlertRoutes(std::move(routes), &actions);
}

std::vector<std::string> AlertRoutes::Send(const SplitBrainAlert& alert) const {
  std::vector<std::string> lines;
  for (const Route& r : routes_) {
    Action* action = actions_->FindMutable(r.action);
    if (action == nullptr) {
      lines.push_back(r.name + ": unknown action kind " + r.action);
      continue;
    }
    Cancellation cancel;
    ActionContext ctx;
    ctx.failover_id = "split-brain";
    ctx.step_id = alert.region;
    std::string newest = alert.findings.empty() ? "" : alert.findings.front().Key();
    ctx.idempotency_key = "split-brain/" + newest;
    ctx.deadline = std::chrono::steady_clock::now() + 10s;
    ctx.cancel = &cancel;
    ActionResult result = action->Run(ParamsFor(r.action, r.params, alert), ctx);
    lines.push_back(r.name + ": " + OutcomeName(result.outcome) + ": " + result.reason);
  }
  return lines;
}

}  // namespace icewarden
