#include "orchestrator/gateway/write_admission.h"

#include <algorithm>

#include "state/state_store.h"

namespace icewarden {

WriteAdmission::WriteAdmission(std::vector<std::string> forward_to)
    : forward_to_(std::move(forward_to)), snapshot_(std::make_shared<StoreSnapshot>()) {
  auto initial = std::make_shared<StoreSnapshot>();
  initial->error = "the store has not been read yet";
  snapshot_ = std::move(initial);
}

void WriteAdmission::Publish(StoreSnapshot snapshot) {
  auto next = std::make_shared<const StoreSnapshot>(std::move(snapshot));
  std::lock_guard lock(mu_);
  snapshot_ = std::move(next);
}

std::shared_ptr<const StoreSnapshot> WriteAdmission::Snapshot() const {
  std::lock_guard lock(mu_);
  return snapshot_;
}

WriteVerdict WriteAdmission::Admit(const std::vector<TableRecord>& tables, std::uint64_t* ticket) {
  std::lock_guard lock(mu_);
  WriteVerdict verdict = DecideWrite(tables, *snapshot_, forward_to_);
  *ticket = 0;
  if (verdict.kind == WriteVerdict::Kind::kForward) {
    *ticket = next_ticket_++;
    in_flight_[*ticket] = tables;
  }
  return verdict;
}

WriteVerdict WriteAdmission::Recheck(std::uint64_t ticket, const std::vector<TableRecord>& tables) {
  std::lock_guard lock(mu_);
  WriteVerdict verdict = DecideWrite(tables, *snapshot_, forward_to_);
  if (verdict.kind == WriteVerdict::Kind::kForward) {
    in_flight_[ticket] = tables;
  } else {
    in_flight_.erase(ticket);
  }
  return verdict;
}

void WriteAdmission::Release(std::uint64_t ticket) {
  std::lock_guard lock(mu_);
  in_flight_.erase(ticket);
}

std::size_t WriteAdmission::InFlight() const {
  std::lock_guard lock(mu_);
  return in_flight_.size();
}

WriteAdmission::Closure WriteAdmission::ClosureOf(const std::string& failover_id) const {
  std::lock_guard lock(mu_);
  Closure c;
  c.store_readable = snapshot_->readable;
  c.refreshes = snapshot_->refreshes;
  const Failover* f = nullptr;
  for (const Failover& a : snapshot_->active) {
    if (a.id == failover_id) f = &a;
  }
  if (!c.store_readable) {
    // Every write is refused while the store cannot be read; only those already let through
    // can still land.
    c.in_flight = static_cast<int>(in_flight_.size());
    c.confirmed = c.in_flight == 0;
    return c;
  }
  if (f == nullptr) return c;
  c.seen = true;
  c.phase = FailoverPhaseName(f->phase);
  c.closes = PhaseCloses(f->phase);
  for (const auto& [ticket, tables] : in_flight_) {
    if (std::any_of(tables.begin(), tables.end(),
                    [&](const TableRecord& t) { return WritesToOldOwner(*f, t); })) {
      ++c.in_flight;
    }
  }
  c.confirmed = c.closes && c.in_flight == 0;
  return c;
}

StoreWatch::StoreWatch(StateStore& store, WriteAdmission& admission, std::chrono::milliseconds poll)
    : store_(store), admission_(admission), poll_(poll) {}

StoreWatch::~StoreWatch() { Stop(); }

void StoreWatch::Start() {
  PollOnce();
  thread_ = std::thread([this] { Loop(); });
}

bool StoreWatch::StopRequested() {
  std::lock_guard lock(stop_mu_);
  return stopping_;
}

void StoreWatch::Loop() {
  using Clock = std::chrono::steady_clock;
  // A store's wait is asked for in slices, so that Stop is noticed soon even with a long poll.
  constexpr std::chrono::milliseconds kSlice{100};
  auto next_poll = Clock::now() + poll_;
  auto failed_at = Clock::time_point();
  while (!StopRequested()) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(next_poll - Clock::now());
    const auto slice = std::clamp(left, std::chrono::milliseconds(0), kSlice);
    const StoreChange change =
        store_.WaitForChange(last_ok_ ? last_revision_ : std::nullopt, slice);
    if (change.kind == StoreChange::Kind::kCannotWait) {
      // SQLite: poll on our own schedule.
      std::unique_lock lock(stop_mu_);
      if (stop_cv_.wait_until(lock, next_poll, [this] { return stopping_; })) break;
      lock.unlock();
      PollOnce();
      next_poll = Clock::now() + poll_;
      continue;
    }
    if (StopRequested()) break;
    if (change.kind == StoreChange::Kind::kUnreadable) {
      // The snapshot rests on the watch's revision, and the watch can no longer vouch for it:
      // refuse every write now rather than at the next failed read. (Before the watch was ever
      // up, the snapshot rests on reads alone and the poll below decides.)
      if (last_ok_ && last_revision_) {
        StoreSnapshot next;
        next.refreshes = ++refreshes_;
        next.readable = false;
        next.error = change.why;
        last_ok_ = false;
        admission_.Publish(std::move(next));
      }
      if (Clock::now() < next_poll) continue;
    } else if (change.kind != StoreChange::Kind::kChanged && Clock::now() < next_poll) {
      continue;
    } else if (!last_ok_ && Clock::now() < failed_at + kSlice) {
      // The watch is up but the last read failed: read again, but not in a tight loop.
      std::unique_lock lock(stop_mu_);
      if (stop_cv_.wait_until(lock, failed_at + kSlice, [this] { return stopping_; })) break;
    }
    PollOnce();
    if (!last_ok_) failed_at = Clock::now();
    next_poll = Clock::now() + poll_;
  }
}

void StoreWatch::Stop() {
  {
    std::lock_guard lock(stop_mu_);
    stopping_ = true;
  }
  stop_cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void StoreWatch::PollOnce() {
  // A store that can say "nothing changed" cheaply is re-read only after a change; a failed
  // read is retried every poll, and decisions meanwhile refuse writes.
  std::optional<std::int64_t> revision = store_.OwnershipRevision();
  if (last_ok_ && revision && last_revision_ == revision) return;
  StoreSnapshot next;
  next.refreshes = ++refreshes_;
  auto regions = store_.ListRegions();
  auto active =
      regions.ok() ? store_.ListActiveFailovers() : Result<std::vector<Failover>>(regions.status());
  if (!regions.ok() || !active.ok()) {
    next.readable = false;
    next.error = regions.ok() ? active.status().message() : regions.status().message();
    last_ok_ = false;
  } else {
    next.readable = true;
    next.regions = std::move(regions).value();
    next.active = std::move(active).value();
    last_ok_ = true;
    last_revision_ = revision;  // nullopt: the store cannot say, so the next poll reads again
  }
  admission_.Publish(std::move(next));
}

}  // namespace icewarden
