// ExecutorRun: the state of one RunbookExecutor::Drive call (internal to runbooks/).
//
// Holds the failover as last persisted, the step journal as read at the start and updated
// with every write, and the report being built. RunSection and Compensate implement the
// journal protocol described in executor.h; the phase loop lives in executor.cpp.
//
// Thread-safety: one Drive's thread, plus one thread per step of a parallel group while the
// group runs; journal_, completion_ and report_.steps are guarded by mu_.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "runbooks/executor.h"

namespace icewarden {

// How a section (or the compensation) ended.
struct SectionOutcome {
  enum class Kind {
    kDone,             // every step ran; some may have failed with on_failure continue
    kFailed,           // a step failed and stops the section; `reason` says which and why
    kInFlightUnknown,  // a non-idempotent step was in flight at a crash; `in_flight` holds it
  };
  Kind kind = Kind::kDone;
  std::string reason{};
  bool all_succeeded = true;  // no step failed, not even with on_failure continue
  int succeeded = 0;          // steps of the section that ended succeeded
  int skipped = 0;            // undos with nothing to run
  std::optional<StepRecord> in_flight{};
};

// One action invocation to journal: a runbook step, or the undo of one.
struct StepJob {
  std::string record_id{};
  std::string section{};
  std::string action_kind{};
  Action* action = nullptr;      // nullptr: unknown kind, journaled as a failure
  bool undo_via_action = false;  // call action->Compensate(params, run_detail)
  nlohmann::json params = nlohmann::json::object();  // templates unresolved
  nlohmann::json run_detail = nlohmann::json::object();
  std::chrono::milliseconds timeout{60000};
  StepRetry retry{};
  StepState running_state = StepState::kRunning;
  StepState done_state = StepState::kSucceeded;
  int first_attempt = 1;  // > 1 when resuming
  // What the action captured before an earlier attempt (from the journal); null: nothing yet.
  nlohmann::json before = nullptr;
};

class ExecutorRun {
 public:
  ExecutorRun(RunbookExecutor& executor, Failover failover, const Runbook& runbook,
              const TemplateBindings& bindings, const std::vector<StepRecord>& journal);

  const Failover& failover() const { return failover_; }
  ExecutionReport& report() { return report_; }
  const Runbook& runbook() const { return runbook_; }

  // Sends one executor event. True when accepted (failover() then holds the persisted
  // result); false when refused (refusal() says why, and failover() is re-read).
  Result<bool> Transition(FailoverEvent event, const std::string& reason,
                          FencingKind fencing_kind = FencingKind::kEvidenceSteps);
  const std::string& refusal() const { return refusal_; }

  // Runs a section's steps under the journal protocol, skipping what the journal says is
  // done. `watch_phase`: stop before each batch if the stored failover left that phase
  // (an operator's abort during fencing).
  Result<SectionOutcome> RunSection(RunbookSection section, bool watch_phase = false);
  // Undoes the succeeded steps in reverse order of completion, then runs the compensate
  // section.
  Result<SectionOutcome> Compensate();
  // Journals a step that was in flight at a crash as failed with `reason`.
  Status RecordInFlightFailed(StepRecord record, const std::string& reason);

  // Succeeded fence steps, for the evidence summary.
  std::vector<StepRecord> SucceededSteps(const std::string& section);

 private:
  // Runs a job under the journal protocol: retries, backoff, timeout. The final record is
  // succeeded/compensated or failed; an error only when the journal could not be written.
  Result<StepRecord> RunJob(const StepJob& job);
  // One invocation with a deadline and a watchdog; `before` becomes ctx.before_json.
  ActionResult Invoke(const StepJob& job, const nlohmann::json& params,
                      const std::string& record_id, const nlohmann::json& before);
  // The action's Capture under the step's deadline; null when it captured nothing.
  Result<nlohmann::json> CaptureBefore(const StepJob& job, const nlohmann::json& params);
  ActionContext Context(const StepJob& job, const std::string& record_id,
                        const Cancellation& cancel) const;
  // Runs the jobs (in parallel when more than one) and returns their final records.
  Result<std::vector<StepRecord>> RunJobs(const std::vector<StepJob>& jobs);
  Status Journal(const StepRecord& record);
  void Note(const StepRecord& record, bool from_journal, bool skipped = false);
  std::optional<StepRecord> Recorded(const std::string& record_id);
  StepRecord NewRecord(const StepJob& job) const;

  RunbookExecutor& ex_;
  Failover failover_;
  const Runbook& runbook_;
  const TemplateBindings& bindings_;
  ExecutionReport report_;
  std::string refusal_;

  std::mutex mu_;
  std::map<std::string, StepRecord> journal_;
  std::vector<std::string> journal_order_;  // record ids in the order first journaled
  std::int64_t completion_ = 0;             // the highest completion number journaled
};

// "step p2 (action dns.rfc2136)"
std::string DescribeStep(const std::string& record_id, const std::string& action_kind);
// "60s", "1.5s", "0.05s"
std::string FormatSeconds(std::chrono::milliseconds d);

}  // namespace icewarden
