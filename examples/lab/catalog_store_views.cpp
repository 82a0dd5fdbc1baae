// CatalogStore's views: each view is its current metadata file (location and JSON); a drop
// leaves a tombstone that replication reads, as for tables.
#include "examples/lab/catalog_store.h"
#include "examples/lab/store_sql.h"

namespace icewarden::lab {

bool CatalogStore::ViewExistsLocked(const TableIdent& view) {
  Statement exists(*statements_, "SELECT 1 FROM views WHERE namespace = ? AND name = ?");
  return exists.Bind(1, view.NamespaceKey()).Bind(2, view.name).Step();
}

std::vector<std::string> CatalogStore::ViewNames(const std::vector<std::string>& ns) {
  std::lock_guard lock(mutex_);
  std::vector<std::string> names;
  Statement query(*statements_, "SELECT name FROM views WHERE namespace = ? ORDER BY name");
  query.Bind(1, JoinNamespace(ns, kNamespaceSeparator));
  while (query.Step()) names.push_back(query.Text(0));
  return names;
}

std::optional<TableText> CatalogStore::LoadView(const TableIdent& view) {
  std::lock_guard lock(mutex_);
  Statement query(*statements_,
                  "SELECT metadata_location, metadata FROM views WHERE namespace = ? AND name = ?");
  if (!query.Bind(1, view.NamespaceKey()).Bind(2, view.name).Step()) return std::nullopt;
  return TableText{query.Text(0), query.Text(1)};
}

namespace {

// Puts the view's row in place (insert or replace) and clears its tombstone.
void PutViewRow(StatementCache& statements, const TableIdent& view, const std::string& location,
                const std::string& text, int64_t committed_ms) {
  Statement put(statements,
                "INSERT OR REPLACE INTO views (namespace, name, metadata_location, metadata,"
                " committed_ms) VALUES (?, ?, ?, ?, ?)");
  put.Bind(1, view.NamespaceKey())
      .Bind(2, view.name)
      .Bind(3, location)
      .Bind(4, text)
      .Bind(5, committed_ms)
      .Step();
  Statement undrop(statements, "DELETE FROM dropped_views WHERE namespace = ? AND name = ?");
  undrop.Bind(1, view.NamespaceKey()).Bind(2, view.name).Step();
}

std::optional<std::string> ViewLocation(StatementCache& statements, const TableIdent& view) {
  Statement current(statements,
                    "SELECT metadata_location FROM views WHERE namespace = ? AND name = ?");
  if (!current.Bind(1, view.NamespaceKey()).Bind(2, view.name).Step()) return std::nullopt;
  return current.Text(0);
}

}  // namespace

StoreOutcome CatalogStore::CreateView(const TableIdent& view, const std::string& location,
                                      const std::string& text, int64_t now_ms) {
  std::lock_guard lock(mutex_);
  Transaction transaction(*statements_);
  if (!NamespaceExistsLocked(view.NamespaceKey())) return StoreOutcome::kNoNamespace;
  if (ViewExistsLocked(view) || TableExistsLocked(view)) return StoreOutcome::kAlreadyExists;
  PutViewRow(*statements_, view, location, text, now_ms);
  transaction.Commit();
  return StoreOutcome::kOk;
}

StoreOutcome CatalogStore::SwapView(const TableIdent& view, const std::string& expected_location,
                                    const std::string& location, const std::string& text,
                                    int64_t now_ms) {
  std::lock_guard lock(mutex_);
  Transaction transaction(*statements_);
  auto current = ViewLocation(*statements_, view);
  if (!current) return StoreOutcome::kNotFound;
  if (*current != expected_location) return StoreOutcome::kConflict;
  PutViewRow(*statements_, view, location, text, now_ms);
  transaction.Commit();
  return StoreOutcome::kOk;
}

StoreOutcome CatalogStore::DropView(const TableIdent& view,
                                    const std::optional<std::string>& expected_location,
                                    int64_t now_ms) {
  std::lock_guard lock(mutex_);
  Transaction transaction(*statements_);
  auto current = ViewLocation(*statements_, view);
  if (!current) return StoreOutcome::kNotFound;
  if (expected_location && *current != *expected_location) return StoreOutcome::kConflict;
  Statement forget(*statements_, "DELETE FROM views WHERE namespace = ? AND name = ?");
  forget.Bind(1, view.NamespaceKey()).Bind(2, view.name).Step();
  Statement tombstone(*statements_,
                      "INSERT OR REPLACE INTO dropped_views (namespace, name, location, dropped_ms)"
                      " VALUES (?, ?, ?, ?)");
  tombstone.Bind(1, view.NamespaceKey()).Bind(2, view.name).Bind(3, *current).Bind(4, now_ms);
  tombstone.Step();
  transaction.Commit();
  return StoreOutcome::kOk;
}

StoreOutcome CatalogStore::RenameView(const TableIdent& from, const TableIdent& to,
                                      int64_t now_ms) {
  std::lock_guard lock(mutex_);
  Transaction transaction(*statements_);
  std::string location, text;
  {
    Statement current(
        *statements_,
        "SELECT metadata_location, metadata FROM views WHERE namespace = ? AND name = ?");
    if (!current.Bind(1, from.NamespaceKey()).Bind(2, from.name).Step()) {
      return StoreOutcome::kNotFound;
    }
    location = current.Text(0);
    text = current.Text(1);
  }
  if (!NamespaceExistsLocked(to.NamespaceKey())) return StoreOutcome::kNoNamespace;
  if (ViewExistsLocked(to) || TableExistsLocked(to)) return StoreOutcome::kAlreadyExists;
  Statement forget(*statements_, "DELETE FROM views WHERE namespace = ? AND name = ?");
  forget.Bind(1, from.NamespaceKey()).Bind(2, from.name).Step();
  Statement tombstone(*statements_,
                      "INSERT OR REPLACE INTO dropped_views (namespace, name, location, dropped_ms)"
                      " VALUES (?, ?, ?, ?)");
  tombstone.Bind(1, from.NamespaceKey()).Bind(2, from.name).Bind(3, location).Bind(4, now_ms);
  tombstone.Step();
  PutViewRow(*statements_, to, location, text, now_ms);
  transaction.Commit();
  return StoreOutcome::kOk;
}

std::vector<ViewHead> CatalogStore::ViewHeads() {
  std::lock_guard lock(mutex_);
  std::vector<ViewHead> heads;
  Statement query(*statements_,
                  "SELECT namespace, name, metadata_location, committed_ms FROM views"
                  " ORDER BY namespace, name");
  while (query.Step()) {
    heads.push_back({{SplitNamespace(query.Text(0), kNamespaceSeparator), query.Text(1)},
                     query.Text(2),
                     query.Int(3)});
  }
  return heads;
}

std::optional<DroppedView> CatalogStore::DroppedViewOf(const TableIdent& view) {
  std::lock_guard lock(mutex_);
  Statement query(
      *statements_,
      "SELECT location, dropped_ms FROM dropped_views WHERE namespace = ? AND name = ?");
  if (!query.Bind(1, view.NamespaceKey()).Bind(2, view.name).Step()) return std::nullopt;
  return DroppedView{query.Text(0), query.Int(1)};
}

StoreOutcome CatalogStore::CopyView(const TableIdent& view, const std::string& expected_location,
                                    const ViewHead& owner_head, const std::string& text) {
  std::lock_guard lock(mutex_);
  Transaction transaction(*statements_);
  if (ViewLocation(*statements_, view).value_or("") != expected_location) {
    return StoreOutcome::kConflict;
  }
  EnsureNamespacesLocked(view.ns);
  PutViewRow(*statements_, view, owner_head.location, text, owner_head.committed_ms);
  transaction.Commit();
  return StoreOutcome::kOk;
}

}  // namespace icewarden::lab
