// Ownership: which region owns (accepts the writes of, and replicates out) each lab table.
// Three sources, strongest first:
//   1. a claim in the table's properties, icewarden.owner=<region> with icewarden.epoch=<n>, set
//      in any region; the claim with the highest epoch ever seen for the table wins (epochs never
//      go down, so a stale region still carrying an old claim cannot take the table back);
//   2. the last rule whose regex (ECMAScript, full match) matches the dotted table name;
//   3. the default owner.
// This is how icewarden's ownership transfer flips the replication direction in the lab.
//
// Thread-safety: all methods are safe to call from any thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "examples/lab/lab_status.h"
#include "examples/lab/table_ident.h"

namespace icewarden::lab {

struct OwnershipRule {
  std::string match;
  std::string owner;
};

struct OwnershipClaim {
  std::string owner;   // property icewarden.owner ("" when absent)
  int64_t epoch = -1;  // property icewarden.epoch (-1 when absent or not a number)
};

struct OwnerDecision {
  std::string owner;
  std::string source;  // "property", "rule <match>" or "default"
  int64_t epoch = -1;  // the winning claim's epoch, for "property"
};

class Ownership {
 public:
  Ownership(std::set<std::string> regions, std::string default_owner);

  // Adds a rule, or moves an existing rule with the same match to the end with the new owner.
  // Fails on an unknown region or an invalid regex.
  LabStatus SetRule(const std::string& match, const std::string& owner);
  LabStatus SetDefaultOwner(const std::string& owner);

  // Decides the owner of `table` from its claims in every region (and claims seen before).
  OwnerDecision Resolve(const TableIdent& table, const std::vector<OwnershipClaim>& claims);

  std::vector<OwnershipRule> rules() const;
  std::string default_owner() const;
  // Bumped by every SetRule and SetDefaultOwner: a change of owner no table's head shows.
  uint64_t rules_version() const { return rules_version_; }

 private:
  struct CompiledRule {
    OwnershipRule rule;
    std::regex pattern;
  };

  const std::set<std::string> regions_;
  mutable std::mutex mutex_;
  std::string default_owner_;
  std::vector<CompiledRule> rules_;
  std::map<std::string, OwnershipClaim> highest_claims_;  // by dotted table name
  std::atomic<uint64_t> rules_version_{0};
};

}  // namespace icewarden::lab
