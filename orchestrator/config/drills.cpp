// The `drills:` section: rehearsals of failover routes, scheduled or on demand.
//
//   drills:
//     - name: weekly-us-east-1
//       route: us-east-1-to-eu-central-1   # a failovers: route (its runbook, from, to)
//       scope: "owner:us-east-1"            # what a live drill moves; default owner:<from>
//       schedule: "30 2 * * 1"              # cron: minute hour day-of-month month day-of-week
//       time_zone: Europe/Berlin            # IANA name; default UTC
//       mode: shadow                        # plan | shadow | live; what a scheduled run does
//       rto_target: 5m
//       targets:                            # what shadow mode acts on instead of production
//         dns_name: drill-writer.lake.lab.
//         namespace: drill                  # canary tables present in both catalogs
//
// What the modes do is in docs/drills.md and orchestrator/drills/drill_service.h.

#include <algorithm>

#include "orchestrator/config/cron_schedule.h"
#include "orchestrator/config/schema.h"

namespace icewarden {
namespace {

const std::vector<std::string> kDrillModes = {"plan", "shadow", "live"};

}  // namespace

std::vector<DrillConfig> ReadDrills(const YamlValue& value,
                                    const std::vector<RegionConfig>& regions,
                                    const std::vector<FailoverRouteConfig>& routes) {
  std::vector<DrillConfig> drills;
  std::vector<std::string> names;
  auto items = value.List();
  if (!items) return drills;
  for (const auto& item : *items) {
    auto map = item.Map({"name", "route", "from", "to", "scope", "schedule", "time_zone", "mode",
                         "rto_target", "targets"});
    if (!map) continue;
    DrillConfig d;
    d.line = static_cast<int>(item.mark().line) + 1;
    d.column = static_cast<int>(item.mark().column) + 1;
    ReadNamed(*map, &d.name, &names, "drill");
    const FailoverRouteConfig* route = nullptr;
    if (auto v = map->Require("route")) {
      if (auto s = v->String()) {
        d.route = *s;
        auto it = std::find_if(routes.begin(), routes.end(),
                               [&](const FailoverRouteConfig& r) { return r.name == *s; });
        if (it == routes.end()) {
          std::vector<std::string> known;
          for (const auto& r : routes) known.push_back(r.name);
          auto near = ClosestMatch(*s, known);
          v->Error("no failovers: route named '" + *s + "'" +
                   (near            ? "; did you mean '" + *near + "'?"
                    : known.empty() ? "; the config has no failovers: section"
                                    : "; routes are " + QuotedList(known)));
        } else {
          route = &*it;
        }
      }
    }
    if (route != nullptr) {
      d.from = route->from == "*" ? "" : route->from;
      d.to = route->to;
    }
    if (auto v = map->Get("from")) {
      if (auto s = v->String()) {
        CheckRegionName(*v, *s, regions);
        if (route != nullptr && route->from != "*" && route->from != *s)
          v->Error("the route '" + route->name + "' moves ownership from " + route->from +
                   ", not " + *s);
        d.from = *s;
      }
    }
    if (auto v = map->Get("to")) {
      if (auto s = v->String()) {
        CheckRegionName(*v, *s, regions);
        if (route != nullptr && route->to != *s)
          v->Error("the route '" + route->name + "' moves ownership to " + route->to + ", not " +
                   *s);
        d.to = *s;
      }
    }
    if (route != nullptr && d.from.empty())
      map->self().Error("the route '" + route->name +
                        "' is from any region ('*'): name the drill's 'from' region");
    d.scope = d.from.empty() ? "" : "owner:" + d.from;
    if (auto v = map->Get("scope")) {
      if (auto s = v->String()) {
        if (s->empty()) v->Error("must not be empty");
        d.scope = *s;
      }
    }
    if (auto v = map->Get("mode")) {
      if (auto m = v->OneOf(kDrillModes)) d.mode = *m;
    }
    if (auto v = map->Get("time_zone")) {
      if (auto s = v->String()) {
        if (!IsKnownTimeZone(*s))
          v->Error("unknown time zone '" + *s +
                   "': use an IANA name from /usr/share/zoneinfo, e.g. Europe/Berlin or UTC");
        d.time_zone = *s;
      }
    }
    if (auto v = map->Get("schedule")) {
      if (auto s = v->String()) {
        d.schedule = *s;
        // The zone is reported at its own key; the expression is checked in UTC here.
        auto parsed = ParseCronSchedule(*s, "UTC");
        if (!parsed.ok()) v->Error(parsed.status().message());
      }
    }
    ReadWithin(*map, "rto_target", &d.rto_target, std::chrono::seconds(1), std::chrono::hours(24));
    if (auto v = map->Get("targets")) {
      if (auto t = v->Map({"dns_name", "namespace"})) {
        if (auto n = t->Get("dns_name")) {
          if (auto s = n->String()) {
            if (s->empty() || s->find(' ') != std::string::npos)
              n->Error("must be a DNS name, e.g. drill-writer.lake.example.");
            d.targets.dns_name = *s;
          }
        }
        if (auto n = t->Get("namespace")) {
          if (auto s = n->String()) {
            if (s->empty() || s->find_first_of("*?") != std::string::npos)
              n->Error("must name one namespace of canary tables (no wildcards), e.g. drill");
            d.targets.namespace_ = *s;
          }
        }
      }
    }
    if (d.mode == "shadow" && d.targets.namespace_.empty())
      map->self().Error(
          "a shadow drill needs targets.namespace: the canary tables it moves instead of "
          "production's");
    drills.push_back(std::move(d));
  }
  return drills;
}

}  // namespace icewarden
