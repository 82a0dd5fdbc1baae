#include "actions/table_observations.h"

namespace icewarden {

std::string TableObservations::Key(const std::string& region, const TableIdent& table) {
  std::string key = region;
  key += '\n';
  key += table.ToString();
  return key;
}

std::optional<TableSnapshotView> TableObservations::Find(const std::string& failover_id,
                                                         const std::string& region,
                                                         const TableIdent& table) const {
  std::shared_ptr<const TableSnapshotView> seen;
  {
    std::lock_guard lock(mu_);
    auto f = by_failover_.find(failover_id);
    if (f == by_failover_.end()) return std::nullopt;
    auto t = f->second.find(Key(region, table));
    if (t == f->second.end()) return std::nullopt;
    seen = t->second;
  }
  return *seen;  // copied outside the lock
}

void TableObservations::Remember(const std::string& failover_id, const std::string& region,
                                 const TableIdent& table, TableSnapshotView view) {
  if (view.etag.empty()) return;
  view.snapshot_log.clear();
  view.metadata_log.clear();
  auto kept = std::make_shared<const TableSnapshotView>(std::move(view));
  std::string key = Key(region, table);
  std::lock_guard lock(mu_);
  Tables& tables = by_failover_[failover_id];
  auto [it, added] = tables.try_emplace(std::move(key), kept);
  if (!added) {
    it->second = std::move(kept);
    return;
  }
  if (size_ >= max_tables_) {  // full: this one is asked for in full next time
    tables.erase(it);
    if (tables.empty()) by_failover_.erase(failover_id);
    return;
  }
  ++size_;
}

void TableObservations::Forget(const std::string& failover_id) {
  std::lock_guard lock(mu_);
  auto f = by_failover_.find(failover_id);
  if (f == by_failover_.end()) return;
  size_ -= f->second.size();
  by_failover_.erase(f);
}

std::size_t TableObservations::size() const {
  std::lock_guard lock(mu_);
  return size_;
}

}  // namespace icewarden
