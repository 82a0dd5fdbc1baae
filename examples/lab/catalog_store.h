// CatalogStore: one region's catalog state in its own SQLite file (DIR/REGION.db): namespaces,
// the current metadata-location of every table, every metadata file the table has had (the JSON
// of the newest ones), the tables dropped here (tombstones that replication and register read),
// views (each its current metadata file) and the views dropped here, and finalized responses per
// Idempotency-Key. Tables: catalog_store.cpp; drops, renames, registers and multi-table swaps:
// catalog_store_moves.cpp; views: catalog_store_views.cpp.
//
// Thread-safety: every method is safe to call from any thread; one mutex serializes access to
// the connection, and each method is one transaction. Table pointer moves are compare-and-swap
// on the metadata-location, like a real catalog's commit. SQLite failures (disk full, corrupt
// file) throw std::runtime_error; the HTTP layer turns them into 500s.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "examples/lab/lab_status.h"
#include "examples/lab/table_ident.h"

namespace icewarden::lab {

using nlohmann::json;

// kNoNamespace: the namespace something was to be put in does not exist.
enum class StoreOutcome { kOk, kAlreadyExists, kNotFound, kConflict, kNoNamespace };

struct LoadedTable {
  std::string location;
  json metadata;
  std::string text;  // `metadata` as stored (its JSON text)
};

// A table's metadata-location and its metadata's JSON text, unparsed.
struct TableText {
  std::string location;
  std::string text;
};

// What the replicator and GET /lab/state need of a table without parsing its metadata.
struct TableHead {
  TableIdent table;
  std::string location;
  std::string owner_claim;   // property icewarden.owner, or ""
  int64_t epoch_claim = -1;  // property icewarden.epoch, or -1
  int64_t main_snapshot_id = -1;
};

struct MetadataFileRow {
  std::string location;
  int64_t committed_ms = 0;
};

// What an owner's history says a replica should receive (see PlanReplication).
struct ReplicationPlan {
  enum class Kind { kNothing, kCopy, kDiverged } kind = Kind::kNothing;
  std::vector<MetadataFileRow> rows;  // kCopy: files to copy, oldest first
  json target_metadata;               // kCopy: metadata of the last row
  int64_t pending = 0;                // owner files newer than the replica's, visible or not
  // The commit time of the oldest file not visible yet (pending > rows.size()), else -1.
  int64_t first_invisible_ms = -1;
};

// What a region keeps of a table it dropped, or renamed away, until the name is used again.
struct DroppedTable {
  std::string location;              // its metadata-location when dropped
  std::vector<std::string> history;  // every metadata location it had here, oldest first
  int64_t dropped_ms = 0;
  bool purged = false;  // purgeRequested or renamed: no metadata kept (register cannot read it)
};

// One table's pointer move in a multi-table swap (SwapTables).
struct TableSwap {
  TableIdent table;
  std::string expected_location;
  std::string location;
  json metadata;
  std::string text;  // `metadata` serialized
};

// A view's current metadata file and when it was written (or copied) here.
struct ViewHead {
  TableIdent view;
  std::string location;
  int64_t committed_ms = 0;
};

struct DroppedView {
  std::string location;  // its metadata-location when dropped
  int64_t dropped_ms = 0;
};

struct StoredResponse {
  int status = 0;
  std::string body;
  std::string etag;
};

class StatementCache;

class CatalogStore {
 public:
  // Opens (creating if needed) the SQLite file at `path`.
  static std::unique_ptr<CatalogStore> Open(const std::string& path, LabStatus* status);
  ~CatalogStore();
  CatalogStore(const CatalogStore&) = delete;
  CatalogStore& operator=(const CatalogStore&) = delete;

  // True when Open created the file's schema (a new lab region, to be seeded).
  bool created() const { return created_; }

  // kAlreadyExists, or kNotFound when a parent level is missing.
  StoreOutcome CreateNamespace(const std::vector<std::string>& levels, const json& properties);
  std::optional<json> NamespaceProperties(const std::vector<std::string>& levels);
  // Direct children of `parent` (all top-level namespaces when empty), sorted.
  std::vector<std::vector<std::string>> ChildNamespaces(const std::vector<std::string>& parent);
  std::vector<std::string> TableNames(const std::vector<std::string>& ns);

  std::optional<LoadedTable> LoadTable(const TableIdent& table);
  // LoadTable without the parse, for callers that may only need the text.
  std::optional<TableText> LoadTableText(const TableIdent& table);
  // The table's metadata-location alone (no metadata read), nullopt when it does not exist.
  std::optional<std::string> CurrentLocation(const TableIdent& table);
  // kAlreadyExists, or kNotFound when the namespace is missing.
  StoreOutcome CreateTable(const TableIdent& table, const std::string& location,
                           const json& metadata, int64_t now_ms);
  // Moves the table's pointer from `expected_location` to `location`: kConflict when someone
  // else moved it first, kNotFound when the table is gone. `metadata_text` is `metadata`
  // serialized (the caller has it: it answers the commit with it).
  StoreOutcome SwapTable(const TableIdent& table, const std::string& expected_location,
                         const std::string& location, const json& metadata,
                         std::string metadata_text, int64_t now_ms);
  // SwapTable for metadata the caller has as text only, with the two parts of it that the
  // tables row keeps: its properties and its current-snapshot-id.
  StoreOutcome SwapTable(const TableIdent& table, const std::string& expected_location,
                         const std::string& location, std::string metadata_text,
                         const json& properties, int64_t main_snapshot_id, int64_t now_ms);
  std::vector<TableHead> Heads();
  // One table's head; nullopt when this region lacks the table.
  std::optional<TableHead> Head(const TableIdent& table);

  // Every change of a table's head, in order, so that a replicator need not read every head on
  // every pass. ChangeCursor is the position after the last change; ChangedSince gives the
  // tables changed from `*cursor` on (a table may repeat) and moves `*cursor` to the end, or
  // nullopt when those changes are no longer kept (the log is bounded): then read every head.
  // One reader (the replicator): the changes before `*cursor` are dropped, so the log holds
  // what changed since its last pass but one.
  uint64_t ChangeCursor();
  std::optional<std::vector<TableIdent>> ChangedSince(uint64_t* cursor);

  // As the owner: which of this table's metadata files a replica whose pointer is at
  // `replica_location` ("" when it lacks the table) should copy, counting only files committed
  // at or before `visible_ms`. kDiverged when the replica's pointer is not in this history.
  ReplicationPlan PlanReplication(const TableIdent& table, const std::string& replica_location,
                                  int64_t visible_ms);
  // As the replica: copies the plan's files and moves the pointer, creating missing namespaces
  // and the table; kConflict when the pointer is no longer at `expected_location`.
  StoreOutcome ApplyReplication(const TableIdent& table, const std::string& expected_location,
                                const ReplicationPlan& plan);
  // As a diverged replica being rewound: forgets every metadata file the table has had here,
  // then copies the plan's as ApplyReplication does. Given a plan for a region lacking the
  // table (the owner's whole history), the table ends up as that region would have it.
  // kConflict when the pointer is no longer at `expected_location`, kNotFound when the table
  // does not exist here.
  StoreOutcome ReseedReplica(const TableIdent& table, const std::string& expected_location,
                             const ReplicationPlan& plan);
  // Every metadata file the table has had here, oldest first (empty when it does not exist).
  std::vector<MetadataFileRow> MetadataFiles(const TableIdent& table);
  // One of the table's metadata files, nullopt when unknown here or its JSON is no longer kept.
  std::optional<json> MetadataFile(const TableIdent& table, const std::string& location);

  // Drops the table when its pointer is at `expected_location` (any, when nullopt): its row and
  // its metadata files go, a tombstone stays (with the current metadata's JSON unless `purge`,
  // so that register can bring it back). kNotFound, kConflict. `now_ms` is the drop's time (a
  // replica dropping what its owner dropped passes the owner's).
  StoreOutcome DropTable(const TableIdent& table,
                         const std::optional<std::string>& expected_location, bool purge,
                         int64_t now_ms);
  std::optional<DroppedTable> Dropped(const TableIdent& table);
  // Moves `from` with its metadata files to `to` (same metadata-location and history), leaving
  // a purged tombstone at `from`. kNotFound (no `from`), kNoNamespace (no namespace of `to`),
  // kAlreadyExists (a table or view named `to`).
  StoreOutcome RenameTable(const TableIdent& from, const TableIdent& to, int64_t now_ms);
  // The JSON of a metadata file this region holds: a table's (current or older, while its JSON
  // is kept) or a table's dropped here without purge, at that location. nullopt otherwise.
  std::optional<std::string> ReadableMetadata(const std::string& location);
  // A table at `location` whose history starts there. kNoNamespace; kAlreadyExists unless
  // `overwrite`, which moves an existing table's pointer to `location` instead.
  StoreOutcome RegisterTable(const TableIdent& table, const std::string& location,
                             const json& metadata, std::string text, bool overwrite,
                             int64_t now_ms);
  // Every swap or none, in one transaction: kNotFound or kConflict with `*failed` the index of
  // the first swap whose table is gone or whose pointer moved.
  StoreOutcome SwapTables(const std::vector<TableSwap>& swaps, int64_t now_ms, std::size_t* failed);

  // Views (catalog_store_views.cpp). A view and a table cannot share a name (kAlreadyExists).
  std::vector<std::string> ViewNames(const std::vector<std::string>& ns);
  std::optional<TableText> LoadView(const TableIdent& view);
  StoreOutcome CreateView(const TableIdent& view, const std::string& location,
                          const std::string& text, int64_t now_ms);
  // kNotFound, kConflict (the pointer is not at `expected_location`).
  StoreOutcome SwapView(const TableIdent& view, const std::string& expected_location,
                        const std::string& location, const std::string& text, int64_t now_ms);
  // When its pointer is at `expected_location` (any, when nullopt); leaves a tombstone.
  StoreOutcome DropView(const TableIdent& view, const std::optional<std::string>& expected_location,
                        int64_t now_ms);
  // kNotFound, kNoNamespace, kAlreadyExists as RenameTable.
  StoreOutcome RenameView(const TableIdent& from, const TableIdent& to, int64_t now_ms);
  std::vector<ViewHead> ViewHeads();
  std::optional<DroppedView> DroppedViewOf(const TableIdent& view);
  // As a replica: puts the owner's file in place when the view's pointer is at
  // `expected_location` ("" when absent), creating missing namespaces; kConflict otherwise.
  StoreOutcome CopyView(const TableIdent& view, const std::string& expected_location,
                        const ViewHead& owner_head, const std::string& text);

  std::optional<StoredResponse> FindResponse(const std::string& key, int64_t not_before_ms);
  void RememberResponse(const std::string& key, const StoredResponse& response, int64_t now_ms);

 private:
  explicit CatalogStore(sqlite3* db);
  void Exec(const std::string& sql);
  bool NamespaceExistsLocked(const std::string& key);
  // A metadata file's JSON text and the columns derived from it, computed before taking the
  // mutex (serializing is the expensive part of a commit).
  struct MetadataRow {
    std::string text;
    std::string owner_claim;
    int64_t epoch_claim = -1;
    int64_t main_snapshot_id = -1;
  };
  static MetadataRow RowOf(const json& metadata);
  static MetadataRow RowOf(const json& metadata, std::string text);
  // SwapTable's compare-and-swap, under the mutex (taken here).
  StoreOutcome SwapRow(const TableIdent& table, const std::string& expected_location,
                       const std::string& location, const MetadataRow& row, int64_t now_ms);
  // `metadata_text` null: the file's JSON is not kept.
  void InsertFileLocked(const TableIdent& table, const std::string& location, int64_t committed_ms,
                        const std::string* metadata_text);
  void UpsertTableLocked(const TableIdent& table, const std::string& location,
                         const MetadataRow& row);
  // The table's metadata_location, nullopt when it has none.
  std::optional<std::string> CurrentLocationLocked(const TableIdent& table);
  // Its metadata files' locations, oldest first: a tombstone's history.
  json HistoryLocked(const TableIdent& table);
  // The tombstone drops and renames leave (dropped_tables); `metadata` null: purged.
  void TombstoneLocked(const TableIdent& table, const std::string& location, const json& history,
                       int64_t now_ms, const std::string* metadata);
  // Appends to the change log (changes_).
  void NoteChangeLocked(const TableIdent& table);
  bool TableExistsLocked(const TableIdent& table);
  bool ViewExistsLocked(const TableIdent& view);
  // CopyPlanLocked's and CopyView's: every level of `ns` that is missing, with no properties.
  void EnsureNamespacesLocked(const std::vector<std::string>& ns);
  // ApplyReplication's and ReseedReplica's copy, once the pointer has been checked.
  void CopyPlanLocked(const TableIdent& table, const ReplicationPlan& plan,
                      const MetadataRow& target);

  std::mutex mutex_;
  std::vector<TableIdent> changes_;  // with mutex_; changes_[i] is change changes_base_ + i
  uint64_t changes_base_ = 0;
  sqlite3* db_;
  std::unique_ptr<StatementCache> statements_;
  bool created_ = false;
};

}  // namespace icewarden::lab
