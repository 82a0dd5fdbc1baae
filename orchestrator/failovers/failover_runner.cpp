#include "orchestrator/failovers/failover_runner.h"

#include <spdlog/spdlog.h>

#include "orchestrator/config/config.h"
#include "orchestrator/failovers/failover_service.h"
#include "orchestrator/failovers/fence_evidence.h"
#include "orchestrator/failovers/route_table.h"
#include "orchestrator/orchestrator.h"
#include "state/state_store.h"

namespace icewarden {
namespace {

bool HasWork(const Failover& f) {
  switch (f.phase) {
    case FailoverPhase::kApproved:
    case FailoverPhase::kPromoting:
    case FailoverPhase::kVerifying:
    case FailoverPhase::kFailed:
    case FailoverPhase::kCompensating:
      return true;
    case FailoverPhase::kFenced:
      return f.promotion_hold.empty();
    default:
      return false;
  }
}

}  // namespace

FailoverRunner::FailoverRunner(FailoverRunnerDeps deps) : d_(std::move(deps)) {
  ExecutorOptions options;
  options.policy = d_.orchestrator->Policy();
  options.sleep = [this](std::chrono::milliseconds d) { SleepInterruptibly(d); };
  options.stop_requested = [this] { return Stopping(); };
  executor_ = std::make_unique<RunbookExecutor>(*d_.store, *d_.actions, *this, d_.clock, options);
}

FailoverRunner::~FailoverRunner() { Stop(); }

bool FailoverRunner::Stopping() const {
  std::lock_guard lock(mu_);
  return stopping_;
}

void FailoverRunner::SleepInterruptibly(std::chrono::milliseconds d) {
  std::unique_lock lock(mu_);
  cv_.wait_for(lock, d, [this] { return stopping_; });
}

void FailoverRunner::Start() {
  std::lock_guard lock(mu_);
  if (supervisor_.joinable()) return;
  woken_ = true;  // the first look resumes every active failover
  supervisor_ = std::thread([this] { Supervise(); });
}

void FailoverRunner::Wake(const std::string& id) {
  std::lock_guard lock(mu_);
  settled_.erase(id);
  // A command that lands while a Drive runs (an operator's fencing confirmation during the
  // fence steps) must be looked at after that Drive, whatever version it stops at.
  woken_during_drive_.insert(id);
  woken_ = true;
  cv_.notify_all();
}

void FailoverRunner::Stop() {
  {
    std::lock_guard lock(mu_);
    if (stopping_ && !supervisor_.joinable()) return;
    stopping_ = true;
    cv_.notify_all();
  }
  if (supervisor_.joinable()) supervisor_.join();
  std::map<std::string, std::thread> workers;
  std::vector<std::thread> finished;
  {
    std::lock_guard lock(mu_);
    workers.swap(workers_);
    finished.swap(finished_);
  }
  for (auto& [id, t] : workers)
    if (t.joinable()) t.join();
  for (auto& t : finished)
    if (t.joinable()) t.join();
}

void FailoverRunner::Supervise() {
  for (;;) {
    {
      std::unique_lock lock(mu_);
      cv_.wait_for(lock, d_.poll, [this] { return stopping_ || woken_; });
      if (stopping_) return;
      woken_ = false;
      for (auto& t : finished_)
        if (t.joinable()) t.join();
      finished_.clear();
    }
    auto active = d_.store->ListActiveFailovers();
    if (!active.ok()) {
      spdlog::error("failover runner: cannot list active failovers: {}",
                    active.status().ToString());
      continue;
    }
    for (const Failover& f : *active) Examine(f);
  }
}

void FailoverRunner::Examine(const Failover& f) {
  {
    std::lock_guard lock(mu_);
    if (stopping_ || running_.count(f.id)) return;
    auto it = settled_.find(f.id);
    // Nothing changed since a Drive last stopped here: only evidence can move it on.
    if (it != settled_.end() && it->second == f.version && f.phase != FailoverPhase::kFencing)
      return;
  }
  const LoadedRoute* route = d_.service->RouteOf(f);
  if (route == nullptr || route->runbook_hash != f.plan.runbook_hash) {
    std::lock_guard lock(mu_);
    if (!settled_.count(f.id))
      spdlog::error(
          "{}: not run: its runbook {} {} since it was proposed; abort it and propose again", f.id,
          f.runbook, route == nullptr ? "has no route in the config any more" : "changed");
    settled_[f.id] = f.version;
    return;
  }
  bool drive = HasWork(f);
  if (f.phase == FailoverPhase::kFencing) {
    std::lock_guard lock(mu_);
    auto it = settled_.find(f.id);
    drive = it == settled_.end() || it->second != f.version;  // resumed, or fence steps not run
  }
  if (!drive && f.phase == FailoverPhase::kFencing) {
    std::string why;
    auto evidence = d_.service->UnreachableEvidence(f, &why);
    if (!evidence) return;
    FailoverInput in;
    in.event = FailoverEvent::kConfirmFencing;
    in.actor_kind = ActorKind::kExecutor;
    in.actor = "executor";
    in.fencing_kind = FencingKind::kEvidenceUnreachable;
    auto d = Apply(f.id, in);
    if (!d.ok() || !d->accepted) {
      spdlog::warn("{}: old_region_unreachable evidence not recorded: {}", f.id,
                   d.ok() ? d->reason : d.status().ToString());
      return;
    }
    if (d_.log) d_.log(d->reason);
    drive = true;
  }
  if (!drive) return;
  std::lock_guard lock(mu_);
  if (stopping_) return;
  running_.insert(f.id);
  woken_during_drive_.erase(f.id);
  if (auto old = workers_.find(f.id); old != workers_.end()) {
    finished_.push_back(std::move(old->second));
    workers_.erase(old);
  }
  workers_[f.id] = std::thread([this, id = f.id] { Drive(id); });
}

void FailoverRunner::Drive(const std::string& id) {
  std::int64_t version = -1;
  auto found = d_.store->GetFailover(id);
  if (found.ok() && found->has_value()) {
    const Failover& f = **found;
    const LoadedRoute* route = d_.service->RouteOf(f);
    auto bindings = route ? d_.service->BindingsOf(f, *route)
                          : Result<TemplateBindings>(Status::NotFound("no route"));
    if (!bindings.ok()) {
      spdlog::error("{}: cannot bind runbook parameters: {}", id, bindings.status().ToString());
    } else {
      auto report = executor_->Drive(id, route->runbook, *bindings);
      if (!report.ok()) {
        if (report.status().code() == StatusCode::kUnavailable && Stopping()) {
          spdlog::info("{}: {}", id, report.status().message());
        } else {
          spdlog::error("{}: executor stopped: {}", id, report.status().ToString());
        }
      } else if (d_.log) {
        d_.log(report->summary);
      }
    }
    auto after = d_.store->GetFailover(id);
    if (after.ok() && after->has_value()) version = (*after)->version;
  }
  if (d_.drive_ended) d_.drive_ended(id);
  std::lock_guard lock(mu_);
  running_.erase(id);
  if (woken_during_drive_.erase(id) > 0) {
    settled_.erase(id);
  } else {
    settled_[id] = version;
  }
  auto it = workers_.find(id);
  if (it != workers_.end()) {
    finished_.push_back(std::move(it->second));
    workers_.erase(it);
  }
  woken_ = true;  // look again: the drive may have ended in a phase with more to do
  cv_.notify_all();
}

Result<FailoverDecision> FailoverRunner::Apply(const std::string& id, const FailoverInput& in) {
  auto found = d_.store->GetFailover(id);
  if (!found.ok()) return found.status();
  if (!found->has_value()) return Status::NotFound("no failover " + id);
  const Failover& f = **found;
  auto refuse = [&](const std::string& why) -> Result<FailoverDecision> {
    FailoverDecision d;
    d.next = f;
    d.reason = "refused: " + std::string(FailoverEventName(in.event)) + " " + id + " (" +
               FailoverPhaseName(f.phase) + "): " + why;
    AuditEvent audit;
    audit.actor = in.actor;
    audit.source = "executor";
    audit.action = std::string("failover.") + FailoverEventName(in.event) + ".refused";
    audit.target = id;
    audit.reason = d.reason;
    if (Status s = d_.store->AppendAudit(audit); !s.ok()) return s;
    return d;
  };

  if (in.event == FailoverEvent::kBeginPromotion && f.phase == FailoverPhase::kFenced) {
    std::string rpo;
    if (auto failures = d_.service->CheckBeforePromotion(f, &rpo))
      return refuse("guards failed at the last check before promotion: " + *failures +
                    "; an approver must approve again, or abort");
    return d_.orchestrator->ApplyToFailover(id, in, "executor",
                                            [&](Failover& next) { next.rpo_json = rpo; });
  }
  if (in.event == FailoverEvent::kConfirmFencing &&
      (in.fencing_kind == FencingKind::kEvidenceSteps ||
       in.fencing_kind == FencingKind::kGatewayClosed)) {
    auto steps = d_.store->ListSteps(id);
    if (!steps.ok()) return steps.status();
    std::vector<std::string> gateways;
    for (const GatewayConfig& g : d_.service->config().gateways) gateways.push_back(g.name);
    FenceEvidence evidence = FenceStepsEvidence(f, *steps, in.fencing_kind, gateways);
    if (!evidence.evidence_json) return refuse(evidence.why);
    FailoverInput with = in;
    with.evidence_json = *evidence.evidence_json;
    return d_.orchestrator->ApplyToFailover(id, with, "executor");
  }
  if (in.event == FailoverEvent::kConfirmFencing &&
      in.fencing_kind == FencingKind::kEvidenceUnreachable) {
    // Whoever sends it, silence is checked here, where it is observed.
    std::string why;
    auto evidence = d_.service->UnreachableEvidence(f, &why);
    if (!evidence) return refuse("no old_region_unreachable evidence: " + why);
    FailoverInput with = in;
    with.reason = why;
    with.evidence_json = *evidence;
    return d_.orchestrator->ApplyToFailover(id, with, "executor");
  }
  const bool ends =
      (in.event == FailoverEvent::kVerified && f.phase == FailoverPhase::kVerifying) ||
      (in.event == FailoverEvent::kCompensated && f.phase == FailoverPhase::kCompensating);
  if (const auto cooldown = d_.service->LongestCooldown(); ends && cooldown.count() > 0) {
    // The cooldown is measured by the store's clock from here (guards.h): the timer first, so
    // an end on record always has one; a crash before the end's write leaves a timer that runs
    // out harmlessly, and a retried end starts it again.
    if (Status s = d_.store->StartTimer(CooldownTimerName(id), cooldown); !s.ok()) return s;
  }
  return d_.orchestrator->ApplyToFailover(id, in, "executor");
}

}  // namespace icewarden
