// Failover guards (DESIGN.md rule 3): what must hold for a failover to be approved and,
// again, just before it promotes. Pure: EvaluateGuards reads a GuardSnapshot gathered by the
// caller and returns one result per guard, each with a sentence saying why it passed or
// failed, so the same check is shown at proposal, enforced at approval and enforced again
// between fenced and promoting.
//
// Guards, in the order they are reported:
//   leadership       this daemon may act (a single SQLite replica always leads)
//   target_healthy   the region gaining ownership is healthy and neither fenced nor in
//                    maintenance
//   source_healthy   (switchover only) the old owner is healthy: the demotion token is read
//                    from it and its writers are fenced through it
//   rpo              every table of the scope trails its owner by at most max_staleness in
//                    the target (the runbook's max_lag guard may lower it); a table whose
//                    owner cannot be read counts with its bound (last known lag + the time
//                    since it was measured); a table with no bound fails. Waived only by
//                    accept_data_loss with a reason.
//   no_overlap       no other active failover touches a table of the scope
//   cooldown         the scope's last failover ended more than `cooldown` ago, or was
//                    acknowledged; an admin may override with a reason. "Ago" is by the
//                    state store's clock: the age of the failover's cooldown timer
//                    (StateStore::StartTimer, started just before its end was written), never
//                    a replica's clock against another's stamp
//   divergence       the target holds no commit the owner never had (and no other table
//                    under the same name); the reason names each table and its snapshots.
//                    Waived only by accept_data_loss with a reason (those commits are lost)
//   best_candidate   with more than two regions, no other healthy region is further ahead
//                    for the scope than the target; overridden only with a reason
// Thread-safety: pure function over plain values.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "runbooks/runbook.h"
#include "state/types.h"

namespace icewarden {

struct LagReport;

struct GuardResult {
  std::string guard{};  // "rpo"
  bool ok = false;
  bool waived = false;  // failed on its own, but accepted (accept_data_loss, override, force)
  std::string reason{};
};

// Who asked to set a guard aside, and why. An empty reason waives nothing.
struct GuardWaivers {
  std::string accept_data_loss{};   // rpo and divergence (an approver's reason)
  std::string cooldown_override{};  // cooldown (an admin's reason)
  std::string force_candidate{};    // best_candidate
};

// Each scope table's position in GuardSnapshot::scope_tables.
using ScopeIndex = std::unordered_map<TableIdent, std::size_t, TableIdentHash>;

struct GuardSnapshot {
  UnixMillis now = 0;
  Failover failover{};                     // id (may be empty at proposal), kind, scope, from, to
  std::vector<Region> regions{};           // every region's recorded health
  std::vector<TableIdent> scope_tables{};  // the scope's tables, owned by failover.from
  // scope_tables indexed, when the listing kept one (built once per listing, not per check);
  // null: the guards index it themselves.
  std::shared_ptr<const ScopeIndex> scope_index{};
  // The failovers that last moved a table of the scope (Ownership::failover_id): the way
  // back after a failover touches its tables whatever either scope says.
  std::set<std::string> scope_moved_by{};
  std::shared_ptr<const LagReport> lag{};  // the latest lag round; null before the first
  std::vector<Failover> others{};          // every other failover: active ones and recent ones
  std::chrono::milliseconds max_staleness{0};
  std::chrono::milliseconds cooldown{0};
  std::vector<RunbookGuard> runbook_guards{};  // may tighten max_staleness and cooldown
  // The failovers whose cooldown timer still runs ("cooldown/<id>"), with its age by the
  // store's clock: what the cooldown guard reads instead of Failover::updated_at.
  std::map<std::string, std::chrono::milliseconds> cooldown_elapsed{};
  GuardWaivers waivers{};
};

std::vector<GuardResult> EvaluateGuards(const GuardSnapshot& snapshot);

// True when every result passed or was waived.
bool GuardsPass(const std::vector<GuardResult>& results);
// "rpo: ...; cooldown: ..." for the failures that were not waived.
std::string GuardFailures(const std::vector<GuardResult>& results);
// [{guard, ok, waived, reason}]
nlohmann::json GuardResultsJson(const std::vector<GuardResult>& results);

// The cooldown a failover of a route waits: the policy's, lengthened by the runbook's cooldown
// guard (`period`) when it asks for more.
std::chrono::milliseconds CooldownOf(std::chrono::milliseconds policy,
                                     const std::vector<RunbookGuard>& runbook_guards);

// The store timer that measures a failover's cooldown: started by the runner just before it
// writes the failover's end (completed or rolled_back), for the longest cooldown any route may
// ask, so a crash between the two leaves a timer that runs out harmlessly.
inline std::string CooldownTimerName(const std::string& failover_id) {
  return "cooldown/" + failover_id;
}
inline constexpr const char* kCooldownTimerPrefix = "cooldown/";

// Whether two failovers' scopes can touch a common table (conservative: owner scopes of the
// same region, or any pattern matching a table of the other's scope).
bool ScopesOverlap(const Failover& a, const std::vector<TableIdent>& a_tables, const Failover& b);

}  // namespace icewarden
