#include "examples/lab/replicator.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <limits>
#include <set>

namespace icewarden::lab {
namespace {

constexpr auto kPassInterval = std::chrono::milliseconds(50);

}  // namespace

Replicator::Replicator(std::vector<LabRegion*> regions, Ownership* ownership, NowMs now_ms,
                       int lag_ms)
    : regions_(std::move(regions)),
      ownership_(ownership),
      now_ms_(std::move(now_ms)),
      lag_ms_(lag_ms) {}

Replicator::~Replicator() { Stop(); }

void Replicator::Start() {
  std::lock_guard lock(thread_mutex_);
  if (thread_.joinable()) return;
  stop_ = false;
  thread_ = std::thread([this] { Loop(); });
}

void Replicator::Stop() {
  {
    std::lock_guard lock(thread_mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void Replicator::Pause() { paused_ = true; }
void Replicator::Resume() {
  read_all_ = true;
  paused_ = false;
}

void Replicator::Loop() {
  std::unique_lock lock(thread_mutex_);
  while (!stop_) {
    lock.unlock();
    try {
      RunOnce();
    } catch (const std::exception& e) {
      // A failing pass (disk, a pruned metadata file) must not end replication for good.
      std::fprintf(stderr, "lab: replication pass failed: %s\n", e.what());
    }
    lock.lock();
    wake_.wait_for(lock, kPassInterval, [this] { return stop_; });
  }
}

LabRegion* Replicator::Find(const std::string& name) {
  for (auto* region : regions_) {
    if (region->name == name) return region;
  }
  return nullptr;
}

std::map<TableIdent, std::map<std::string, TableHead>> Replicator::CollectHeads() {
  std::map<TableIdent, std::map<std::string, TableHead>> heads;
  for (auto* region : regions_) {
    for (auto& head : region->store->Heads()) {
      heads[head.table][region->name] = head;
    }
  }
  return heads;
}

OwnerDecision Replicator::Decide(const TableIdent& table,
                                 const std::map<std::string, TableHead>& heads) {
  std::vector<OwnershipClaim> claims;
  for (const auto& [region, head] : heads) claims.push_back({head.owner_claim, head.epoch_claim});
  return ownership_->Resolve(table, claims);
}

std::map<TableIdent, OwnerDecision> Replicator::Owners() {
  std::map<TableIdent, OwnerDecision> owners;
  for (const auto& [table, heads] : CollectHeads()) owners[table] = Decide(table, heads);
  return owners;
}

std::optional<OwnerDecision> Replicator::OwnerOf(const TableIdent& table) {
  std::map<std::string, TableHead> heads;
  for (auto* region : regions_)
    if (auto head = region->store->Head(table)) heads[region->name] = std::move(*head);
  if (heads.empty()) return std::nullopt;
  return Decide(table, heads);
}

bool Replicator::MustReadAll(PassStart* start) {
  bool all = read_all_.exchange(false) || !last_pass_ok_;
  start->rules_version = ownership_->rules_version();
  all = all || start->rules_version != rules_version_;
  for (auto* region : regions_) {
    // Up or down as seen now: a region that comes up during this pass, after some tables
    // skipped it, differs from this at the next pass, which then reads every head.
    const bool up = region->up();
    start->up[region->name] = up;
    auto was = was_up_.find(region->name);
    if (was == was_up_.end() || was->second != up || !cursors_.count(region->name)) all = true;
    start->cursors[region->name] = region->store->ChangeCursor();
  }
  return all;
}

std::optional<int64_t> Replicator::Replicate(const TableIdent& table,
                                             const std::map<std::string, TableHead>& heads,
                                             int64_t visible_ms) {
  OwnerDecision decision = Decide(table, heads);
  LabRegion* owner = Find(decision.owner);
  auto owner_head = heads.find(decision.owner);
  // A region down comes back through a pass that reads every head.
  if (owner == nullptr || !owner->up()) return std::nullopt;
  if (owner_head == heads.end()) return ReplicateDrop(table, *owner, heads, visible_ms);
  std::optional<int64_t> again;
  auto sooner = [&](int64_t at) { again = again ? std::min(*again, at) : at; };
  for (auto* replica : regions_) {
    if (replica == owner || !replica->up()) continue;
    auto replica_head = heads.find(replica->name);
    std::string replica_location = replica_head == heads.end() ? "" : replica_head->second.location;
    if (replica_location == owner_head->second.location) continue;
    ReplicationPlan plan = owner->store->PlanReplication(table, replica_location, visible_ms);
    // The rest becomes visible lag_ms after the oldest file still hidden was committed.
    if (plan.first_invisible_ms >= 0) sooner(plan.first_invisible_ms + lag_ms_);
    if (plan.kind != ReplicationPlan::Kind::kCopy) continue;
    // A conflict means the replica moved since its head was read: that change is in its log.
    replica->store->ApplyReplication(table, replica_location, plan);
  }
  return again;
}

std::optional<int64_t> Replicator::ReplicateDrop(const TableIdent& table, LabRegion& owner,
                                                 const std::map<std::string, TableHead>& heads,
                                                 int64_t visible_ms) {
  auto dropped = owner.store->Dropped(table);
  if (!dropped) return std::nullopt;  // never in the owner: a replica's own table stays
  if (dropped->dropped_ms > visible_ms) return dropped->dropped_ms + lag_ms_;
  for (const auto& [region, head] : heads) {
    LabRegion* replica = Find(region);
    if (replica == nullptr || replica == &owner || !replica->up()) continue;
    // Only a copy of what the owner dropped (its pointer in the owner's history): a replica
    // that diverged keeps its table, as replication never overwrites a divergent one.
    const auto& history = dropped->history;
    if (std::find(history.begin(), history.end(), head.location) == history.end()) continue;
    // A conflict means the replica moved since its head was read: that change is in its log.
    replica->store->DropTable(table, head.location, dropped->purged, dropped->dropped_ms);
  }
  return std::nullopt;
}

std::optional<std::set<TableIdent>> Replicator::TablesToLookAt(int64_t now) {
  std::set<TableIdent> look;
  for (auto* region : regions_) {
    uint64_t from = cursors_[region->name];
    auto changed = region->store->ChangedSince(&from);
    if (!changed) return std::nullopt;
    look.insert(changed->begin(), changed->end());
  }
  for (const auto& [table, visible_at] : waiting_)
    if (visible_at <= now) look.insert(table);
  return look;
}

void Replicator::RunOnce() {
  std::lock_guard pass(pass_mutex_);
  if (paused_) return;
  const int64_t now = now_ms_();
  const int64_t visible_ms = now - lag_ms_;
  PassStart start;
  const bool all = MustReadAll(&start);
  last_pass_ok_ = false;  // until this pass is through: one that throws reads all next time
  std::optional<std::set<TableIdent>> look;
  if (!all) look = TablesToLookAt(now);
  std::map<TableIdent, std::map<std::string, TableHead>> heads;
  if (look) {
    for (const auto& table : *look) {
      waiting_.erase(table);  // looked at now: waits again only if Replicate says so
      for (auto* region : regions_)
        if (auto head = region->store->Head(table)) heads[table][region->name] = std::move(*head);
    }
  } else {
    waiting_.clear();
    heads = CollectHeads();
  }
  for (const auto& [table, table_heads] : heads)
    if (auto again = Replicate(table, table_heads, visible_ms)) waiting_[table] = *again;
  ReplicateViews(visible_ms);
  cursors_ = std::move(start.cursors);
  was_up_ = std::move(start.up);
  rules_version_ = start.rules_version;
  last_pass_ok_ = true;
}

json Replicator::Status() {
  json tables = json::array();
  for (const auto& [table, heads] : CollectHeads()) {
    OwnerDecision decision = Decide(table, heads);
    json entry = {{"table", table.Dotted()},
                  {"owner", decision.owner},
                  {"owner_source", decision.source},
                  {"regions", json::object()}};
    if (decision.epoch >= 0) entry["epoch"] = decision.epoch;
    LabRegion* owner = Find(decision.owner);
    auto owner_head = heads.find(decision.owner);
    for (auto* region : regions_) {
      json state = {{"present", false}};
      auto head = heads.find(region->name);
      if (head != heads.end()) {
        state = {{"present", true},
                 {"metadata_location", head->second.location},
                 {"current_snapshot_id", head->second.main_snapshot_id}};
      }
      if (region != owner && owner != nullptr && owner_head != heads.end()) {
        std::string location = head == heads.end() ? "" : head->second.location;
        if (location == owner_head->second.location) {
          state["pending_commits"] = 0;
          state["diverged"] = false;
        } else {
          auto plan =
              owner->store->PlanReplication(table, location, std::numeric_limits<int64_t>::max());
          state["pending_commits"] = plan.pending;
          state["diverged"] = plan.kind == ReplicationPlan::Kind::kDiverged;
        }
      }
      entry["regions"][region->name] = state;
    }
    tables.push_back(entry);
  }
  return tables;
}

}  // namespace icewarden::lab
