// The `webhooks:` section: who may post alerts, the signed generic endpoints, and the rules
// from alert labels to an effect (docs/webhooks.md).
//
//   webhooks:
//     alertmanager:
//       - {name: alertmanager, token_env: ICEWARDEN_WEBHOOK_TOKEN}          # bearer
//       - {name: am-basic, username: am, password_file: secrets/am-password} # basic auth
//     generic:
//       - {name: ci, secret_env: CI_WEBHOOK_SECRET, max_skew: 5m}
//     rules:
//       - name: catalog-down
//         match: {alertname: IcebergCatalogDown, severity: critical}
//         effect: propose_failover       # mark_suspect | propose_failover | none
//         route: us-east-1-to-eu-central-1
//         scope: "owner:${labels.region}"

#include <algorithm>
#include <cctype>

#include "orchestrator/config/schema.h"

namespace icewarden {

using namespace std::chrono_literals;
namespace {

const std::vector<std::string> kEffects = {"mark_suspect", "propose_failover", "none"};

bool ValidLabelName(const std::string& s) {
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
  });
}

// Templates may only name labels: "${labels.region}". Anything else is a typo to report now
// rather than a proposal refused at 3 a.m.
void CheckTemplate(const YamlValue& v, const std::string& text) {
  for (std::size_t at = text.find("${"); at != std::string::npos; at = text.find("${", at + 2)) {
    const std::size_t end = text.find('}', at);
    const std::string inner = end == std::string::npos ? "" : text.substr(at + 2, end - at - 2);
    if (inner.rfind("labels.", 0) != 0 || !ValidLabelName(inner.substr(7))) {
      v.Error("a template may only name an alert label, as in ${labels.region}; got " +
              v.Describe());
      return;
    }
  }
}

// A literal region name is checked now; a templated one when an alert arrives.
void CheckRegionOrTemplate(const YamlValue& v, const std::string& s,
                           const std::vector<RegionConfig>& regions) {
  if (s.find("${") != std::string::npos) return CheckTemplate(v, s);
  CheckRegionName(v, s, regions);
}

std::vector<WebhookReceiverConfig> ReadReceivers(const YamlValue& value,
                                                 const ConfigSources& sources) {
  std::vector<WebhookReceiverConfig> out;
  auto items = value.List();
  if (!items) return out;
  std::vector<std::string> names;
  for (const auto& item : *items) {
    auto map =
        item.Map({"name", "token_env", "token_file", "username", "password_env", "password_file"});
    if (!map) continue;
    WebhookReceiverConfig r;
    ReadNamed(*map, &r.name, &names, "receiver");
    const bool bearer = map->Has("token_env") || map->Has("token_file");
    const bool basic = map->Has("username");
    if (bearer == basic) {
      item.Error(
          "set either a bearer token (token_env or token_file) or basic auth (username with "
          "password_env or password_file), as Alertmanager's http_config sends one of them");
      continue;
    }
    if (bearer) {
      if (auto s = ReadSecret(*map, "token_env", "token_file", sources)) r.token = s->secret;
    } else {
      map->Read("username", &r.username);
      if (r.username.empty() || r.username.find(':') != std::string::npos)
        map->Get("username")->Error("must be non-empty and contain no ':' (RFC 7617)");
      if (auto s = ReadSecret(*map, "password_env", "password_file", sources))
        r.password = s->secret;
    }
    out.push_back(std::move(r));
  }
  return out;
}

std::vector<GenericWebhookConfig> ReadGeneric(const YamlValue& value,
                                              const ConfigSources& sources) {
  std::vector<GenericWebhookConfig> out;
  auto items = value.List();
  if (!items) return out;
  std::vector<std::string> names;
  for (const auto& item : *items) {
    auto map = item.Map({"name", "secret_env", "secret_file", "max_skew"});
    if (!map) continue;
    GenericWebhookConfig g;
    ReadNamed(*map, &g.name, &names, "generic webhook");
    if (g.name.find_first_not_of(
            "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_") !=
        std::string::npos)
      map->Get("name")->Error("must be letters, digits, '-' or '_': it is a path segment");
    if (auto s = ReadSecret(*map, "secret_env", "secret_file", sources)) g.secret = s->secret;
    // A signature is only as fresh as the window it is accepted in; a day is already generous.
    ReadWithin(*map, "max_skew", &g.max_skew, 1s, 24h);
    out.push_back(std::move(g));
  }
  return out;
}

WebhookRuleConfig ReadRule(const YamlValue& item, const YamlMap& map,
                           const std::vector<RegionConfig>& regions,
                           const std::vector<FailoverRouteConfig>& routes,
                           std::vector<std::string>* names) {
  WebhookRuleConfig rule;
  rule.line = static_cast<int>(item.mark().line) + 1;
  rule.column = static_cast<int>(item.mark().column) + 1;
  ReadNamed(map, &rule.name, names, "rule");
  if (auto v = map.Require("match")) {
    if (!v->node().IsMap() || v->node().size() == 0) {
      v->Error("expected a mapping of label names to values (globs), e.g. {alertname: X}");
    } else {
      for (const auto& kv : v->node()) {
        const std::string label = kv.first.Scalar();
        if (!ValidLabelName(label)) v->Error("'" + label + "' is not a label name");
        if (!kv.second.IsScalar()) {
          v->Error("the value of '" + label + "' must be a string (a glob)");
          continue;
        }
        rule.match.emplace_back(label, kv.second.Scalar());
      }
    }
  }
  if (auto v = map.Require("effect")) {
    if (auto e = v->OneOf(kEffects)) rule.effect = *e;
  }
  for (auto [key, out] : {std::pair{"region", &rule.region},
                          {"route", &rule.route},
                          {"to", &rule.to},
                          {"from", &rule.from},
                          {"scope", &rule.scope}}) {
    if (!map.Read(key, out)) continue;
    auto v = *map.Get(key);
    if (out->empty()) v.Error("must not be empty");
    if (std::string(key) == "route" || out->empty()) continue;
    if (std::string(key) == "scope") {
      CheckTemplate(v, *out);
    } else {
      CheckRegionOrTemplate(v, *out, regions);
    }
  }
  if (rule.effect == "propose_failover") {
    const FailoverRouteConfig* route = nullptr;
    if (!rule.route.empty()) {
      auto it = std::find_if(routes.begin(), routes.end(),
                             [&](const FailoverRouteConfig& r) { return r.name == rule.route; });
      if (it == routes.end()) {
        std::vector<std::string> known;
        for (const auto& r : routes) known.push_back(r.name);
        map.Get("route")->Error("no failovers: route named '" + rule.route + "'" +
                                (known.empty() ? "" : "; routes are " + QuotedList(known)));
      } else {
        route = &*it;
      }
    }
    if (rule.to.empty() && route == nullptr && rule.route.empty())
      item.Error("propose_failover needs 'to' (the target region) or 'route' (a failovers: route)");
    if (route != nullptr && rule.to.empty()) rule.to = route->to;
    if (route != nullptr && rule.from.empty() && route->from != "*") rule.from = route->from;
  }
  return rule;
}

}  // namespace

WebhooksConfig ReadWebhooks(const YamlValue& value, const std::vector<RegionConfig>& regions,
                            const std::vector<FailoverRouteConfig>& routes,
                            const ConfigSources& sources) {
  WebhooksConfig config;
  auto map = value.Map({"alertmanager", "generic", "rules"});
  if (!map) return config;
  if (auto v = map->Get("alertmanager")) config.alertmanager = ReadReceivers(*v, sources);
  if (auto v = map->Get("generic")) config.generic = ReadGeneric(*v, sources);
  auto rules = map->Get("rules");
  if (!rules) return config;
  auto items = rules->List();
  if (!items) return config;
  std::vector<std::string> names;
  for (const auto& item : *items) {
    auto rule_map = item.Map({"name", "match", "effect", "region", "route", "to", "from", "scope"});
    if (!rule_map) continue;
    config.rules.push_back(ReadRule(item, *rule_map, regions, routes, &names));
  }
  return config;
}

}  // namespace icewarden
