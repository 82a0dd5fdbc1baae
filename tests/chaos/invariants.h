// The invariants a chaos run checks, and how often each was checked and broken (issue 12,
// item 5). Each check reads the record as etcd holds it (no fence), or what landed at the
// EffectSink, never what a replica says about itself:
//
//   one owner per table          every row names one configured region, and a (table, epoch)
//                                never names two owners over the run
//   epochs never lower           a table's epoch never goes down between two reads
//   no step run twice (journal)  a step journaled succeeded stays succeeded at that attempt
//   no step run twice (effects)  a non-idempotent step's key lands once; an idempotent step's
//                                key never lands after the journal said it succeeded
//   no effect from a deposed     an effect lands only while the leader key is a term won by
//     leader                     the very incarnation that sent it
//   no write from a deposed      a write sent to a leader while it was paused past its lease
//     leader                     never shows up in the record
//   a deposed leader stops       a leader paused past its lease exits once it runs again
// Thread-safety: every method may be called from any thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "state/types.h"
#include "tests/chaos/effect_sink.h"

namespace icewarden::chaos {

class ReplicaSet;

struct Tally {
  std::int64_t checks = 0;
  std::int64_t violations = 0;
  std::vector<std::string> examples;  // the first few distinct violations, said
};

class Invariants {
 public:
  explicit Invariants(std::vector<std::string> regions) : regions_(std::move(regions)) {}

  void ObserveOwnership(const std::vector<Ownership>& rows);
  // Every step record of one failover, read at `at`.
  void ObserveSteps(const std::vector<StepRecord>& steps, std::chrono::steady_clock::time_point at);
  // `non_idempotent`: the step ids whose action is not idempotent (their key must land once).
  void CheckEffects(const std::vector<Effect>& effects, const ReplicaSet& replicas,
                    const std::set<std::string>& non_idempotent);
  // One check of a named invariant: `ok`, or a violation described by `what`.
  void Count(const std::string& invariant, bool ok, const std::string& what = "");

  std::map<std::string, Tally> Tallies() const;
  std::int64_t Violations() const;

 private:
  std::vector<std::string> regions_;
  mutable std::mutex mu_;
  std::map<std::string, Tally> tallies_;
  std::map<std::string, Epoch> epoch_;                          // table -> last epoch seen
  std::map<std::pair<std::string, Epoch>, std::string> owner_;  // (table, epoch) -> owner
  struct Done {
    int attempt = 0;
    std::chrono::steady_clock::time_point seen;
  };
  std::map<std::string, Done> succeeded_;  // "<failover>/<step>" -> when seen succeeded
};

// The invariants' names, in the report's order.
const std::vector<std::string>& InvariantNames();

}  // namespace icewarden::chaos
