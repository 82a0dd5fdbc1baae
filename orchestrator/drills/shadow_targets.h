// How a shadow drill points a runbook step at the drill's targets instead of production:
// DNS records and DNS checks get the drill's DNS name, alerts get the label drill="true"
// (and a "[drill]" summary), and the scope (the failover's ${scope} and every step's
// context) is the drill namespace's canary tables. Steps whose effect cannot be pointed
// elsewhere (an HTTP call to a write gateway, an HTTP fence) are skipped with that reason:
// a rehearsal must never act on production.
// Thread-safety: pure functions.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace icewarden {

struct DrillTargetsConfig;

struct ShadowStep {
  bool run = true;
  nlohmann::json params;      // what to run with (retargeted)
  std::string skip_reason{};  // when !run
};

// `params` are the step's resolved params (secrets included: the caller keeps them out of
// anything journaled).
ShadowStep RetargetForShadow(const std::string& action, const nlohmann::json& params,
                             const DrillTargetsConfig& targets);

// "namespace:<targets.namespace_>": the scope a shadow run moves.
std::string ShadowScope(const DrillTargetsConfig& targets);

}  // namespace icewarden
