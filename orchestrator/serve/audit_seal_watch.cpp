#include "orchestrator/serve/audit_seal_watch.h"

#include <utility>

#include "state/clock.h"
#include "state/state_store.h"

namespace icewarden {

AuditSealWatch::AuditSealWatch(StateStore& store, const Clock& clock,
                               std::chrono::milliseconds interval,
                               std::function<void(const std::string&)> log)
    : store_(store), clock_(clock), interval_(interval), log_(std::move(log)) {}

AuditSealWatch::~AuditSealWatch() { Stop(); }

void AuditSealWatch::Start() {
  std::lock_guard lock(mu_);
  if (thread_.joinable()) return;
  stopping_ = false;
  thread_ = std::thread([this] { Loop(); });
}

void AuditSealWatch::Stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

std::optional<AuditSealStatus> AuditSealWatch::Latest() const {
  std::lock_guard lock(mu_);
  return latest_;
}

void AuditSealWatch::CheckOnce() {
  std::optional<AuditAnchor> anchor;
  bool was_intact = true;
  {
    std::lock_guard lock(mu_);
    anchor = anchor_;
    if (latest_) was_intact = latest_->report.intact;
  }
  auto report = VerifyAuditChain(store_, anchor);
  if (!report.ok()) {
    // Nothing concluded: the metric keeps the last pass, icewarden_state_store_up says why.
    if (log_) log_("audit seal: cannot read the audit log: " + report.status().message());
    return;
  }
  if (!report->intact && was_intact && log_) {
    log_("audit seal: the audit log is broken at event " + std::to_string(report->broken_at) +
         ": " + report->problem + "; `icewarden audit verify --config ...` shows the same");
  }
  std::lock_guard lock(mu_);
  latest_ = AuditSealStatus{*report, clock_.Now()};
  // A sealed head becomes the next pass's anchor. A broken log keeps the last good anchor, so
  // the break stays visible even after more events are appended behind it.
  if (report->intact && !report->head_sha256.empty())
    anchor_ = AuditAnchor{report->head_seq, report->head_sha256};
}

void AuditSealWatch::Loop() {
  for (;;) {
    CheckOnce();
    std::unique_lock lock(mu_);
    if (cv_.wait_for(lock, interval_, [this] { return stopping_; })) return;
  }
}

}  // namespace icewarden
