#include "examples/lab/ownership.h"

#include <algorithm>

namespace icewarden::lab {

Ownership::Ownership(std::set<std::string> regions, std::string default_owner)
    : regions_(std::move(regions)), default_owner_(std::move(default_owner)) {}

LabStatus Ownership::SetRule(const std::string& match, const std::string& owner) {
  if (!regions_.count(owner)) return LabStatus::Error("unknown region: " + owner);
  std::regex pattern;
  try {
    pattern = std::regex(match, std::regex::ECMAScript);
  } catch (const std::regex_error& e) {
    return LabStatus::Error("invalid match regex '" + match + "': " + e.what());
  }
  std::lock_guard lock(mutex_);
  rules_.erase(std::remove_if(rules_.begin(), rules_.end(),
                              [&](const CompiledRule& rule) { return rule.rule.match == match; }),
               rules_.end());
  rules_.push_back({{match, owner}, std::move(pattern)});
  ++rules_version_;
  return LabStatus::Ok();
}

LabStatus Ownership::SetDefaultOwner(const std::string& owner) {
  if (!regions_.count(owner)) return LabStatus::Error("unknown region: " + owner);
  std::lock_guard lock(mutex_);
  default_owner_ = owner;
  ++rules_version_;
  return LabStatus::Ok();
}

OwnerDecision Ownership::Resolve(const TableIdent& table,
                                 const std::vector<OwnershipClaim>& claims) {
  std::string dotted = table.Dotted();
  std::lock_guard lock(mutex_);
  auto highest = highest_claims_.find(dotted);
  for (const auto& claim : claims) {
    if (claim.epoch < 0 || !regions_.count(claim.owner)) continue;
    if (highest == highest_claims_.end()) {
      highest = highest_claims_.emplace(dotted, claim).first;
    } else if (claim.epoch > highest->second.epoch) {
      highest->second = claim;
    }
  }
  if (highest != highest_claims_.end()) {
    return {highest->second.owner, "property", highest->second.epoch};
  }
  for (auto rule = rules_.rbegin(); rule != rules_.rend(); ++rule) {
    if (std::regex_match(dotted, rule->pattern)) {
      return {rule->rule.owner, "rule " + rule->rule.match, -1};
    }
  }
  return {default_owner_, "default", -1};
}

std::vector<OwnershipRule> Ownership::rules() const {
  std::lock_guard lock(mutex_);
  std::vector<OwnershipRule> rules;
  for (const auto& rule : rules_) rules.push_back(rule.rule);
  return rules;
}

std::string Ownership::default_owner() const {
  std::lock_guard lock(mutex_);
  return default_owner_;
}

}  // namespace icewarden::lab
