// CatalogStore's drops, renames, registers and multi-table swaps (a transaction's commit).
#include "examples/lab/catalog_store.h"
#include "examples/lab/store_sql.h"

namespace icewarden::lab {

bool CatalogStore::TableExistsLocked(const TableIdent& table) {
  Statement exists(*statements_, "SELECT 1 FROM tables WHERE namespace = ? AND name = ?");
  return exists.Bind(1, table.NamespaceKey()).Bind(2, table.name).Step();
}

StoreOutcome CatalogStore::DropTable(const TableIdent& table,
                                     const std::optional<std::string>& expected_location,
                                     bool purge, int64_t now_ms) {
  std::lock_guard lock(mutex_);
  Transaction transaction(*statements_);
  std::string location;
  std::optional<std::string> text;  // kept for register
  {
    Statement current(
        *statements_,
        "SELECT t.metadata_location, f.metadata FROM tables t LEFT JOIN metadata_files f"
        " ON f.namespace = t.namespace AND f.name = t.name AND f.location = t.metadata_location"
        " WHERE t.namespace = ? AND t.name = ?");
    if (!current.Bind(1, table.NamespaceKey()).Bind(2, table.name).Step()) {
      return StoreOutcome::kNotFound;
    }
    location = current.Text(0);
    if (!purge && !current.IsNull(1)) text = current.Text(1);
  }
  if (expected_location && *expected_location != location) return StoreOutcome::kConflict;
  const json history = HistoryLocked(table);
  Statement forget_files(*statements_,
                         "DELETE FROM metadata_files WHERE namespace = ? AND name = ?");
  forget_files.Bind(1, table.NamespaceKey()).Bind(2, table.name).Step();
  Statement forget_table(*statements_, "DELETE FROM tables WHERE namespace = ? AND name = ?");
  forget_table.Bind(1, table.NamespaceKey()).Bind(2, table.name).Step();
  TombstoneLocked(table, location, history, now_ms, text ? &*text : nullptr);
  NoteChangeLocked(table);
  transaction.Commit();
  return StoreOutcome::kOk;
}

std::optional<DroppedTable> CatalogStore::Dropped(const TableIdent& table) {
  std::lock_guard lock(mutex_);
  Statement query(*statements_,
                  "SELECT location, history, dropped_ms, metadata IS NULL FROM dropped_tables"
                  " WHERE namespace = ? AND name = ?");
  if (!query.Bind(1, table.NamespaceKey()).Bind(2, table.name).Step()) return std::nullopt;
  DroppedTable dropped;
  dropped.location = query.Text(0);
  for (const auto& location : json::parse(query.Text(1))) dropped.history.push_back(location);
  dropped.dropped_ms = query.Int(2);
  dropped.purged = query.Int(3) != 0;
  return dropped;
}

StoreOutcome CatalogStore::RenameTable(const TableIdent& from, const TableIdent& to,
                                       int64_t now_ms) {
  std::lock_guard lock(mutex_);
  Transaction transaction(*statements_);
  const std::optional<std::string> location = CurrentLocationLocked(from);
  if (!location) return StoreOutcome::kNotFound;
  if (!NamespaceExistsLocked(to.NamespaceKey())) return StoreOutcome::kNoNamespace;
  if (TableExistsLocked(to) || ViewExistsLocked(to)) return StoreOutcome::kAlreadyExists;
  const json history = HistoryLocked(from);
  for (const char* sql : {"UPDATE metadata_files SET namespace = ?, name = ?"
                          " WHERE namespace = ? AND name = ?",
                          "UPDATE tables SET namespace = ?, name = ?"
                          " WHERE namespace = ? AND name = ?"}) {
    Statement move(*statements_, sql);
    move.Bind(1, to.NamespaceKey())
        .Bind(2, to.name)
        .Bind(3, from.NamespaceKey())
        .Bind(4, from.name)
        .Step();
  }
  // The source's tombstone: replicas holding it drop their copy, as they get the destination
  // from replication. Purged: the metadata lives on at the destination.
  TombstoneLocked(from, *location, history, now_ms, nullptr);
  Statement undrop(*statements_, "DELETE FROM dropped_tables WHERE namespace = ? AND name = ?");
  undrop.Bind(1, to.NamespaceKey()).Bind(2, to.name).Step();
  NoteChangeLocked(from);
  NoteChangeLocked(to);
  transaction.Commit();
  return StoreOutcome::kOk;
}

std::optional<std::string> CatalogStore::ReadableMetadata(const std::string& location) {
  std::lock_guard lock(mutex_);
  Statement kept(*statements_,
                 "SELECT metadata FROM metadata_files WHERE location = ? AND metadata IS NOT NULL"
                 " LIMIT 1");
  if (kept.Bind(1, location).Step()) return kept.Text(0);
  Statement dropped(*statements_,
                    "SELECT metadata FROM dropped_tables WHERE location = ?"
                    " AND metadata IS NOT NULL LIMIT 1");
  if (dropped.Bind(1, location).Step()) return dropped.Text(0);
  return std::nullopt;
}

StoreOutcome CatalogStore::RegisterTable(const TableIdent& table, const std::string& location,
                                         const json& metadata, std::string text, bool overwrite,
                                         int64_t now_ms) {
  const MetadataRow row = RowOf(metadata, std::move(text));
  std::lock_guard lock(mutex_);
  Transaction transaction(*statements_);
  if (!NamespaceExistsLocked(table.NamespaceKey())) return StoreOutcome::kNoNamespace;
  if (ViewExistsLocked(table)) return StoreOutcome::kAlreadyExists;
  if (TableExistsLocked(table) && !overwrite) return StoreOutcome::kAlreadyExists;
  InsertFileLocked(table, location, now_ms, &row.text);
  UpsertTableLocked(table, location, row);
  transaction.Commit();
  return StoreOutcome::kOk;
}

StoreOutcome CatalogStore::SwapTables(const std::vector<TableSwap>& swaps, int64_t now_ms,
                                      std::size_t* failed) {
  std::vector<MetadataRow> rows;
  rows.reserve(swaps.size());
  for (const auto& swap : swaps) rows.push_back(RowOf(swap.metadata, swap.text));
  std::lock_guard lock(mutex_);
  Transaction transaction(*statements_);
  for (std::size_t i = 0; i < swaps.size(); ++i) {
    const std::optional<std::string> current = CurrentLocationLocked(swaps[i].table);
    if (!current) {
      *failed = i;
      return StoreOutcome::kNotFound;  // rolled back: nothing applied
    }
    if (*current != swaps[i].expected_location) {
      *failed = i;
      return StoreOutcome::kConflict;
    }
  }
  for (std::size_t i = 0; i < swaps.size(); ++i) {
    InsertFileLocked(swaps[i].table, swaps[i].location, now_ms, &rows[i].text);
    UpsertTableLocked(swaps[i].table, swaps[i].location, rows[i]);
  }
  transaction.Commit();
  return StoreOutcome::kOk;
}

json CatalogStore::HistoryLocked(const TableIdent& table) {
  json history = json::array();
  Statement files(*statements_,
                  "SELECT location FROM metadata_files WHERE namespace = ? AND name = ?"
                  " ORDER BY id");
  files.Bind(1, table.NamespaceKey()).Bind(2, table.name);
  while (files.Step()) history.push_back(files.Text(0));
  return history;
}

void CatalogStore::TombstoneLocked(const TableIdent& table, const std::string& location,
                                   const json& history, int64_t now_ms,
                                   const std::string* metadata) {
  Statement tombstone(*statements_,
                      "INSERT OR REPLACE INTO dropped_tables"
                      " (namespace, name, location, history, dropped_ms, metadata)"
                      " VALUES (?, ?, ?, ?, ?, ?)");
  tombstone.Bind(1, table.NamespaceKey())
      .Bind(2, table.name)
      .Bind(3, location)
      .Bind(4, history.dump())
      .Bind(5, now_ms);
  if (metadata) {
    tombstone.Bind(6, *metadata);
  } else {
    tombstone.BindNull(6);
  }
  tombstone.Step();
}

}  // namespace icewarden::lab
