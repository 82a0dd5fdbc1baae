// The `alerts:` section: where icewarden's own alerts go (the split-brain watch's critical
// alert, orchestrator/watch/split_brain.h). Each route names an alert action kind and its params;
// the daemon adds the alert's labels, annotations or summary.
//
//   alerts:
//     - name: lab-alertmanager
//       action: alert.alertmanager     # or alert.webhook
//       params: {url: "http://127.0.0.1:19093"}
//
// The params are checked against the action kind when the daemon starts (and by `config
// validate`), by AlertRoutes (orchestrator/watch/alert_routes.h).

#include <algorithm>

#include "orchestrator/config/schema.h"

namespace icewarden {
namespace {

const std::vector<std::string> kAlertActions = {"alert.alertmanager", "alert.webhook"};

}  // namespace

std::vector<AlertRouteConfig> ReadAlertRoutes(const YamlValue& value) {
  std::vector<AlertRouteConfig> routes;
  std::vector<std::string> names;
  auto items = value.List();
  if (!items) return routes;
  for (const auto& item : *items) {
    auto map = item.Map({"name", "action", "params"});
    if (!map) continue;
    AlertRouteConfig route;
    route.line = static_cast<int>(item.mark().line) + 1;
    route.column = static_cast<int>(item.mark().column) + 1;
    ReadNamed(*map, &route.name, &names, "alert route");
    if (auto v = map->Require("action")) {
      if (auto k = v->OneOf(kAlertActions)) route.action = *k;
    }
    if (auto v = map->Get("params")) route.params = ReadScalarParams(*v, "the action's params");
    routes.push_back(std::move(route));
  }
  return routes;
}

}  // namespace icewarden
