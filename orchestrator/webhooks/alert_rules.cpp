// The mapping rules: the first rule whose every matcher holds decides what an alert does.
#include "orchestrator/webhooks/webhooks.h"
#include "state/table_pattern.h"

namespace icewarden {

std::optional<std::string> ExpandLabels(const std::string& text, const LabelSet& labels,
                                        std::string* missing) {
  std::string out;
  std::size_t at = 0;
  for (;;) {
    const std::size_t open = text.find("${labels.", at);
    if (open == std::string::npos) break;
    const std::size_t close = text.find('}', open);
    if (close == std::string::npos) break;  // the config loader refuses this; keep it literal
    out += text.substr(at, open - at);
    const std::string name = text.substr(open + 9, close - open - 9);
    auto it = labels.find(name);
    if (it == labels.end() || it->second.empty()) {
      *missing = name;
      return std::nullopt;
    }
    out += it->second;
    at = close + 1;
  }
  return out + text.substr(at);
}

AlertEffect MatchAlert(const std::vector<WebhookRuleConfig>& rules, const LabelSet& labels) {
  AlertEffect out;
  for (const WebhookRuleConfig& rule : rules) {
    bool all = true;
    for (const auto& [label, glob] : rule.match) {
      auto it = labels.find(label);
      // An absent label is the empty string, as in Alertmanager's own matchers.
      if (!GlobMatch(glob, it == labels.end() ? "" : it->second)) {
        all = false;
        break;
      }
    }
    if (!all) continue;
    out.rule = rule.name;
    out.effect = rule.effect;
    if (rule.effect == "none") return out;
    std::string missing;
    auto expand = [&](const std::string& text, std::string* field) {
      if (!out.error.empty() || text.empty()) return;
      auto v = ExpandLabels(text, labels, &missing);
      if (!v) {
        out.error = "rule '" + rule.name + "' needs the label '" + missing +
                    "', which the alert does not carry";
        return;
      }
      *field = *v;
    };
    expand(rule.region, &out.region);
    if (rule.effect == "propose_failover") {
      expand(rule.to, &out.to);
      expand(rule.from, &out.from);
      // Without a from, the region the alert is about loses ownership.
      if (out.from.empty()) out.from = out.region;
      expand(rule.scope, &out.scope);
      if (out.scope.empty() && !out.from.empty()) out.scope = "owner:" + out.from;
    }
    return out;
  }
  return out;
}

}  // namespace icewarden
