#include "tests/chaos/invariants.h"

#include <algorithm>

#include "tests/chaos/chaos_replicas.h"

namespace icewarden::chaos {
namespace {

constexpr std::size_t kExamples = 5;

}  // namespace

const std::vector<std::string>& InvariantNames() {
  static const std::vector<std::string> names{"one owner per table",
                                              "epochs never lower",
                                              "no step run twice (journal)",
                                              "no step run twice (effects)",
                                              "no effect from a deposed leader",
                                              "no write from a deposed leader",
                                              "a deposed leader stops"};
  return names;
}

void Invariants::Count(const std::string& invariant, bool ok, const std::string& what) {
  std::lock_guard lock(mu_);
  Tally& t = tallies_[invariant];
  ++t.checks;
  if (ok) return;
  ++t.violations;
  // A violation seen again on the next read is counted again but said once.
  if (t.examples.size() < kExamples &&
      std::find(t.examples.begin(), t.examples.end(), what) == t.examples.end())
    t.examples.push_back(what);
}

void Invariants::ObserveOwnership(const std::vector<Ownership>& rows) {
  std::map<std::string, int> seen;
  for (const Ownership& o : rows) ++seen[o.table.ToString()];
  for (const Ownership& o : rows) {
    const std::string table = o.table.ToString();
    const bool known = std::find(regions_.begin(), regions_.end(), o.owner) != regions_.end();
    std::string other;
    Epoch last = 0;
    {
      std::lock_guard lock(mu_);
      auto [it, fresh] = owner_.emplace(std::pair{table, o.epoch}, o.owner);
      if (!fresh && it->second != o.owner) other = it->second;
      auto e = epoch_.find(table);
      if (e != epoch_.end()) last = e->second;
      epoch_[table] = std::max(last, o.epoch);
    }
    Count("one owner per table", known && seen[table] == 1 && other.empty(),
          table + " at epoch " + std::to_string(o.epoch) + ": owner " + o.owner +
              (other.empty() ? "" : ", and " + other + " at the same epoch earlier") +
              (seen[table] == 1 ? "" : ", " + std::to_string(seen[table]) + " rows"));
    Count("epochs never lower", o.epoch >= last,
          table + " went from epoch " + std::to_string(last) + " to " + std::to_string(o.epoch));
  }
}

void Invariants::ObserveSteps(const std::vector<StepRecord>& steps,
                              std::chrono::steady_clock::time_point at) {
  for (const StepRecord& s : steps) {
    if (s.section == "compensate") continue;  // undoing a step is not running it again
    const std::string key = s.IdempotencyKey();
    std::optional<Done> before;
    {
      std::lock_guard lock(mu_);
      auto it = succeeded_.find(key);
      if (it != succeeded_.end()) before = it->second;
      if (!before && s.state == StepState::kSucceeded) succeeded_[key] = Done{s.attempt, at};
    }
    if (!before) continue;
    const bool same = s.attempt == before->attempt &&
                      (s.state == StepState::kSucceeded || s.state == StepState::kCompensating ||
                       s.state == StepState::kCompensated);
    Count("no step run twice (journal)", same,
          key + " was journaled succeeded at attempt " + std::to_string(before->attempt) +
              ", later " + StepStateName(s.state) + " at attempt " + std::to_string(s.attempt));
  }
}

void Invariants::CheckEffects(const std::vector<Effect>& effects, const ReplicaSet& replicas,
                              const std::set<std::string>& non_idempotent) {
  std::map<std::string, int> landings;
  for (const Effect& e : effects) {
    const int n = ++landings[e.idempotency_key];
    const std::string step = e.idempotency_key.substr(e.idempotency_key.rfind('/') + 1);
    if (non_idempotent.count(step)) {
      Count("no step run twice (effects)", n == 1,
            e.idempotency_key + " (not idempotent) landed " + std::to_string(n) + " times");
    } else {
      std::optional<Done> done;
      {
        std::lock_guard lock(mu_);
        auto it = succeeded_.find(e.idempotency_key);
        if (it != succeeded_.end()) done = it->second;
      }
      Count("no step run twice (effects)", !done || e.landed_at <= done->seen,
            e.idempotency_key + " landed again after the journal said it succeeded");
    }
    const std::string owner = e.term == 0 ? "" : replicas.Attribute(e.term, e.holder);
    Count("no effect from a deposed leader", !owner.empty() && owner == e.sender,
          e.idempotency_key + " from " + e.sender + " landed while the leader key was " +
              (e.term == 0 ? "absent" + (e.holder.empty() ? "" : " (" + e.holder + ")")
                           : "term " + std::to_string(e.term) + " of " +
                                 (owner.empty() ? e.holder + " (no incarnation)" : owner)));
  }
}

std::map<std::string, Tally> Invariants::Tallies() const {
  std::lock_guard lock(mu_);
  return tallies_;
}

std::int64_t Invariants::Violations() const {
  std::lock_guard lock(mu_);
  std::int64_t n = 0;
  for (const auto& [name, t] : tallies_) n += t.violations;
  return n;
}

}  // namespace icewarden::chaos
