// The `failovers:` section: routes from (kind, from, to, scope) to a runbook file.
//
//   failovers:
//     - name: us-east-to-eu
//       kind: failover            # failover | switchover
//       from: us-east-1           # or "*"
//       to: eu-central-1
//       scope: "owner:us-east-1"  # glob over the proposal's scope; default "*"
//       runbook: runbooks/lab-failover.yaml
//       params: {zone: lake.example.}
//
// The runbook file itself is read and validated when the daemon starts (and by `config
// validate`), by the route table (orchestrator/failovers/route_table.h).

#include <algorithm>

#include "orchestrator/config/schema.h"

namespace icewarden {
namespace {

const std::vector<std::string> kRouteKinds = {"failover", "switchover"};

}  // namespace

void ReadNamed(const YamlMap& map, std::string* name, std::vector<std::string>* taken,
               const std::string& what) {
  auto v = map.Require("name");
  if (!v) return;
  auto s = v->String();
  if (!s) return;
  if (s->empty()) v->Error("must not be empty");
  if (std::find(taken->begin(), taken->end(), *s) != taken->end())
    v->Error(what + " '" + *s + "' is defined twice");
  taken->push_back(*s);
  *name = *s;
}

std::vector<std::pair<std::string, std::string>> ReadScalarParams(const YamlValue& v,
                                                                  const std::string& what) {
  std::vector<std::pair<std::string, std::string>> out;
  if (!v.node().IsMap()) {
    v.Error("expected a mapping of " + what + ", got " + v.Describe());
    return out;
  }
  for (const auto& kv : v.node()) {
    if (!kv.second.IsScalar()) {
      v.Error("'" + kv.first.Scalar() + "' must be a single value (a string or number)");
      continue;
    }
    out.emplace_back(kv.first.Scalar(), kv.second.Scalar());
  }
  return out;
}

std::vector<FailoverRouteConfig> ReadFailoverRoutes(const YamlValue& value,
                                                    const std::vector<RegionConfig>& regions,
                                                    const ConfigSources& sources) {
  std::vector<FailoverRouteConfig> routes;
  std::vector<std::string> names;
  auto items = value.List();
  if (!items) return routes;
  for (const auto& item : *items) {
    auto map = item.Map({"name", "kind", "from", "to", "scope", "runbook", "params"});
    if (!map) continue;
    FailoverRouteConfig route;
    route.line = static_cast<int>(item.mark().line) + 1;
    route.column = static_cast<int>(item.mark().column) + 1;
    ReadNamed(*map, &route.name, &names, "route");
    if (auto v = map->Get("kind")) {
      if (auto k = v->OneOf(kRouteKinds)) route.kind = *k;
    }
    if (auto v = map->Get("from")) {
      if (auto s = v->String()) {
        if (*s != "*") CheckRegionName(*v, *s, regions);
        route.from = *s;
      }
    }
    if (auto v = map->Require("to")) {
      if (auto s = v->String()) {
        CheckRegionName(*v, *s, regions);
        route.to = *s;
      }
    }
    if (route.from == route.to && !route.to.empty()) {
      map->Get("to")->Error("a route must move ownership to another region than 'from'");
    }
    if (auto v = map->Get("scope")) {
      if (auto s = v->String()) {
        if (s->empty()) v->Error("must not be empty; '*' matches every scope");
        route.scope = *s;
      }
    }
    if (auto v = map->Require("runbook")) {
      if (auto s = v->String()) {
        if (s->empty()) v->Error("must name a runbook file");
        route.runbook = ResolvePath(sources, *s);
      }
    }
    if (auto v = map->Get("params"))
      route.params = ReadScalarParams(*v, "runbook parameter names to values");
    routes.push_back(std::move(route));
  }
  return routes;
}

}  // namespace icewarden
