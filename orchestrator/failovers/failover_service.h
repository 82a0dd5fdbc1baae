// FailoverService: the commands that move a failover, as people and the daemon send them:
// propose (or a dry run), approve, confirm fencing, abort, acknowledge. Each command reads
// what it needs, checks the guards where DESIGN.md says so, and either records its effect
// (the failover machine's transition with its audit event, in one durable write) or refuses
// with a reason that names the guard or the phase. Nothing here runs a runbook: an accepted
// approval or confirmation wakes the FailoverRunner (failover_runner.h), which does.
//
// Status codes of a refusal, which the API maps to HTTP: kInvalidArgument (400: the input is
// wrong), kNotFound (404), kFailedPrecondition (409: a guard, the phase, a changed plan),
// kConflict (409: the failover changed concurrently), kPermissionDenied (403: an override
// only an admin may give).
// Thread-safety: every method may be called from any thread (state is in the store).
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "orchestrator/failovers/guards.h"
#include "orchestrator/watch/region_quorum.h"
#include "runbooks/template.h"
#include "state/failover_machine.h"
#include "state/status.h"
#include "state/types.h"

namespace icewarden {

class ActionRegistry;
class Clock;
class LiveView;
class Orchestrator;
class RouteTable;
class StateStore;
struct Config;
struct LoadedRoute;

// Who sends a command: the token's name, what kind of actor, and from where.
struct Caller {
  std::string name{};
  ActorKind kind = ActorKind::kOperator;
  std::string source{};  // "127.0.0.1:53412"
};

struct ProposeRequest {
  FailoverKind kind = FailoverKind::kFailover;
  std::string to{}, scope{}, reason{};
  std::string from{};  // optional: derived from the scope's owner
  bool dry_run = false;
  // A failback's proposer may accept, with a reason, that the target's divergent commits are
  // lost; without it a failback onto a diverged region is refused. An approver must still
  // accept the loss at approval (ApproveRequest::accept_data_loss).
  std::string accept_data_loss{};
  std::string failback_of{};  // set by Failback: the failover this one undoes
  // Optional: the route by name, which must cover the proposal (a drill runs the route it
  // names even when another route, listed first, would match too). Empty: the first match.
  std::string route{};
};

// A switchover back to the region a scope last left (`icewarden failback`).
struct FailbackRequest {
  std::string scope{};  // the scope of the failover to undo, or failover:ID
  std::string reason{};
  std::string accept_data_loss{};
  bool dry_run = false;
};

struct ApproveRequest {
  std::string plan_hash{};  // the plan the approver was shown; required
  std::string reason{};
  std::string accept_data_loss{};   // waives rpo
  std::string cooldown_override{};  // admin only; waives cooldown
  std::string force_candidate{};    // waives best_candidate
};

// The answer to a command: ok, or the refusal. `body` is what the API returns either way
// (the failover, its plan and guard results; on a phase refusal the events it would accept).
struct CommandOutcome {
  Status status = Status::Ok();
  std::string decision{};  // one sentence, logged and returned
  nlohmann::json body = nlohmann::json::object();
};

struct FailoverServiceDeps {
  const Config* config = nullptr;
  const RouteTable* routes = nullptr;
  StateStore* store = nullptr;
  Orchestrator* orchestrator = nullptr;
  const LiveView* live = nullptr;  // may be null: no lag known, no silence
  std::shared_ptr<Clock> clock;
  const ActionRegistry* actions = nullptr;                            // for plans
  std::function<std::optional<std::string>(const std::string&)> env;  // ${env.NAME}
  std::function<void(const std::string& failover_id)> wake;           // may be empty
  // With several replicas (state.backend etcd): every replica's view of the regions, this
  // one's first (orchestrator/cluster/). Set, a region's silence is evidence only when a
  // majority of state.etcd.replicas agree (orchestrator/watch/region_quorum.h); empty, `live` is
  // the one vantage point.
  std::function<std::vector<ReplicaView>()> replica_views;
};

class FailoverService {
 public:
  explicit FailoverService(FailoverServiceDeps deps);

  CommandOutcome Propose(const Caller& caller, const ProposeRequest& request);
  // Finds the newest completed failover of `request.scope` whose tables it moved are still
  // owned where it moved them, and proposes a switchover of exactly those tables
  // (scope failover:ID) back to the region they left. Refused (kNotFound) when there is none.
  CommandOutcome Failback(const Caller& caller, const FailbackRequest& request);
  CommandOutcome Approve(const Caller& caller, const std::string& id,
                         const ApproveRequest& request);
  CommandOutcome ConfirmFencing(const Caller& caller, const std::string& id,
                                const std::string& reason);
  CommandOutcome Abort(const Caller& caller, const std::string& id, const std::string& reason);
  CommandOutcome Ack(const Caller& caller, const std::string& id, const std::string& comment);

  // The guards as they stand now for a stored failover (readiness, `failover show`), with
  // the waivers its approval recorded.
  Result<std::vector<GuardResult>> CurrentGuards(const Failover& failover);

  // The last check between fenced and promoting (the runner calls it from the executor's
  // begin_promotion): nullopt when the guards pass (the RPO at promotion is recorded in
  // `rpo_json`), else the failures, after the hold has been recorded on the failover.
  std::optional<std::string> CheckBeforePromotion(const Failover& failover, std::string* rpo_json);

  // old_region_unreachable evidence for a failover waiting in fencing: the evidence JSON when
  // policy accepts the kind and the old region has given no answer at all for
  // policies.unreachable_for; nullopt (with the reason in *why) otherwise.
  std::optional<std::string> UnreachableEvidence(const Failover& failover, std::string* why);

  const Config& config() const { return *d_.config; }
  // The longest cooldown any route's guards may ask (the policy's, or a runbook's longer
  // period): the ttl of a failover's cooldown timer, started before its end is written.
  std::chrono::milliseconds LongestCooldown() const;
  // The route and runbook of a stored failover (by its recorded route name).
  const LoadedRoute* RouteOf(const Failover& failover) const;
  // What the runbook's templates resolve against for this failover: its id, regions, scope,
  // the route's parameters bound by the runbook's declarations, the daemon's environment.
  Result<TemplateBindings> BindingsOf(const Failover& failover, const LoadedRoute& route) const;
  // The plan (RenderPlanJson) and its hash for a failover as it would run now.
  Result<std::pair<nlohmann::json, std::string>> PlanOf(const Failover& failover,
                                                        const LoadedRoute& route) const;

 private:
  // Failovers considered for the cooldown and overlap guards.
  static constexpr std::size_t kRecentFailovers = 200;
  // Tables a scope may hold: a bound on what one proposal reads from the store.
  static constexpr std::size_t kMaxScopeTables = 1'000'000;

  Result<GuardSnapshot> Snapshot(const Failover& failover);
  // Snapshot with what the failover's approval waived (cooldown, best_candidate).
  Result<GuardSnapshot> SnapshotWithWaivers(const Failover& failover);
  CommandOutcome Refuse(const Status& status, nlohmann::json body = nlohmann::json::object());
  CommandOutcome FromDecision(const Result<FailoverDecision>& d, const std::string& id);
  Status AppendGuardCheck(const std::string& id, const std::string& point,
                          const std::vector<GuardResult>& results, const Caller& caller);

  // The tables of a scope owned by one region, as last listed, and the store's ownership
  // revision then. Each guard check reads the store's revision and lists again only when it
  // moved: at 10,000 tables the listing was most of a check, and between an approval and the
  // promotion nothing usually moves.
  struct ScopeListing {
    std::string scope, owner;
    std::int64_t revision = 0;
    std::vector<TableIdent> tables;
    std::shared_ptr<const ScopeIndex> index;  // of `tables`
    std::set<std::string> moved_by;           // the failovers that last moved them
  };
  Result<std::shared_ptr<const ScopeListing>> ListScope(const Failover& failover);

  FailoverServiceDeps d_;
  std::mutex listing_mu_;
  std::shared_ptr<const ScopeListing> listing_;  // guarded by listing_mu_
};

// Every reason a person gives (a proposal, an approval, a fence or unfence) goes into the audit
// log: at most this long. `required`: empty is refused too.
inline constexpr std::size_t kMaxReasonBytes = 4096;
Status CheckReason(const std::string& what, const std::string& reason, bool required);

// The hash a plan is approved by: sha256 over kind, scope, from, to, the runbook's hash
// and the bound parameters.
std::string PlanHash(const Failover& failover, const std::string& runbook_hash,
                     const nlohmann::json& bound_parameters);

}  // namespace icewarden
