#include "runbooks/executor_run.h"

#include <algorithm>
#include <cstdio>
#include <exception>
#include <nlohmann/json.hpp>
#include <thread>

#include "runbooks/executor_watchdog.h"

namespace icewarden {
namespace {

using Json = nlohmann::json;

// The journal's result_json: masked params, the action's detail, the completion number of a
// succeeded step, and what the action captured before its first attempt (null: nothing).
std::string Envelope(const Json& masked_params, const std::string& detail_json,
                     std::int64_t completion, const Json& before) {
  Json detail = Json::parse(detail_json.empty() ? "{}" : detail_json, nullptr, false);
  if (detail.is_discarded()) detail = Json{{"unparsed", detail_json}};
  Json out{{"params", masked_params}, {"detail", std::move(detail)}};
  if (completion > 0) out["completion"] = completion;
  if (!before.is_null()) out["before"] = before;
  return out.dump();
}

Json EnvelopeField(const StepRecord& record, const char* field) {
  Json j = Json::parse(record.result_json.empty() ? "{}" : record.result_json, nullptr, false);
  if (!j.is_object() || !j.contains(field)) return Json();
  return j[field];
}

std::int64_t CompletionOf(const StepRecord& record) {
  Json c = EnvelopeField(record, "completion");
  return c.is_number_integer() ? c.get<std::int64_t>() : 0;
}

bool IsNormalSection(const std::string& section) {
  return section == "fence" || section == "promote" || section == "verify";
}

const RunbookStep* FindStep(const Runbook& runbook, const std::string& id) {
  for (auto s : {RunbookSection::kFence, RunbookSection::kPromote, RunbookSection::kVerify}) {
    for (const RunbookStep& step : runbook.Section(s))
      if (step.id == id) return &step;
  }
  return nullptr;
}

}  // namespace

std::string DescribeStep(const std::string& record_id, const std::string& action_kind) {
  return "step " + record_id + " (action " + action_kind + ")";
}

std::string FormatSeconds(std::chrono::milliseconds d) {
  if (d.count() % 1000 == 0) return std::to_string(d.count() / 1000) + "s";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f", static_cast<double>(d.count()) / 1000.0);
  std::string s = buf;
  while (s.back() == '0') s.pop_back();
  return s + "s";
}

ExecutorRun::ExecutorRun(RunbookExecutor& executor, Failover failover, const Runbook& runbook,
                         const TemplateBindings& bindings, const std::vector<StepRecord>& journal)
    : ex_(executor), failover_(std::move(failover)), runbook_(runbook), bindings_(bindings) {
  report_.failover_id = failover_.id;
  report_.phase = failover_.phase;
  for (const StepRecord& r : journal) {
    journal_order_.push_back(r.step_id);
    journal_[r.step_id] = r;
    completion_ = std::max(completion_, CompletionOf(r));
  }
}

Result<bool> ExecutorRun::Transition(FailoverEvent event, const std::string& reason,
                                     FencingKind fencing_kind) {
  FailoverInput in;
  in.event = event;
  in.actor_kind = ActorKind::kExecutor;
  in.actor = ex_.options_.actor;
  in.reason = reason;
  in.fencing_kind = fencing_kind;
  in.at = ex_.clock_->Now();
  Result<FailoverDecision> d = ex_.transitions_.Apply(failover_.id, in);
  if (!d.ok()) return d.status();
  if (!d->accepted) {
    refusal_ = d->reason;
    Result<std::optional<Failover>> fresh = ex_.store_.GetFailover(failover_.id);
    if (!fresh.ok()) return fresh.status();
    if (fresh->has_value()) failover_ = **fresh;
    report_.phase = failover_.phase;
    return false;
  }
  failover_ = d->next;
  report_.phase = failover_.phase;
  report_.transitions.push_back(d->reason);
  return true;
}

std::optional<StepRecord> ExecutorRun::Recorded(const std::string& record_id) {
  std::lock_guard lock(mu_);
  auto it = journal_.find(record_id);
  if (it == journal_.end()) return std::nullopt;
  return it->second;
}

std::vector<StepRecord> ExecutorRun::SucceededSteps(const std::string& section) {
  std::lock_guard lock(mu_);
  std::vector<StepRecord> out;
  for (const std::string& id : journal_order_) {
    const StepRecord& r = journal_.at(id);
    if (r.section == section && r.state == StepState::kSucceeded) out.push_back(r);
  }
  return out;
}

Status ExecutorRun::Journal(const StepRecord& record) {
  if (Status s = ex_.store_.PutStep(record); !s.ok()) return s;
  std::lock_guard lock(mu_);
  if (journal_.find(record.step_id) == journal_.end()) journal_order_.push_back(record.step_id);
  journal_[record.step_id] = record;
  return Status::Ok();
}

void ExecutorRun::Note(const StepRecord& record, bool from_journal, bool skipped) {
  StepOutcome o;
  o.step_id = record.step_id;
  o.section = record.section;
  o.action = record.action;
  o.state = record.state;
  o.attempt = record.attempt;
  o.from_journal = from_journal;
  o.skipped = skipped;
  o.reason = record.reason;
  std::lock_guard lock(mu_);
  report_.steps.push_back(std::move(o));
}

StepRecord ExecutorRun::NewRecord(const StepJob& job) const {
  StepRecord r;
  r.failover_id = failover_.id;
  r.step_id = job.record_id;
  r.section = job.section;
  r.action = job.action_kind;
  r.result_json = "{}";
  return r;
}

Status ExecutorRun::RecordInFlightFailed(StepRecord record, const std::string& reason) {
  record.state = StepState::kFailed;
  record.reason = reason;
  record.finished_at = ex_.clock_->Now();
  if (Status s = Journal(record); !s.ok()) return s;
  Note(record, false);
  return Status::Ok();
}

ActionContext ExecutorRun::Context(const StepJob& job, const std::string& record_id,
                                   const Cancellation& cancel) const {
  ActionContext ctx;
  ctx.failover_id = failover_.id;
  ctx.step_id = record_id;
  ctx.idempotency_key = failover_.id + "/" + record_id;
  ctx.from = failover_.from;
  ctx.to = failover_.to;
  ctx.scope = failover_.scope;
  ctx.deadline = std::chrono::steady_clock::now() + job.timeout;
  ctx.cancel = &cancel;
  return ctx;
}

Result<Json> ExecutorRun::CaptureBefore(const StepJob& job, const Json& params) {
  Cancellation cancel;
  ActionContext ctx = Context(job, job.record_id, cancel);
  const std::uint64_t token = ex_.watchdog_->Arm(ctx.deadline, &cancel);
  Result<std::string> captured = Status::Internal("unset");
  try {
    captured = job.action->Capture(params, ctx);
  } catch (const std::exception& e) {
    captured = Status::Unavailable(std::string("the action threw: ") + e.what());
  }
  ex_.watchdog_->Disarm(token);
  if (!captured.ok()) return captured.status();
  if (captured->empty()) return Json();
  Json j = Json::parse(*captured, nullptr, false);
  return j.is_discarded() ? Json(*captured) : j;
}

ActionResult ExecutorRun::Invoke(const StepJob& job, const Json& params,
                                 const std::string& record_id, const Json& before) {
  Cancellation cancel;
  ActionContext ctx = Context(job, record_id, cancel);
  if (!before.is_null()) ctx.before_json = before.dump();
  const std::uint64_t token = ex_.watchdog_->Arm(ctx.deadline, &cancel);
  ActionResult result;
  try {
    result = job.undo_via_action ? job.action->Compensate(params, job.run_detail, ctx)
                                 : job.action->Run(params, ctx);
  } catch (const std::exception& e) {
    // Actions return failures as values; one that throws may have done anything.
    result = ActionResult::Unknown(std::string("the action threw: ") + e.what());
  }
  ex_.watchdog_->Disarm(token);
  if (cancel.cancelled() || std::chrono::steady_clock::now() >= ctx.deadline) {
    // Late results do not count: a success after the deadline may have raced the
    // cancellation, so only a definite failure stays a definite failure.
    std::string said = result.reason.empty() ? "" : " (the action said: " + result.reason + ")";
    result.outcome = result.outcome == ActionResult::Outcome::kFailed
                         ? ActionResult::Outcome::kFailed
                         : ActionResult::Outcome::kUnknown;
    result.reason = "timed out after " + FormatSeconds(job.timeout) + said;
  }
  return result;
}

Result<StepRecord> ExecutorRun::RunJob(const StepJob& job) {
  StepRecord rec = NewRecord(job);
  rec.attempt = job.first_attempt - 1;
  auto fail_without_running = [&](const std::string& reason) -> Result<StepRecord> {
    rec.state = StepState::kFailed;
    rec.reason = reason;
    rec.started_at = rec.finished_at = ex_.clock_->Now();
    if (Status s = Journal(rec); !s.ok()) return s;
    Note(rec, false);
    return rec;
  };
  if (job.action == nullptr)
    return fail_without_running(ex_.actions_.UnknownKindMessage(job.action_kind));
  Result<ResolvedParams> resolved = ResolveTemplates(job.params, bindings_);
  if (!resolved.ok()) return fail_without_running("params: " + resolved.status().message());

  const bool idempotent = job.action->idempotent();
  // A resumed in-flight attempt is re-run even when the budget is spent: it never finished.
  const int last_attempt = std::max(job.retry.attempts, job.first_attempt);
  // Captured once, before the first attempt, and journaled with the running record: every
  // attempt, and a run resumed after a crash, sees the state from before the step.
  Json before = job.before;
  for (int attempt = job.first_attempt;; ++attempt) {
    rec.attempt = attempt;
    rec.started_at = ex_.clock_->Now();
    rec.finished_at = 0;
    ActionResult result;
    Result<Json> captured = before;
    if (before.is_null() && !job.undo_via_action) captured = CaptureBefore(job, resolved->value);
    if (!captured.ok()) {
      // Nothing was done: a definite failure of this attempt.
      result = ActionResult::Failed("could not record the state before acting: " +
                                    captured.status().message());
    } else {
      before = *captured;
      rec.state = job.running_state;
      rec.reason =
          "attempt " + std::to_string(attempt) + " of " + std::to_string(last_attempt) + " started";
      rec.result_json = Envelope(resolved->masked, "{}", 0, before);
      if (Status s = Journal(rec); !s.ok()) return s;
      result = Invoke(job, resolved->value, job.record_id, before);
    }
    rec.finished_at = ex_.clock_->Now();
    if (result.ok()) {
      std::int64_t completion;
      {
        std::lock_guard lock(mu_);
        completion = ++completion_;
      }
      rec.state = job.done_state;
      rec.reason = result.reason.empty() ? "succeeded" : result.reason;
      rec.result_json = Envelope(resolved->masked, result.detail_json, completion, before);
      if (Status s = Journal(rec); !s.ok()) return s;
      Note(rec, false);
      return rec;
    }

    const bool unknown = result.outcome == ActionResult::Outcome::kUnknown;
    const bool retryable = !unknown || idempotent;
    rec.result_json = Envelope(resolved->masked, result.detail_json, 0, before);
    if (retryable && attempt < last_attempt) {
      const std::chrono::milliseconds wait =
          ex_.Backoff(job.retry, attempt - job.first_attempt + 1);
      rec.state = StepState::kPending;
      rec.reason = "attempt " + std::to_string(attempt) + " of " + std::to_string(last_attempt) +
                   " " + (unknown ? "had an unknown outcome" : "failed") + ": " + result.reason +
                   "; retrying in " + std::to_string(wait.count()) + "ms";
      if (Status s = Journal(rec); !s.ok()) return s;
      ex_.Sleep(wait);
      if (ex_.StopRequested()) return ex_.StoppedStatus();
      continue;
    }
    rec.state = StepState::kFailed;
    rec.reason = result.reason.empty() ? "failed" : result.reason;
    if (attempt > 1) rec.reason = "attempt " + std::to_string(attempt) + ": " + rec.reason;
    if (unknown && !idempotent) {
      rec.reason += "; " + job.action_kind +
                    " is not idempotent, so it is not retried and its effect is unknown";
    }
    if (Status s = Journal(rec); !s.ok()) return s;
    Note(rec, false);
    return rec;
  }
}

Result<std::vector<StepRecord>> ExecutorRun::RunJobs(const std::vector<StepJob>& jobs) {
  std::vector<StepRecord> out;
  if (jobs.size() == 1) {
    Result<StepRecord> r = RunJob(jobs.front());
    if (!r.ok()) return r.status();
    out.push_back(std::move(r).value());
    return out;
  }
  std::vector<std::optional<Result<StepRecord>>> results(jobs.size());
  std::vector<std::thread> threads;
  threads.reserve(jobs.size());
  for (std::size_t i = 0; i < jobs.size(); ++i)
    threads.emplace_back([this, &jobs, &results, i] { results[i].emplace(RunJob(jobs[i])); });
  for (std::thread& t : threads) t.join();
  for (auto& r : results) {
    if (!r->ok()) return r->status();
    out.push_back(std::move(*r).value());
  }
  return out;
}

Result<SectionOutcome> ExecutorRun::RunSection(RunbookSection section, bool watch_phase) {
  const std::vector<RunbookStep>& steps = runbook_.Section(section);
  const std::string section_name = RunbookSectionName(section);
  const FailoverPhase phase = failover_.phase;
  SectionOutcome outcome;
  for (std::size_t i = 0; i < steps.size();) {
    std::size_t end = i + 1;
    if (!steps[i].parallel_group.empty()) {
      while (end < steps.size() && steps[end].parallel_group == steps[i].parallel_group) ++end;
    }
    // Between steps, never inside one: a step in flight finishes (or times out) and is
    // journaled before the daemon stops, and a restart resumes from the journal.
    if (ex_.StopRequested()) return ex_.StoppedStatus();
    if (watch_phase) {
      Result<std::optional<Failover>> fresh = ex_.store_.GetFailover(failover_.id);
      if (!fresh.ok()) return fresh.status();
      if (fresh->has_value() && (**fresh).phase != phase) {
        failover_ = **fresh;
        report_.phase = failover_.phase;
        outcome.kind = SectionOutcome::Kind::kFailed;
        outcome.all_succeeded = false;
        outcome.reason = "the failover moved to " +
                         std::string(FailoverPhaseName(failover_.phase)) + " while its " +
                         section_name + " steps ran";
        return outcome;
      }
    }

    // What the journal already says, before anything of the batch runs.
    std::vector<StepJob> jobs;
    for (std::size_t k = i; k < end; ++k) {
      const RunbookStep& step = steps[k];
      std::optional<StepRecord> prev = Recorded(step.id);
      Action* action = ex_.actions_.FindMutable(step.action);
      if (prev && (prev->state == StepState::kSucceeded || prev->state == StepState::kFailed)) {
        Note(*prev, true);
        continue;
      }
      if (prev && prev->state == StepState::kRunning &&
          (action == nullptr || !action->idempotent())) {
        outcome.kind = SectionOutcome::Kind::kInFlightUnknown;
        outcome.all_succeeded = false;
        outcome.reason = DescribeStep(step.id, step.action) +
                         " was in flight when the executor stopped and " + step.action +
                         " is not idempotent: check its effect by hand";
        outcome.in_flight = *prev;
        return outcome;
      }
      StepJob job;
      job.record_id = step.id;
      job.section = section_name;
      job.action_kind = step.action;
      job.action = action;
      job.params = step.params;
      job.timeout = step.timeout;
      job.retry = step.retry;
      job.first_attempt = prev ? prev->attempt + 1 : 1;
      if (prev) job.before = EnvelopeField(*prev, "before");
      jobs.push_back(std::move(job));
    }
    if (!jobs.empty()) {
      Result<std::vector<StepRecord>> ran = RunJobs(jobs);
      if (!ran.ok()) return ran.status();
    }

    for (std::size_t k = i; k < end; ++k) {
      const RunbookStep& step = steps[k];
      std::optional<StepRecord> rec = Recorded(step.id);
      if (rec && rec->state == StepState::kSucceeded) {
        ++outcome.succeeded;
        continue;
      }
      outcome.all_succeeded = false;
      if (step.on_failure == OnFailure::kContinue) continue;
      if (outcome.kind == SectionOutcome::Kind::kDone) {
        outcome.kind = SectionOutcome::Kind::kFailed;
        outcome.reason = section_name + " " + DescribeStep(step.id, step.action) +
                         " failed: " + (rec ? rec->reason : std::string("no outcome journaled"));
      }
    }
    if (outcome.kind != SectionOutcome::Kind::kDone) return outcome;
    i = end;
  }
  return outcome;
}

Result<SectionOutcome> ExecutorRun::Compensate() {
  std::vector<StepRecord> done;
  {
    std::lock_guard lock(mu_);
    for (const std::string& id : journal_order_) {
      const StepRecord& r = journal_.at(id);
      if (IsNormalSection(r.section) && r.state == StepState::kSucceeded) done.push_back(r);
    }
  }
  // Reverse order of completion; stable, so records without a number keep journal order.
  std::stable_sort(done.begin(), done.end(), [](const StepRecord& a, const StepRecord& b) {
    return CompletionOf(a) > CompletionOf(b);
  });

  SectionOutcome outcome;
  for (const StepRecord& original : done) {
    const std::string id = original.step_id + ".compensate";
    const RunbookStep* step = FindStep(runbook_, original.step_id);
    std::optional<StepRecord> prev = Recorded(id);
    if (prev && prev->state == StepState::kCompensated) {
      Note(*prev, true, prev->reason.rfind("skipped:", 0) == 0);
      ++outcome.succeeded;
      continue;
    }
    if (prev && prev->state == StepState::kFailed) {
      Note(*prev, true);
      outcome.kind = SectionOutcome::Kind::kFailed;
      outcome.reason =
          "undoing " + DescribeStep(original.step_id, original.action) + " failed: " + prev->reason;
      return outcome;
    }

    StepJob job;
    job.record_id = id;
    job.section = "compensate";
    job.running_state = StepState::kCompensating;
    job.done_state = StepState::kCompensated;
    if (step == nullptr) {
      job.action_kind = original.action;
      StepRecord rec = NewRecord(job);
      rec.state = StepState::kFailed;
      rec.reason = DescribeStep(original.step_id, original.action) +
                   " is journaled but not in runbook " + runbook_.name + ": cannot undo it";
      rec.started_at = rec.finished_at = ex_.clock_->Now();
      if (Status s = Journal(rec); !s.ok()) return s;
      Note(rec, false);
      outcome.kind = SectionOutcome::Kind::kFailed;
      outcome.reason = rec.reason;
      return outcome;
    }
    job.timeout = step->timeout;
    job.retry = step->retry;
    Action* own = ex_.actions_.FindMutable(step->action);
    if (own != nullptr && own->has_compensation()) {
      job.action_kind = step->action;
      job.action = own;
      job.undo_via_action = true;
      job.params = step->params;
      Json detail = EnvelopeField(original, "detail");
      job.run_detail = detail.is_null() ? Json::object() : detail;
    } else if (step->compensate) {
      job.action_kind = step->compensate->action;
      job.action = ex_.actions_.FindMutable(step->compensate->action);
      job.params = step->compensate->params;
    } else {
      StepRecord rec = NewRecord(job);
      rec.action = step->action;
      rec.state = StepState::kCompensated;
      rec.reason = "skipped: " + step->action + " has no compensation and step " + step->id +
                   " has no inline compensate";
      rec.started_at = rec.finished_at = ex_.clock_->Now();
      if (Status s = Journal(rec); !s.ok()) return s;
      Note(rec, false, true);
      ++outcome.skipped;
      continue;
    }

    if (prev && prev->state == StepState::kCompensating &&
        (job.action == nullptr || !job.action->idempotent())) {
      outcome.kind = SectionOutcome::Kind::kInFlightUnknown;
      outcome.reason = DescribeStep(id, job.action_kind) +
                       " was in flight when the executor stopped and " + job.action_kind +
                       " is not idempotent: check its effect by hand";
      outcome.in_flight = *prev;
      return outcome;
    }
    job.first_attempt = prev ? prev->attempt + 1 : 1;
    Result<StepRecord> rec = RunJob(job);
    if (!rec.ok()) return rec.status();
    if (rec->state != StepState::kCompensated) {
      outcome.kind = SectionOutcome::Kind::kFailed;
      outcome.reason =
          "undoing " + DescribeStep(original.step_id, original.action) + " failed: " + rec->reason;
      return outcome;
    }
    ++outcome.succeeded;
  }
  const int undone = outcome.succeeded;
  const int skipped = outcome.skipped;

  Result<SectionOutcome> section = RunSection(RunbookSection::kCompensate);
  if (!section.ok()) return section.status();
  if (section->kind != SectionOutcome::Kind::kDone) return section;
  outcome.reason = "undid " + std::to_string(undone) + " step" + (undone == 1 ? "" : "s") +
                   " in reverse order of completion" +
                   (skipped > 0 ? " (" + std::to_string(skipped) + " with no compensation skipped)"
                                : std::string()) +
                   " and ran " + std::to_string(section->succeeded) + " compensate step" +
                   (section->succeeded == 1 ? "" : "s");
  return outcome;
}

}  // namespace icewarden
