// AlertRoutes: icewarden's own alerts, sent through the `alerts:` routes of the config with the
// alert action kinds (alert.alertmanager, alert.webhook). Today one alert uses them: the
// split-brain watch's critical "two writers" page (orchestrator/watch/split_brain.h).
// Thread-safety: Send may be called from any thread (the actions are stateless).
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace icewarden {

class ActionRegistry;
struct Config;
struct SplitBrainAlert;

class AlertRoutes {
 public:
  // Checks every route's params against its action kind, with a sample alert; problems are
  // appended as "FILE:LINE:COL: alerts route 'NAME': params.PATH: why". nullopt when any.
  static std::optional<AlertRoutes> Load(const Config& config, const ActionRegistry& actions,
                                         std::vector<std::string>* errors);

  // Sends the alert through every route, each bounded to 10 s; one line per route saying what
  // happened ("lab-alertmanager: sent ..."). Empty when no route is configured.
  std::vector<std::string> Send(const SplitBrainAlert& alert) const;

  bool empty() const { return routes_.empty(); }

 private:
  struct Route {
    std::string name, action;
    std::vector<std::pair<std::string, std::string>> params;
  };
  AlertRoutes(std::vector<Route> routes, const ActionRegistry* actions)
      : routes_(std::move(routes)), actions_(actions) {}
  std::vector<Route> routes_;
  const ActionRegistry* actions_ = nullptr;
};

}  // namespace icewarden
