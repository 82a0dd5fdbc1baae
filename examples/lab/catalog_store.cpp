#include "examples/lab/catalog_store.h"

#include <stdexcept>

#include "examples/lab/store_sql.h"

namespace icewarden::lab {
namespace {

// Keep the JSON of this many newest metadata files per table; older rows keep only their
// location and time, which is all that replication's ancestry check needs.
constexpr int kMetadataJsonKept = 300;

const char* kSchema = R"(
CREATE TABLE IF NOT EXISTS namespaces (
  name TEXT PRIMARY KEY,
  properties TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS tables (
  namespace TEXT NOT NULL,
  name TEXT NOT NULL,
  metadata_location TEXT NOT NULL,
  owner_claim TEXT NOT NULL DEFAULT '',
  epoch_claim INTEGER NOT NULL DEFAULT -1,
  main_snapshot_id INTEGER NOT NULL DEFAULT -1,
  PRIMARY KEY (namespace, name));
CREATE TABLE IF NOT EXISTS metadata_files (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  namespace TEXT NOT NULL,
  name TEXT NOT NULL,
  location TEXT NOT NULL,
  committed_ms INTEGER NOT NULL,
  metadata TEXT);
CREATE UNIQUE INDEX IF NOT EXISTS metadata_files_by_location
  ON metadata_files (namespace, name, location);
CREATE INDEX IF NOT EXISTS metadata_files_by_table ON metadata_files (namespace, name, id);
CREATE TABLE IF NOT EXISTS dropped_tables (
  namespace TEXT NOT NULL,
  name TEXT NOT NULL,
  location TEXT NOT NULL,
  history TEXT NOT NULL,
  dropped_ms INTEGER NOT NULL,
  metadata TEXT,
  PRIMARY KEY (namespace, name));
CREATE TABLE IF NOT EXISTS views (
  namespace TEXT NOT NULL,
  name TEXT NOT NULL,
  metadata_location TEXT NOT NULL,
  metadata TEXT NOT NULL,
  committed_ms INTEGER NOT NULL,
  PRIMARY KEY (namespace, name));
CREATE TABLE IF NOT EXISTS dropped_views (
  namespace TEXT NOT NULL,
  name TEXT NOT NULL,
  location TEXT NOT NULL,
  dropped_ms INTEGER NOT NULL,
  PRIMARY KEY (namespace, name));
CREATE TABLE IF NOT EXISTS idempotency_keys (
  key TEXT PRIMARY KEY,
  status INTEGER NOT NULL,
  body TEXT NOT NULL,
  etag TEXT NOT NULL,
  created_ms INTEGER NOT NULL);
)";

std::string OwnerClaimOf(const json& properties) { return properties.value("icewarden.owner", ""); }

int64_t EpochClaimOf(const json& properties) {
  try {
    return std::stoll(properties.value("icewarden.epoch", "-1"));
  } catch (const std::exception&) {
    return -1;
  }
}

}  // namespace

std::unique_ptr<CatalogStore> CatalogStore::Open(const std::string& path, LabStatus* status) {
  sqlite3* db = nullptr;
  int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX;
  if (sqlite3_open_v2(path.c_str(), &db, flags, nullptr) != SQLITE_OK) {
    *status = LabStatus::Error("cannot open " + path + ": " + sqlite3_errmsg(db));
    sqlite3_close(db);
    return nullptr;
  }
  std::unique_ptr<CatalogStore> store(new CatalogStore(db));
  try {
    sqlite3_busy_timeout(db, 5000);
    // No fsync: a lab region must survive its process being killed (the OS still has every
    // write), not a power cut. With synchronous=NORMAL, WAL checkpoints fsync'd inside commits
    // and stalled every request queued behind them by tens of milliseconds.
    store->Exec("PRAGMA journal_mode=WAL; PRAGMA synchronous=OFF;");
    Statement existing(*store->statements_,
                       "SELECT count(*) FROM sqlite_master WHERE name = 'tables'");
    existing.Step();
    store->created_ = existing.Int(0) == 0;
    store->Exec(kSchema);
  } catch (const std::exception& e) {
    *status = LabStatus::Error(path + ": " + e.what());
    return nullptr;
  }
  *status = LabStatus::Ok();
  return store;
}

CatalogStore::CatalogStore(sqlite3* db)
    : db_(db), statements_(std::make_unique<StatementCache>(db)) {}

CatalogStore::~CatalogStore() {
  statements_.reset();  // finalized before the connection closes
  sqlite3_close(db_);
}

void CatalogStore::Exec(const std::string& sql) {
  char* error = nullptr;
  if (sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &error) != SQLITE_OK) {
    std::string message = error ? error : "unknown error";
    sqlite3_free(error);
    throw std::runtime_error("sqlite: " + message);
  }
}

bool CatalogStore::NamespaceExistsLocked(const std::string& key) {
  Statement query(*statements_, "SELECT 1 FROM namespaces WHERE name = ?");
  return query.Bind(1, key).Step();
}

StoreOutcome CatalogStore::CreateNamespace(const std::vector<std::string>& levels,
                                           const json& properties) {
  std::lock_guard lock(mutex_);
  std::string key = JoinNamespace(levels, kNamespaceSeparator);
  if (NamespaceExistsLocked(key)) return StoreOutcome::kAlreadyExists;
  if (levels.size() > 1) {
    std::vector<std::string> parent(levels.begin(), levels.end() - 1);
    if (!NamespaceExistsLocked(JoinNamespace(parent, kNamespaceSeparator))) {
      return StoreOutcome::kNotFound;
    }
  }
  Statement insert(*statements_, "INSERT INTO namespaces (name, properties) VALUES (?, ?)");
  insert.Bind(1, key).Bind(2, properties.dump()).Step();
  return StoreOutcome::kOk;
}

std::optional<json> CatalogStore::NamespaceProperties(const std::vector<std::string>& levels) {
  std::lock_guard lock(mutex_);
  Statement query(*statements_, "SELECT properties FROM namespaces WHERE name = ?");
  if (!query.Bind(1, JoinNamespace(levels, kNamespaceSeparator)).Step()) return std::nullopt;
  return json::parse(query.Text(0));
}

std::vector<std::vector<std::string>> CatalogStore::ChildNamespaces(
    const std::vector<std::string>& parent) {
  std::lock_guard lock(mutex_);
  std::vector<std::vector<std::string>> children;
  Statement query(*statements_, "SELECT name FROM namespaces ORDER BY name");
  while (query.Step()) {
    auto levels = SplitNamespace(query.Text(0), kNamespaceSeparator);
    if (levels.size() != parent.size() + 1) continue;
    if (!std::equal(parent.begin(), parent.end(), levels.begin())) continue;
    children.push_back(levels);
  }
  return children;
}

std::vector<std::string> CatalogStore::TableNames(const std::vector<std::string>& ns) {
  std::lock_guard lock(mutex_);
  std::vector<std::string> names;
  Statement query(*statements_, "SELECT name FROM tables WHERE namespace = ? ORDER BY name");
  query.Bind(1, JoinNamespace(ns, kNamespaceSeparator));
  while (query.Step()) names.push_back(query.Text(0));
  return names;
}

std::optional<TableText> CatalogStore::LoadTableText(const TableIdent& table) {
  std::lock_guard lock(mutex_);
  Statement query(*statements_,
                  "SELECT t.metadata_location, f.metadata FROM tables t JOIN metadata_files f"
                  " ON f.namespace = t.namespace AND f.name = t.name"
                  " AND f.location = t.metadata_location"
                  " WHERE t.namespace = ? AND t.name = ?");
  if (!query.Bind(1, table.NamespaceKey()).Bind(2, table.name).Step()) return std::nullopt;
  return TableText{query.Text(0), query.Text(1)};
}

std::optional<LoadedTable> CatalogStore::LoadTable(const TableIdent& table) {
  auto loaded = LoadTableText(table);
  if (!loaded) return std::nullopt;
  // Parsed outside the mutex: every other request of the region waits on it.
  json metadata = json::parse(loaded->text);
  return LoadedTable{std::move(loaded->location), std::move(metadata), std::move(loaded->text)};
}

std::optional<std::string> CatalogStore::CurrentLocation(const TableIdent& table) {
  std::lock_guard lock(mutex_);
  return CurrentLocationLocked(table);
}

std::optional<std::string> CatalogStore::CurrentLocationLocked(const TableIdent& table) {
  Statement query(*statements_,
                  "SELECT metadata_location FROM tables WHERE namespace = ? AND name = ?");
  if (!query.Bind(1, table.NamespaceKey()).Bind(2, table.name).Step()) return std::nullopt;
  return query.Text(0);
}

CatalogStore::MetadataRow CatalogStore::RowOf(const json& metadata) {
  return RowOf(metadata, metadata.dump());
}

CatalogStore::MetadataRow CatalogStore::RowOf(const json& metadata, std::string text) {
  const json properties = metadata.value("properties", json::object());
  return {std::move(text), OwnerClaimOf(properties), EpochClaimOf(properties),
          metadata.value("current-snapshot-id", int64_t{-1})};
}

void CatalogStore::InsertFileLocked(const TableIdent& table, const std::string& location,
                                    int64_t committed_ms, const std::string* metadata_text) {
  Statement insert(*statements_,
                   "INSERT OR IGNORE INTO metadata_files"
                   " (namespace, name, location, committed_ms, metadata) VALUES (?, ?, ?, ?, ?)");
  insert.Bind(1, table.NamespaceKey()).Bind(2, table.name).Bind(3, location).Bind(4, committed_ms);
  if (metadata_text) {
    insert.Bind(5, *metadata_text);
  } else {
    insert.BindNull(5);
  }
  insert.Step();
  Statement prune(*statements_,
                  "UPDATE metadata_files SET metadata = NULL WHERE namespace = ?1 AND name = ?2"
                  " AND metadata IS NOT NULL AND id <= (SELECT id FROM metadata_files"
                  " WHERE namespace = ?1 AND name = ?2 ORDER BY id DESC LIMIT 1 OFFSET ?3)");
  prune.Bind(1, table.NamespaceKey()).Bind(2, table.name).Bind(3, int64_t{kMetadataJsonKept});
  prune.Step();
}

void CatalogStore::UpsertTableLocked(const TableIdent& table, const std::string& location,
                                     const MetadataRow& row) {
  Statement upsert(*statements_,
                   "INSERT INTO tables (namespace, name, metadata_location, owner_claim,"
                   " epoch_claim, main_snapshot_id) VALUES (?, ?, ?, ?, ?, ?)"
                   " ON CONFLICT (namespace, name) DO UPDATE SET"
                   " metadata_location = excluded.metadata_location,"
                   " owner_claim = excluded.owner_claim, epoch_claim = excluded.epoch_claim,"
                   " main_snapshot_id = excluded.main_snapshot_id");
  upsert.Bind(1, table.NamespaceKey())
      .Bind(2, table.name)
      .Bind(3, location)
      .Bind(4, row.owner_claim)
      .Bind(5, row.epoch_claim)
      .Bind(6, row.main_snapshot_id)
      .Step();
  // A table that exists again is no longer dropped here (replication must not drop it).
  Statement undrop(*statements_, "DELETE FROM dropped_tables WHERE namespace = ? AND name = ?");
  undrop.Bind(1, table.NamespaceKey()).Bind(2, table.name).Step();
  NoteChangeLocked(table);
}

void CatalogStore::NoteChangeLocked(const TableIdent& table) {
  // Bounded: a reader that fell this far behind reads every head instead.
  constexpr std::size_t kChangesKept = 1 << 16;
  if (changes_.size() >= kChangesKept) {
    changes_base_ += changes_.size();
    changes_.clear();
  }
  changes_.push_back(table);
}

uint64_t CatalogStore::ChangeCursor() {
  std::lock_guard lock(mutex_);
  return changes_base_ + changes_.size();
}

std::optional<std::vector<TableIdent>> CatalogStore::ChangedSince(uint64_t* cursor) {
  std::lock_guard lock(mutex_);
  const uint64_t end = changes_base_ + changes_.size();
  if (*cursor < changes_base_ || *cursor > end) return std::nullopt;
  // What came before `*cursor` is read: the one reader never asks for it again.
  changes_.erase(changes_.begin(),
                 changes_.begin() + static_cast<std::ptrdiff_t>(*cursor - changes_base_));
  changes_base_ = *cursor;
  std::vector<TableIdent> changed(changes_.begin(), changes_.end());
  *cursor = end;
  return changed;
}

StoreOutcome CatalogStore::CreateTable(const TableIdent& table, const std::string& location,
                                       const json& metadata, int64_t now_ms) {
  const MetadataRow row = RowOf(metadata);
  std::lock_guard lock(mutex_);
  Transaction transaction(*statements_);
  if (!NamespaceExistsLocked(table.NamespaceKey())) return StoreOutcome::kNotFound;
  Statement exists(*statements_, "SELECT 1 FROM tables WHERE namespace = ? AND name = ?");
  if (exists.Bind(1, table.NamespaceKey()).Bind(2, table.name).Step()) {
    return StoreOutcome::kAlreadyExists;
  }
  InsertFileLocked(table, location, now_ms, &row.text);
  UpsertTableLocked(table, location, row);
  transaction.Commit();
  return StoreOutcome::kOk;
}

StoreOutcome CatalogStore::SwapTable(const TableIdent& table, const std::string& expected_location,
                                     const std::string& location, const json& metadata,
                                     std::string metadata_text, int64_t now_ms) {
  return SwapRow(table, expected_location, location,
                 RowOf(metadata, std::move(metadata_text)),  // before the mutex
                 now_ms);
}

StoreOutcome CatalogStore::SwapTable(const TableIdent& table, const std::string& expected_location,
                                     const std::string& location, std::string metadata_text,
                                     const json& properties, int64_t main_snapshot_id,
                                     int64_t now_ms) {
  return SwapRow(table, expected_location, location,
                 {std::move(metadata_text), OwnerClaimOf(properties), EpochClaimOf(properties),
                  main_snapshot_id},
                 now_ms);
}

StoreOutcome CatalogStore::SwapRow(const TableIdent& table, const std::string& expected_location,
                                   const std::string& location, const MetadataRow& row,
                                   int64_t now_ms) {
  std::lock_guard lock(mutex_);
  Transaction transaction(*statements_);
  const std::optional<std::string> current = CurrentLocationLocked(table);
  if (!current) return StoreOutcome::kNotFound;
  if (*current != expected_location) return StoreOutcome::kConflict;
  InsertFileLocked(table, location, now_ms, &row.text);
  UpsertTableLocked(table, location, row);
  transaction.Commit();
  return StoreOutcome::kOk;
}

// The head in the row's columns metadata_location, owner_claim, epoch_claim, main_snapshot_id,
// starting at column `at`.
static TableHead HeadAt(Statement& row, int at, TableIdent table) {
  TableHead head;
  head.table = std::move(table);
  head.location = row.Text(at);
  head.owner_claim = row.Text(at + 1);
  head.epoch_claim = row.Int(at + 2);
  head.main_snapshot_id = row.Int(at + 3);
  return head;
}

std::vector<TableHead> CatalogStore::Heads() {
  std::lock_guard lock(mutex_);
  std::vector<TableHead> heads;
  Statement query(*statements_,
                  "SELECT namespace, name, metadata_location, owner_claim, epoch_claim,"
                  " main_snapshot_id FROM tables ORDER BY namespace, name");
  while (query.Step())
    heads.push_back(
        HeadAt(query, 2, {SplitNamespace(query.Text(0), kNamespaceSeparator), query.Text(1)}));
  return heads;
}

std::optional<TableHead> CatalogStore::Head(const TableIdent& table) {
  std::lock_guard lock(mutex_);
  Statement query(*statements_,
                  "SELECT metadata_location, owner_claim, epoch_claim, main_snapshot_id"
                  " FROM tables WHERE namespace = ? AND name = ?");
  if (!query.Bind(1, table.NamespaceKey()).Bind(2, table.name).Step()) return std::nullopt;
  return HeadAt(query, 0, table);
}

std::vector<MetadataFileRow> CatalogStore::MetadataFiles(const TableIdent& table) {
  std::lock_guard lock(mutex_);
  std::vector<MetadataFileRow> rows;
  Statement query(*statements_,
                  "SELECT location, committed_ms FROM metadata_files"
                  " WHERE namespace = ? AND name = ? ORDER BY id");
  query.Bind(1, table.NamespaceKey()).Bind(2, table.name);
  while (query.Step()) rows.push_back({query.Text(0), query.Int(1)});
  return rows;
}

std::optional<json> CatalogStore::MetadataFile(const TableIdent& table,
                                               const std::string& location) {
  std::string text;
  {
    std::lock_guard lock(mutex_);
    Statement query(*statements_,
                    "SELECT metadata FROM metadata_files"
                    " WHERE namespace = ? AND name = ? AND location = ? AND metadata IS NOT NULL");
    if (!query.Bind(1, table.NamespaceKey()).Bind(2, table.name).Bind(3, location).Step()) {
      return std::nullopt;
    }
    text = query.Text(0);
  }
  return json::parse(text);  // outside the mutex, as LoadTable parses
}

std::optional<StoredResponse> CatalogStore::FindResponse(const std::string& key,
                                                         int64_t not_before_ms) {
  std::lock_guard lock(mutex_);
  Statement query(
      *statements_,
      "SELECT status, body, etag FROM idempotency_keys WHERE key = ? AND created_ms >= ?");
  if (!query.Bind(1, key).Bind(2, not_before_ms).Step()) return std::nullopt;
  return StoredResponse{static_cast<int>(query.Int(0)), query.Text(1), query.Text(2)};
}

void CatalogStore::RememberResponse(const std::string& key, const StoredResponse& response,
                                    int64_t now_ms) {
  std::lock_guard lock(mutex_);
  Statement upsert(*statements_,
                   "INSERT OR REPLACE INTO idempotency_keys (key, status, body, etag, created_ms)"
                   " VALUES (?, ?, ?, ?, ?)");
  upsert.Bind(1, key)
      .Bind(2, int64_t{response.status})
      .Bind(3, response.body)
      .Bind(4, response.etag)
      .Bind(5, now_ms)
      .Step();
}

}  // namespace icewarden::lab
