#include "orchestrator/drills/shadow_targets.h"

#include <set>

#include "orchestrator/config/config.h"

namespace icewarden {
namespace {

using nlohmann::json;

// Steps that only read (catalogs, DNS, the store) or whose effect is bounded by the scope,
// which in a shadow run is the canary namespace.
const std::set<std::string> kScopeBounded = {"fence.catalog_quiet",
                                             "verify.catalog_healthy",
                                             "verify.replica_caught_up",
                                             "ownership.transfer",
                                             "switchover.demotion_token",
                                             "verify.ownership_markers",
                                             "wait"};

}  // namespace

std::string ShadowScope(const DrillTargetsConfig& targets) {
  return "namespace:" + targets.namespace_;
}

ShadowStep RetargetForShadow(const std::string& action, const json& params,
                             const DrillTargetsConfig& targets) {
  ShadowStep out;
  out.params = params;
  if (kScopeBounded.count(action) != 0) return out;
  if (action == "dns.rfc2136" || action == "verify.dns") {
    if (targets.dns_name.empty()) {
      out.run = false;
      out.skip_reason = "shadow mode: the drill has no targets.dns_name, and " + action +
                        " would change or read production's DNS name";
      return out;
    }
    if (action == "verify.dns") {
      out.params["name"] = targets.dns_name;
    } else if (out.params.contains("records") && out.params["records"].is_array()) {
      for (json& record : out.params["records"]) record["name"] = targets.dns_name;
    }
    return out;
  }
  if (action == "alert.alertmanager") {
    if (!out.params.contains("labels") || !out.params["labels"].is_object())
      out.params["labels"] = json::object();
    out.params["labels"]["drill"] = "true";
    if (out.params.contains("annotations") && out.params["annotations"].is_object() &&
        out.params["annotations"].contains("summary") &&
        out.params["annotations"]["summary"].is_string()) {
      out.params["annotations"]["summary"] =
          "[drill] " + out.params["annotations"]["summary"].get<std::string>();
    }
    return out;
  }
  if (action == "alert.webhook") {
    if (!out.params.contains("details") || !out.params["details"].is_object())
      out.params["details"] = json::object();
    out.params["details"]["drill"] = "true";
    const std::string summary = out.params.value("summary", json("icewarden drill")).is_string()
                                    ? out.params.value("summary", std::string("icewarden drill"))
                                    : std::string("icewarden drill");
    out.params["summary"] = "[drill] " + summary;
    return out;
  }
  out.run = false;
  out.skip_reason = "shadow mode does not run " + action +
                    ": its effect cannot be pointed at the drill's targets and would reach "
                    "production";
  return out;
}

}  // namespace icewarden
