// CatalogStore's side of replication: an owner's plan, a replica's copy, a rewind's re-seed.
#include <stdexcept>

#include "examples/lab/catalog_store.h"
#include "examples/lab/store_sql.h"

namespace icewarden::lab {

ReplicationPlan CatalogStore::PlanReplication(const TableIdent& table,
                                              const std::string& replica_location,
                                              int64_t visible_ms) {
  std::lock_guard lock(mutex_);
  ReplicationPlan plan;
  int64_t after_id = 0;
  if (!replica_location.empty()) {
    Statement find(
        *statements_,
        "SELECT id FROM metadata_files WHERE namespace = ? AND name = ? AND location = ?");
    if (!find.Bind(1, table.NamespaceKey()).Bind(2, table.name).Bind(3, replica_location).Step()) {
      plan.kind = ReplicationPlan::Kind::kDiverged;
      return plan;
    }
    after_id = find.Int(0);
  }
  Statement newer(*statements_,
                  "SELECT id, location, committed_ms, metadata FROM metadata_files"
                  " WHERE namespace = ? AND name = ? AND id > ? ORDER BY id");
  newer.Bind(1, table.NamespaceKey()).Bind(2, table.name).Bind(3, after_id);
  std::string target_text;
  while (newer.Step()) {
    ++plan.pending;
    int64_t committed_ms = newer.Int(2);
    if (committed_ms > visible_ms) {
      if (plan.first_invisible_ms < 0) plan.first_invisible_ms = committed_ms;
      continue;
    }
    // A file committed later than a still-invisible one cannot be visible before it.
    if (static_cast<int64_t>(plan.rows.size()) + 1 != plan.pending) continue;
    plan.rows.push_back({newer.Text(1), committed_ms});
    target_text = newer.IsNull(3) ? "" : newer.Text(3);
  }
  if (plan.rows.empty()) return plan;
  if (target_text.empty()) {
    throw std::runtime_error("metadata of " + plan.rows.back().location + " was pruned");
  }
  plan.kind = ReplicationPlan::Kind::kCopy;
  plan.target_metadata = json::parse(target_text);
  return plan;
}

StoreOutcome CatalogStore::ApplyReplication(const TableIdent& table,
                                            const std::string& expected_location,
                                            const ReplicationPlan& plan) {
  const MetadataRow target = RowOf(plan.target_metadata);
  std::lock_guard lock(mutex_);
  Transaction transaction(*statements_);
  if (CurrentLocationLocked(table).value_or("") != expected_location) {
    return StoreOutcome::kConflict;
  }
  CopyPlanLocked(table, plan, target);
  transaction.Commit();
  return StoreOutcome::kOk;
}

StoreOutcome CatalogStore::ReseedReplica(const TableIdent& table,
                                         const std::string& expected_location,
                                         const ReplicationPlan& plan) {
  const MetadataRow target = RowOf(plan.target_metadata);
  std::lock_guard lock(mutex_);
  Transaction transaction(*statements_);
  const std::optional<std::string> current = CurrentLocationLocked(table);
  if (!current) return StoreOutcome::kNotFound;
  if (*current != expected_location) return StoreOutcome::kConflict;
  // The divergent files go too: were this region to own the table later, a region still at
  // one of them must count as diverged from it, not as behind.
  Statement forget(*statements_, "DELETE FROM metadata_files WHERE namespace = ? AND name = ?");
  forget.Bind(1, table.NamespaceKey()).Bind(2, table.name).Step();
  CopyPlanLocked(table, plan, target);
  transaction.Commit();
  return StoreOutcome::kOk;
}

void CatalogStore::CopyPlanLocked(const TableIdent& table, const ReplicationPlan& plan,
                                  const MetadataRow& target) {
  EnsureNamespacesLocked(table.ns);
  for (size_t i = 0; i < plan.rows.size(); ++i) {
    bool last = i + 1 == plan.rows.size();
    InsertFileLocked(table, plan.rows[i].location, plan.rows[i].committed_ms,
                     last ? &target.text : nullptr);
  }
  UpsertTableLocked(table, plan.rows.back().location, target);
}

void CatalogStore::EnsureNamespacesLocked(const std::vector<std::string>& ns) {
  for (size_t depth = 1; depth <= ns.size(); ++depth) {
    std::vector<std::string> levels(ns.begin(), ns.begin() + depth);
    std::string key = JoinNamespace(levels, kNamespaceSeparator);
    if (!NamespaceExistsLocked(key)) {
      Statement insert(*statements_, "INSERT INTO namespaces (name, properties) VALUES (?, '{}')");
      insert.Bind(1, key).Step();
    }
  }
}

}  // namespace icewarden::lab
