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
  std::unordered_map<std::string, std::optional<Ownership>> dropped;
  std::lock_guard lock(mu_);
  snapshot_ = std::move(next);
  ++generation_;
  dropped.swap(kept_);  // freed after the lock is released
}

Result<std::optional<Ownership>> WriteAdmission::OwnershipOf(StateStore& store,
                                                             const TableIdent& table) {
  const std::string key = table.ToString();
  std::uint64_t generation = 0;
  bool keep = false;
  {
    std::lock_guard lock(mu_);
    keep = snapshot_->readable && snapshot_->revision.has_value();
    if (keep) {
      if (auto it = kept_.find(key); it != kept_.end()) {
        ++kept_counts_.hits;
        return it->second;
      }
    }
    ++kept_counts_.reads;
    generation = generation_;
  }
  // Read outside the lock. The generation was taken first, so a row kept below was read after
  // the snapshot it is kept for was published: never older than that snapshot.
  auto row = store.GetOwnership(table);
  if (!row.ok() || !keep) return row;
  std::lock_guard lock(mu_);
  if (generation_ == generation) {
    if (kept_.size() >= kKeptRows) kept_.clear();
    kept_.emplace(key, *row);
  }
  return row;
}

WriteAdmission::KeptRows WriteAdmission::Kept() const {
  std::lock_guard lock(mu_);
  KeptRows k = kept_counts_;
  k.size = kept_.size();
  return k;
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
  if (store_.WaitForChange(std::nullopt, std::chrono::milliseconds(0)).kind ==
      StoreChange::Kind::kCannotWait) {
    PollLoop();
  } else {
    WatchLoop();
  }
}

bool StoreWatch::SleepUntil(std::chrono::steady_clock::time_point until) {
  std::unique_lock lock(stop_mu_);
  return !stop_cv_.wait_until(lock, until, [this] { return stopping_; });
}

// SQLite: a read of its data version every poll, and a full read after a change.
void StoreWatch::PollLoop() {
  while (SleepUntil(std::chrono::steady_clock::now() + poll_)) PollOnce();
}

// etcd: the store's watch says when to read. The poll only bounds how long a snapshot goes
// unread while the watch is quiet (or not up yet).
void StoreWatch::WatchLoop() {
  using Clock = std::chrono::steady_clock;
  // A wait is asked for in slices, so that Stop is noticed soon even with a long poll; and a
  // failed read is retried no sooner than a slice later, since the watch reports a change at
  // once to a reader with no revision.
  constexpr std::chrono::milliseconds kSlice{100};
  auto next_read = Clock::now() + poll_;
  while (!StopRequested()) {
    const StoreChange change =
        store_.WaitForChange(last_ok_ ? last_revision_ : std::nullopt, kSlice);
    if (StopRequested()) break;
    // The snapshot rests on the watch's revision, and the watch can no longer vouch for it:
    // refuse every write now rather than at the next failed read.
    if (change.kind == StoreChange::Kind::kUnreadable && last_ok_ && last_revision_) {
      PublishUnreadable(change.why);
    }
    if (change.kind != StoreChange::Kind::kChanged && Clock::now() < next_read) continue;
    PollOnce();
    next_read = Clock::now() + poll_;
    if (!last_ok_ && !SleepUntil(Clock::now() + kSlice)) break;
  }
}

void StoreWatch::PublishUnreadable(const std::string& why) {
  StoreSnapshot next;
  next.refreshes = ++refreshes_;
  next.readable = false;
  next.error = why;
  last_ok_ = false;
  admission_.Publish(std::move(next));
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
  auto regions = store_.ListRegions();
  auto active =
      regions.ok() ? store_.ListActiveFailovers() : Result<std::vector<Failover>>(regions.status());
  if (!regions.ok() || !active.ok()) {
    PublishUnreadable(regions.ok() ? active.status().message() : regions.status().message());
    return;
  }
  StoreSnapshot next;
  next.refreshes = ++refreshes_;
  next.readable = true;
  next.regions = std::move(regions).value();
  next.active = std::move(active).value();
  last_ok_ = true;
  last_revision_ = revision;  // nullopt: the store cannot say, so the next poll reads again
  next.revision = revision;
  admission_.Publish(std::move(next));
}

}  // namespace icewarden
