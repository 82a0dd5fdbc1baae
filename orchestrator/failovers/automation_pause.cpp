#include "orchestrator/failovers/automation_pause.h"

#include <algorithm>

#include "orchestrator/config/config.h"

namespace icewarden {
namespace {

// The order a covering pause is chosen in: the widest first, so a refusal names the pause
// that must be lifted last.
int Rank(const std::string& scope) {
  if (scope == "all") return 0;
  if (scope.rfind("region:", 0) == 0) return 1;
  if (scope.rfind("route:", 0) == 0) return 2;
  return 3;
}

bool Covers(const std::string& scope, const AutomationTarget& t) {
  if (scope == "all") return true;
  auto named = [&scope](const char* kind, const std::string& name) {
    return !name.empty() && scope == kind + name;
  };
  return named("region:", t.from) || named("region:", t.to) || named("route:", t.route) ||
         named("drill:", t.drill);
}

std::string Duration(std::int64_t ms) {
  const std::int64_t minutes = ms / 60000;
  if (minutes < 1) return std::to_string(ms / 1000) + " s";
  if (minutes < 120) return std::to_string(minutes) + " min";
  return std::to_string(minutes / 60) + " h " + std::to_string(minutes % 60) + " min";
}

}  // namespace

std::optional<Pause> CoveringPause(const std::vector<Pause>& pauses,
                                   const AutomationTarget& target) {
  const Pause* best = nullptr;
  for (const Pause& p : pauses)
    if (Covers(p.scope, target) && (best == nullptr || Rank(p.scope) < Rank(best->scope)))
      best = &p;
  if (best == nullptr) return std::nullopt;
  return *best;
}

std::int64_t PauseOverdueMillis(const Pause& pause, UnixMillis now) {
  if (pause.expected_end == 0) return 0;
  return std::max<std::int64_t>(0, now - pause.expected_end);
}

std::string PauseRefusal(const Pause& pause, UnixMillis now) {
  std::string s = "automation is paused for " + pause.scope + " by " + pause.by + " since " +
                  FormatUnixMillis(pause.since);
  if (pause.expected_end != 0) {
    s += " (expected until " + FormatUnixMillis(pause.expected_end);
    if (const std::int64_t late = PauseOverdueMillis(pause, now); late > 0)
      s += ", overdue by " + Duration(late);
    s += ")";
  } else {
    s += " (until resumed)";
  }
  s += ": " + pause.reason + "; `icewarden resume";
  if (pause.scope != "all") s += " --scope " + pause.scope;
  s += "` lifts it";
  return s;
}

Status CheckPauseScope(const std::string& scope, const Config& config) {
  const std::string help =
      "; a scope is all, region:NAME, route:NAME (a failovers: route) or drill:NAME";
  if (scope == "all") return Status::Ok();
  const std::size_t colon = scope.find(':');
  if (colon == std::string::npos || colon + 1 == scope.size())
    return Status::InvalidArgument("scope '" + scope.substr(0, 128) + "' is not a pause scope" +
                                   help);
  const std::string kind = scope.substr(0, colon), name = scope.substr(colon + 1);
  if (kind == "region") {
    if (config.FindRegion(name) != nullptr) return Status::Ok();
    return Status::InvalidArgument("scope: no region named '" + name.substr(0, 128) +
                                   "' in the config");
  }
  if (kind == "route") {
    for (const FailoverRouteConfig& r : config.failovers)
      if (r.name == name) return Status::Ok();
    return Status::InvalidArgument("scope: no failover route named '" + name.substr(0, 128) +
                                   "' in the config");
  }
  if (kind == "drill") {
    if (config.FindDrill(name) != nullptr) return Status::Ok();
    return Status::InvalidArgument("scope: no drill named '" + name.substr(0, 128) +
                                   "' in the config");
  }
  return Status::InvalidArgument("scope '" + scope.substr(0, 128) + "' is not a pause scope" +
                                 help);
}

}  // namespace icewarden
