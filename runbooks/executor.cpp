#include "runbooks/executor.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <string_view>
#include <thread>

#include "runbooks/executor_run.h"
#include "runbooks/executor_watchdog.h"

namespace icewarden {
namespace {

bool Accepts(const FailoverPolicy& policy, FencingKind kind) {
  return std::find(policy.accepted_fencing.begin(), policy.accepted_fencing.end(), kind) !=
         policy.accepted_fencing.end();
}

bool Ran(const std::vector<StepRecord>& steps, std::string_view action) {
  return std::any_of(steps.begin(), steps.end(),
                     [&](const StepRecord& s) { return s.action == action; });
}

// Which evidence fence steps that all succeeded are, by what they were: a quiet window on the
// old owner, else the gateways' closure; nullopt when policy accepts neither. The transitions
// check the evidence itself (FailoverRunner::Apply); this only picks what to claim.
std::optional<FencingKind> EvidenceOf(const FailoverPolicy& policy,
                                      const std::vector<StepRecord>& fence) {
  const bool steps = Accepts(policy, FencingKind::kEvidenceSteps);
  const bool gateways = Accepts(policy, FencingKind::kGatewayClosed);
  if (steps && Ran(fence, "fence.catalog_quiet")) return FencingKind::kEvidenceSteps;
  if (gateways && Ran(fence, "gateway.fence")) return FencingKind::kGatewayClosed;
  if (steps) return FencingKind::kEvidenceSteps;  // refused with what it lacks
  if (gateways) return FencingKind::kGatewayClosed;
  return std::nullopt;
}

std::string Plural(std::size_t n, const std::string& what) {
  return std::to_string(n) + " " + what + (n == 1 ? "" : "s");
}

// "all 3 fence steps succeeded: f1 (fence.http): writes refused; f2 (...): ..."
std::string EvidenceSummary(const std::vector<StepRecord>& fence) {
  std::string s = "all " + Plural(fence.size(), "fence step") + " succeeded";
  for (std::size_t i = 0; i < fence.size(); ++i) {
    s += (i == 0 ? ": " : "; ") + fence[i].step_id + " (" + fence[i].action +
         "): " + fence[i].reason;
  }
  return s;
}

}  // namespace

RunbookExecutor::RunbookExecutor(StateStore& store, const ActionRegistry& actions,
                                 FailoverTransitions& transitions, std::shared_ptr<Clock> clock,
                                 ExecutorOptions options)
    : store_(store),
      actions_(actions),
      transitions_(transitions),
      clock_(std::move(clock)),
      options_(std::move(options)),
      watchdog_(std::make_unique<DeadlineWatchdog>()),
      rng_(options_.jitter_seed != 0 ? options_.jitter_seed : std::random_device{}()) {}

RunbookExecutor::~RunbookExecutor() = default;

std::chrono::milliseconds RunbookExecutor::Backoff(const StepRetry& retry, int failed_attempts) {
  double base = static_cast<double>(retry.initial_backoff.count()) *
                std::pow(retry.multiplier, std::max(0, failed_attempts - 1));
  base = std::min(base, static_cast<double>(retry.max_backoff.count()));
  double factor = 1.0;
  if (retry.jitter > 0) {
    std::lock_guard lock(rng_mu_);
    factor += std::uniform_real_distribution<double>(-retry.jitter, retry.jitter)(rng_);
  }
  return std::chrono::milliseconds(std::max<std::int64_t>(0, std::llround(base * factor)));
}

void RunbookExecutor::Sleep(std::chrono::milliseconds d) {
  if (options_.sleep) {
    options_.sleep(d);
  } else {
    std::this_thread::sleep_for(d);
  }
}

Result<ExecutionReport> RunbookExecutor::Drive(const std::string& failover_id,
                                               const Runbook& runbook,
                                               const TemplateBindings& bindings) {
  Result<std::optional<Failover>> found = store_.GetFailover(failover_id);
  if (!found.ok()) return found.status();
  if (!found->has_value()) return Status::NotFound("no failover " + failover_id);
  Result<std::vector<StepRecord>> journal = store_.ListSteps(failover_id);
  if (!journal.ok()) return journal.status();

  ExecutorRun run(*this, **found, runbook, bindings, *journal);
  const std::string& id = failover_id;
  // Ends the Drive: the report's phase is the failover's, its summary one sentence.
  auto stop = [&](const std::string& why) -> Result<ExecutionReport> {
    ExecutionReport& report = run.report();
    report.phase = run.failover().phase;
    report.summary = id + " " + FailoverPhaseName(report.phase) + ": " + why;
    return report;
  };
  // Sends an event; on refusal ends the Drive with the machine's reason.
  std::string last_reason;
  auto move = [&](FailoverEvent e, const std::string& reason,
                  FencingKind kind = FencingKind::kEvidenceSteps) -> Result<bool> {
    Result<bool> accepted = run.Transition(e, reason, kind);
    if (accepted.ok() && *accepted) last_reason = reason;
    return accepted;
  };

  for (;;) {
    const FailoverPhase phase = run.failover().phase;
    switch (phase) {
      case FailoverPhase::kProposed:
        return stop("waiting for approval");

      case FailoverPhase::kApproved: {
        Result<bool> ok =
            move(FailoverEvent::kBeginFencing, "runbook " + runbook.name + ": running " +
                                                   Plural(runbook.fence.size(), "fence step"));
        if (!ok.ok()) return ok.status();
        if (!*ok) return stop(run.refusal());
        break;
      }

      case FailoverPhase::kFencing: {
        Result<SectionOutcome> fence = run.RunSection(RunbookSection::kFence, true);
        if (!fence.ok()) return fence.status();
        if (run.failover().phase != FailoverPhase::kFencing) return stop(fence->reason);
        const std::string waiting = "waiting for an operator's fencing confirmation: ";
        if (fence->kind == SectionOutcome::Kind::kInFlightUnknown) {
          if (Status s = run.RecordInFlightFailed(*fence->in_flight, fence->reason); !s.ok())
            return s;
          return stop(waiting + fence->reason);
        }
        if (fence->kind == SectionOutcome::Kind::kFailed) return stop(waiting + fence->reason);
        if (!fence->all_succeeded)
          return stop(waiting + "not every fence step succeeded, so they are no evidence");
        const std::vector<StepRecord> fenced = run.SucceededSteps("fence");
        const std::optional<FencingKind> kind = EvidenceOf(options_.policy, fenced);
        if (!kind) return stop(waiting + "policy does not accept fence steps as evidence");
        Result<bool> ok = move(FailoverEvent::kConfirmFencing, EvidenceSummary(fenced), *kind);
        if (!ok.ok()) return ok.status();
        if (!*ok) return stop(run.refusal());
        break;
      }

      case FailoverPhase::kFenced: {
        Result<bool> ok = move(FailoverEvent::kBeginPromotion,
                               "runbook " + runbook.name + ": running " +
                                   Plural(runbook.promote.size(), "promote step"));
        if (!ok.ok()) return ok.status();
        if (!*ok) return stop(run.refusal());
        break;
      }

      case FailoverPhase::kPromoting:
      case FailoverPhase::kVerifying: {
        const bool promoting = phase == FailoverPhase::kPromoting;
        Result<SectionOutcome> out =
            run.RunSection(promoting ? RunbookSection::kPromote : RunbookSection::kVerify);
        if (!out.ok()) return out.status();
        Result<bool> ok = false;
        if (out->kind == SectionOutcome::Kind::kInFlightUnknown) {
          // The transition first: a crash before the step is rewritten still stops here.
          ok = move(FailoverEvent::kInFlightUnknown, out->reason);
          if (ok.ok() && *ok) {
            if (Status s = run.RecordInFlightFailed(*out->in_flight, out->reason); !s.ok())
              return s;
          }
        } else if (out->kind == SectionOutcome::Kind::kFailed) {
          ok = move(FailoverEvent::kStepFailed, out->reason);
        } else {
          const std::size_t n = promoting ? runbook.promote.size() : runbook.verify.size();
          std::string what = promoting ? "promote step" : "verify step";
          std::string reason =
              std::to_string(out->succeeded) + " of " + Plural(n, what) + " succeeded";
          ok = move(promoting ? FailoverEvent::kPromoted : FailoverEvent::kVerified, reason);
        }
        if (!ok.ok()) return ok.status();
        if (!*ok) return stop(run.refusal());
        break;
      }

      case FailoverPhase::kFailed: {
        Result<bool> ok = move(FailoverEvent::kBeginCompensation,
                               "undoing the succeeded steps in reverse order, then " +
                                   Plural(runbook.compensate.size(), "compensate step"));
        if (!ok.ok()) return ok.status();
        if (!*ok) return stop(run.refusal());
        break;
      }

      case FailoverPhase::kCompensating: {
        Result<SectionOutcome> out = run.Compensate();
        if (!out.ok()) return out.status();
        Result<bool> ok = false;
        if (out->kind == SectionOutcome::Kind::kInFlightUnknown) {
          ok = move(FailoverEvent::kInFlightUnknown, out->reason);
          if (ok.ok() && *ok) {
            if (Status s = run.RecordInFlightFailed(*out->in_flight, out->reason); !s.ok())
              return s;
          }
        } else if (out->kind == SectionOutcome::Kind::kFailed) {
          ok = move(FailoverEvent::kCompensationFailed, out->reason);
        } else {
          ok = move(FailoverEvent::kCompensated, out->reason);
        }
        if (!ok.ok()) return ok.status();
        if (!*ok) return stop(run.refusal());
        break;
      }

      case FailoverPhase::kCompleted:
      case FailoverPhase::kAborted:
      case FailoverPhase::kRolledBack:
      case FailoverPhase::kNeedsAttention: {
        if (!last_reason.empty()) return stop(last_reason);
        const std::string& prior = run.failover().last_reason;
        return stop(prior.empty() ? "nothing to do" : "nothing to do (" + prior + ")");
      }
    }
  }
}

}  // namespace icewarden
