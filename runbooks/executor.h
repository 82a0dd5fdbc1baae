// RunbookExecutor: carries a failover through its runbook, one journaled step at a time.
//
// Drive() reads the failover and its step journal and does whatever the current phase
// calls for, until the failover reaches a phase that needs a person (proposed, fencing
// without accepted evidence, needs_attention) or an end (completed, rolled_back, aborted):
//
//   approved   -> begin_fencing, run the fence steps; when every one succeeded and policy
//                 accepts evidence, confirm fencing (kEvidenceSteps when a fence.catalog_quiet
//                 ran, else kGatewayClosed when a gateway.fence did); otherwise stop and wait
//                 for an operator's confirmation. A fence failure never leads to promotion.
//   fenced     -> begin_promotion (the machine refuses it without approval and fencing)
//
// Stopping: with ExecutorOptions::stop_requested, Drive checks before every step and after
// every backoff and returns kUnavailable once it is true; the step in flight finishes or
// times out first, and its outcome is journaled.
//   promoting  -> run the promote steps, then promoted
//   verifying  -> run the verify steps, then verified (completed)
//   failed     -> begin_compensation
//   compensating -> undo every succeeded step in reverse order of completion (the action's
//                 own Compensate, else the step's inline compensate action, else skipped with
//                 the reason journaled), then run the runbook's compensate section in order;
//                 compensated (rolled_back) or compensation_failed (needs_attention). The first
//                 failed compensation stops the rest: undoing earlier steps on top of a failed
//                 undo could make things worse, so a person decides.
//
// Journal protocol (DESIGN.md rule 5), for every attempt of every step:
//   before Run:  PutStep{state running (kCompensating for an undo), attempt n, started_at}
//   after Run:   PutStep{succeeded (kCompensated for an undo) | failed | pending (another
//                attempt follows), reason, finished_at}
// The step id is the runbook step's id; an undo of step X is its own record "X.compensate"
// in section "compensate", so the idempotency key of an action run is failover id + "/" +
// record id. result_json is {"params": <masked params>, "detail": <the action's result>,
// "completion": <n>} — only the masked copy of the params is ever journaled, and
// "completion" numbers succeeded steps in the order they finished (what compensation
// reverses, also across parallel groups and restarts).
//
// Resume: a step journaled succeeded (or failed) is never run again; pending means a retry
// was due; running means the executor stopped while the action was in flight: it is run
// again only when its action is idempotent. Otherwise promote/verify/compensating go to
// needs_attention (in_flight_unknown) with the reason "step X (action K) was in flight when
// the executor stopped and K is not idempotent: check its effect by hand"; in fencing,
// where the machine has no such transition, the step is journaled failed with that reason
// and the failover waits for an operator's fencing confirmation.
//
// Outcomes: kUnknown from an action (and any result that arrives after the step's
// deadline, journaled as "timed out after Ns") may have taken effect: for an idempotent
// action it is retried like a failure, for a non-idempotent one it is final (failed, never
// retried). Retries back off exponentially with jitter (StepRetry).
//
// Timeouts: each Run gets ctx.deadline = now + step.timeout and a Cancellation that a
// watchdog sets at the deadline. The executor waits for Run to return: the Action contract
// says it returns promptly once cancelled.
//
// Thread-safety: Drive may be called concurrently for different failovers. Steps of one
// parallel group run on their own threads.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <vector>

#include "actions/action.h"
#include "runbooks/runbook.h"
#include "runbooks/template.h"
#include "state/failover_machine.h"
#include "state/state_store.h"

namespace icewarden {

class DeadlineWatchdog;

// How the executor moves a failover: applies one event and persists the result (with its
// audit event) before returning. The orchestrator implements it (Orchestrator::ApplyToFailover)
// so that runbooks/ does not depend on orchestrator/.
class FailoverTransitions {
 public:
  virtual ~FailoverTransitions() = default;
  // A refusal is a decision with accepted == false; an error Status means the failover could
  // not be read or written (Drive stops and returns it).
  virtual Result<FailoverDecision> Apply(const std::string& failover_id,
                                         const FailoverInput& input) = 0;
};

struct ExecutorOptions {
  std::string actor = "executor";  // FailoverInput::actor of every event the executor sends
  // The policy the transitions apply: the executor confirms fencing by evidence only when
  // policy.accepted_fencing holds kEvidenceSteps or kGatewayClosed.
  FailoverPolicy policy{};
  // Waits between attempts. Empty: std::this_thread::sleep_for.
  std::function<void(std::chrono::milliseconds)> sleep{};
  std::uint64_t jitter_seed = 0;  // 0: from std::random_device
  // Asked before every step and after every backoff; once true, Drive returns kUnavailable
  // ("stopping") without starting anything more. Empty: never.
  std::function<bool()> stop_requested{};
};

// What happened to one step (or one undo) during a Drive, or what the journal says of it.
struct StepOutcome {
  std::string step_id{};  // the journal's record id: "p1", "p1.compensate"
  std::string section{};  // fence | promote | verify | compensate
  std::string action{};
  StepState state = StepState::kPending;  // as journaled
  int attempt = 0;
  bool from_journal = false;  // an earlier Drive recorded it; not run this time
  bool skipped = false;       // an undo with nothing to run
  std::string reason{};
};

struct ExecutionReport {
  std::string failover_id{};
  FailoverPhase phase = FailoverPhase::kProposed;  // where Drive stopped
  std::vector<StepOutcome> steps{};                // in the order Drive dealt with them
  std::vector<std::string> transitions{};          // reason of every transition it made
  // One sentence: "fo-1 completed: 2 of 2 verify steps succeeded",
  // "fo-1 fencing: waiting for an operator's fencing confirmation: fence step f2 ... failed: ...".
  std::string summary{};
};

class RunbookExecutor {
 public:
  // `store`, `actions` and `transitions` must outlive the executor.
  RunbookExecutor(StateStore& store, const ActionRegistry& actions,
                  FailoverTransitions& transitions, std::shared_ptr<Clock> clock,
                  ExecutorOptions options = {});
  ~RunbookExecutor();
  RunbookExecutor(const RunbookExecutor&) = delete;
  RunbookExecutor& operator=(const RunbookExecutor&) = delete;

  // Drives the failover as far as it can go without a person (see above). Safe to call
  // again at any time, including after a crash: it resumes from the journal. Errors are
  // only the store's and the transitions' (kNotFound for an unknown failover); every
  // outcome of the runbook itself is in the report.
  Result<ExecutionReport> Drive(const std::string& failover_id, const Runbook& runbook,
                                const TemplateBindings& bindings);

 private:
  friend class ExecutorRun;
  std::chrono::milliseconds Backoff(const StepRetry& retry, int failed_attempts);
  void Sleep(std::chrono::milliseconds d);
  bool StopRequested() const { return options_.stop_requested && options_.stop_requested(); }
  static Status StoppedStatus() {
    return Status::Unavailable(
        "stopping: the daemon is shutting down; a restart resumes from "
        "the journal");
  }

  StateStore& store_;
  const ActionRegistry& actions_;
  FailoverTransitions& transitions_;
  std::shared_ptr<Clock> clock_;
  ExecutorOptions options_;
  std::unique_ptr<DeadlineWatchdog> watchdog_;
  std::mutex rng_mu_;
  std::mt19937_64 rng_;
};

}  // namespace icewarden
