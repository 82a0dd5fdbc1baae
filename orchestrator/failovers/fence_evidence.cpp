#include "orchestrator/failovers/fence_evidence.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "state/json_text.h"

namespace icewarden {
namespace {

using nlohmann::json;

json StepEntry(const StepRecord& s) {
  json result = json::parse(s.result_json, nullptr, false);
  return {{"step", s.step_id},
          {"action", s.action},
          {"state", StepStateName(s.state)},
          {"reason", s.reason},
          {"detail", result.is_object() ? result.value("detail", json()) : json()}};
}

// The gateways a succeeded gateway.fence step's answers show confirmed.
std::vector<std::string> ConfirmedGateways(const json& detail) {
  std::vector<std::string> names;
  if (!detail.is_object() || !detail.contains("gateways") || !detail["gateways"].is_array())
    return names;
  for (const json& g : detail["gateways"]) {
    if (g.is_object() && g.value("confirmed", false) && g.contains("gateway") &&
        g["gateway"].is_string())
      names.push_back(g["gateway"].get<std::string>());
  }
  return names;
}

}  // namespace

FenceEvidence FenceStepsEvidence(const Failover& f, const std::vector<StepRecord>& journal,
                                 FencingKind kind, const std::vector<std::string>& gateways) {
  FenceEvidence out;
  json steps = json::array();
  bool quiet = false;
  std::vector<std::string> failed;
  std::vector<std::string> confirmed;
  bool gateway_step = false;
  for (const StepRecord& s : journal) {
    if (s.section != "fence") continue;
    json entry = StepEntry(s);
    const bool ok = s.state == StepState::kSucceeded;
    if (!ok) failed.push_back(s.step_id + " (" + s.action + ") " + StepStateName(s.state));
    quiet = quiet || (s.action == "fence.catalog_quiet" && ok);
    if (s.action == "gateway.fence" && ok) {
      gateway_step = true;
      for (const std::string& g : ConfirmedGateways(entry["detail"])) confirmed.push_back(g);
    }
    steps.push_back(std::move(entry));
  }

  if (kind == FencingKind::kEvidenceSteps) {
    if (!quiet) {
      out.why =
          "steps_and_quiet_window needs a fence.catalog_quiet step that saw no new commit in " +
          f.from + "; runbook " + f.runbook + " has none that succeeded";
      return out;
    }
    out.evidence_json = DumpJson(json{{"kind", "steps_and_quiet_window"}, {"steps", steps}});
    return out;
  }
  if (kind != FencingKind::kGatewayClosed) {
    out.why = std::string(FencingKindName(kind)) + " is not evidence of fence steps";
    return out;
  }
  if (!gateway_step) {
    out.why = "gateway_closed needs a gateway.fence step that succeeded; runbook " + f.runbook +
              " has none";
    return out;
  }
  if (!failed.empty()) {
    std::string list;
    for (const auto& s : failed) list += (list.empty() ? "" : ", ") + s;
    out.why =
        "gateway_closed needs every fence step to succeed (a failed one may mean writers "
        "reach " +
        f.from + " other than through the gateways): " + list;
    return out;
  }
  std::vector<std::string> missing;
  for (const std::string& g : gateways) {
    if (std::find(confirmed.begin(), confirmed.end(), g) == confirmed.end()) missing.push_back(g);
  }
  if (gateways.empty() || !missing.empty()) {
    std::string list;
    for (const auto& g : missing) list += (list.empty() ? "" : ", ") + g;
    out.why = gateways.empty()
                  ? "gateway_closed needs the config's gateways:, and there are none"
                  : "gateway_closed needs every gateway in the config to confirm the closure; "
                    "not confirmed by " +
                        list;
    return out;
  }
  out.evidence_json =
      DumpJson(json{{"kind", "gateway_closed"}, {"gateways", confirmed}, {"steps", steps}});
  return out;
}

}  // namespace icewarden
