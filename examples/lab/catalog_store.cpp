#include "examples/lab/catalog_store.h"

#include <stdexcept>
#include <unordered_map>

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
CREATE TABLE IF NOT EXISTS idempotency_keys (
  key TEXT PRIMARY KEY,
  status INTEGER NOT NULL,
  body TEXT NOT NULL,
  etag TEXT NOT NULL,
  created_ms INTEGER NOT NULL);
)";

}  // namespace

// Prepared statements, one per SQL text, kept for the connection's life: preparing (parsing)
// the same SQL for every request cost more than running it. Guarded by the store's mutex.
class StatementCache {
 public:
  explicit StatementCache(sqlite3* db) : db_(db) {}
  ~StatementCache() {
    for (auto& [sql, stmt] : cached_) sqlite3_finalize(stmt);
  }
  StatementCache(const StatementCache&) = delete;
  StatementCache& operator=(const StatementCache&) = delete;

  sqlite3* db() const { return db_; }
  // Nullptr when the SQL does not compile (sqlite3_errmsg says why).
  sqlite3_stmt* Get(const char* sql) {
    auto it = cached_.find(sql);
    if (it != cached_.end()) return it->second;
    sqlite3_stmt* stmt = nullptr;
    if (sqlite3_prepare_v3(db_, sql, -1, SQLITE_PREPARE_PERSISTENT, &stmt, nullptr) != SQLITE_OK) {
      return nullptr;
    }
    cached_.emplace(sql, stmt);
    return stmt;
  }

 private:
  sqlite3* db_;
  std::unordered_map<std::string, sqlite3_stmt*> cached_;
};

namespace {

// One use of a cached statement: reset and unbound when the scope ends. No two Statements of
// the same SQL may be alive at once (none are: every use is a short scope).
class Statement {
 public:
  Statement(StatementCache& cache, const char* sql) : db_(cache.db()), stmt_(cache.Get(sql)) {
    if (stmt_ == nullptr) Fail();
  }
  ~Statement() {
    sqlite3_reset(stmt_);
    sqlite3_clear_bindings(stmt_);
  }
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;
  Statement& Bind(int index, const std::string& value) {
    sqlite3_bind_text(stmt_, index, value.c_str(), static_cast<int>(value.size()),
                      SQLITE_TRANSIENT);
    return *this;
  }
  Statement& Bind(int index, int64_t value) {
    sqlite3_bind_int64(stmt_, index, value);
    return *this;
  }
  Statement& BindNull(int index) {
    sqlite3_bind_null(stmt_, index);
    return *this;
  }
  // True while there is a row.
  bool Step() {
    int rc = sqlite3_step(stmt_);
    if (rc == SQLITE_ROW) return true;
    if (rc != SQLITE_DONE) Fail();
    return false;
  }
  std::string Text(int column) const {
    auto* text = sqlite3_column_text(stmt_, column);
    return text ? reinterpret_cast<const char*>(text) : "";
  }
  int64_t Int(int column) const { return sqlite3_column_int64(stmt_, column); }
  bool IsNull(int column) const { return sqlite3_column_type(stmt_, column) == SQLITE_NULL; }

 private:
  [[noreturn]] void Fail() {
    throw std::runtime_error(std::string("sqlite: ") + sqlite3_errmsg(db_));
  }
  sqlite3* db_;
  sqlite3_stmt* stmt_ = nullptr;
};

// BEGIN IMMEDIATE ... COMMIT, rolled back if the scope ends without Commit(). BEGIN and COMMIT
// are cached statements too (sqlite3_exec would parse them for every commit).
class Transaction {
 public:
  explicit Transaction(StatementCache& statements) : statements_(statements) {
    Statement(statements_, "BEGIN IMMEDIATE").Step();
  }
  ~Transaction() {
    if (!done_) sqlite3_exec(statements_.db(), "ROLLBACK", nullptr, nullptr, nullptr);
  }
  void Commit() {
    Statement(statements_, "COMMIT").Step();
    done_ = true;
  }

 private:
  StatementCache& statements_;
  bool done_ = false;
};

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
  Statement current(*statements_,
                    "SELECT metadata_location FROM tables WHERE namespace = ? AND name = ?");
  if (!current.Bind(1, table.NamespaceKey()).Bind(2, table.name).Step()) {
    return StoreOutcome::kNotFound;
  }
  if (current.Text(0) != expected_location) return StoreOutcome::kConflict;
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
  Statement current(*statements_,
                    "SELECT metadata_location FROM tables WHERE namespace = ? AND name = ?");
  bool exists = current.Bind(1, table.NamespaceKey()).Bind(2, table.name).Step();
  std::string location = exists ? current.Text(0) : "";
  if (location != expected_location) return StoreOutcome::kConflict;
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
  Statement current(*statements_,
                    "SELECT metadata_location FROM tables WHERE namespace = ? AND name = ?");
  if (!current.Bind(1, table.NamespaceKey()).Bind(2, table.name).Step()) {
    return StoreOutcome::kNotFound;
  }
  if (current.Text(0) != expected_location) return StoreOutcome::kConflict;
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
  for (size_t depth = 1; depth <= table.ns.size(); ++depth) {
    std::vector<std::string> levels(table.ns.begin(), table.ns.begin() + depth);
    std::string key = JoinNamespace(levels, kNamespaceSeparator);
    if (!NamespaceExistsLocked(key)) {
      Statement insert(*statements_, "INSERT INTO namespaces (name, properties) VALUES (?, '{}')");
      insert.Bind(1, key).Step();
    }
  }
  for (size_t i = 0; i < plan.rows.size(); ++i) {
    bool last = i + 1 == plan.rows.size();
    InsertFileLocked(table, plan.rows[i].location, plan.rows[i].committed_ms,
                     last ? &target.text : nullptr);
  }
  UpsertTableLocked(table, plan.rows.back().location, target);
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
