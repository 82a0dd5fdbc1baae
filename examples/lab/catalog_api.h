// CatalogApi: the Iceberg REST catalog routes one lab region serves, as handlers from request to
// response over that region's CatalogStore (no sockets here; RegionServer does the I/O, auth and
// fault injection). Implements the spec subset icewarden uses: config, namespaces (nested, paged),
// tables (paged), create, load (snapshots=all|refs, ETag, If-None-Match), HEAD, commit with
// requirements, updates and Idempotency-Key replay (catalog_api.cpp); drop, rename and register
// (catalog_table_moves.cpp); multi-table transactions (catalog_transactions.cpp); views: list,
// create, load, HEAD, replace, drop, rename (view_api.cpp). Errors use the spec's
// IcebergErrorResponse. The region's WriteFence refuses every write but namespace creates and
// property-only commits with 403 while it is paused.
//
// Thread-safety: handlers may run concurrently; mutations of one region are serialized.
#pragma once

#include <httplib.h>

#include <array>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include "examples/lab/catalog_store.h"
#include "examples/lab/metadata_cache.h"
#include "examples/lab/table_ident.h"
#include "examples/lab/write_fence.h"

namespace icewarden::lab {

struct CommitApplication;

// A clock in Unix milliseconds; the lab passes the wall clock, tests may pass their own.
using NowMs = std::function<int64_t()>;

// Writes {"error":{"message","type","code"}} with status `code`.
void SetErrorResponse(httplib::Response& res, int code, const std::string& type,
                      const std::string& message);

class CatalogApi {
 public:
  struct Route {
    std::string method;   // GET (also answers HEAD), POST or DELETE
    std::string pattern;  // httplib regex
    httplib::Server::Handler handler;
    bool is_commit = false;  // commit_latency_ms applies
  };

  // `region` names the region in errors; `warehouse` is the catalog prefix; tables live under
  // `base_location`/ns/.../table.
  CatalogApi(std::string region, std::string warehouse, std::string base_location,
             CatalogStore* store, NowMs now_ms);

  std::vector<Route> Routes();

  // The endpoints GET /v1/config advertises.
  static std::vector<std::string> Endpoints();

  // Commits `request` (a CommitTableRequest) to `table` as POST .../tables/{table} does,
  // replaying the stored response when `idempotency_key` was finalized within its lifetime.
  // 403 ForbiddenException while writes are paused, unless the commit changes only properties.
  StoredResponse Commit(const TableIdent& table, const json& request,
                        const std::string& idempotency_key);

  // The region's "pause writes" switch (see WriteFence).
  WriteFence& fence() { return fence_; }

 private:
  void Config(const httplib::Request& req, httplib::Response& res);
  void ListNamespaces(const httplib::Request& req, httplib::Response& res);
  void CreateNamespace(const httplib::Request& req, httplib::Response& res);
  void LoadNamespace(const httplib::Request& req, httplib::Response& res);
  void ListTables(const httplib::Request& req, httplib::Response& res);
  void CreateTable(const httplib::Request& req, httplib::Response& res);
  void LoadTable(const httplib::Request& req, httplib::Response& res);
  void CommitTable(const httplib::Request& req, httplib::Response& res);
  void DropTable(const httplib::Request& req, httplib::Response& res);
  void RenameTable(const httplib::Request& req, httplib::Response& res);
  void RegisterTable(const httplib::Request& req, httplib::Response& res);
  void CommitTransaction(const httplib::Request& req, httplib::Response& res);
  void ListViews(const httplib::Request& req, httplib::Response& res);
  void CreateView(const httplib::Request& req, httplib::Response& res);
  void LoadView(const httplib::Request& req, httplib::Response& res);
  void ReplaceView(const httplib::Request& req, httplib::Response& res);
  void DropView(const httplib::Request& req, httplib::Response& res);
  void RenameView(const httplib::Request& req, httplib::Response& res);

  StoredResponse CreateNamespaceLocked(const json& body);
  StoredResponse CreateTableLocked(const std::vector<std::string>& ns, const json& body);
  StoredResponse CommitLocked(const TableIdent& table, const json& request);
  StoredResponse RegisterLocked(const TableIdent& table, const json& body);
  // Every change's requirements checked, then every table's new metadata swapped in at once.
  StoredResponse TransactionLocked(const std::vector<TableIdent>& tables, const json& changes);
  StoredResponse CreateViewLocked(const std::vector<std::string>& ns, const json& body);
  StoredResponse ReplaceViewLocked(const TableIdent& view, const json& request);
  // CommitLocked for a request that changes only properties (the ownership claims a failover
  // writes): the new file is spliced as text from `loaded`'s tree, which is not copied.
  StoredResponse CommitProperties(const TableIdent& table, const json& request,
                                  CachedMetadata& loaded, int64_t now);
  // The answer to a commit that ApplyCommit did not apply (400, 409, or 200 unchanged).
  static StoredResponse NotApplied(const CommitApplication& applied, const CachedMetadata& loaded);
  // The answer to a commit whose pointer swap failed (404 or 409).
  static StoredResponse NotSwapped(StoreOutcome swapped, const TableIdent& table);
  // Runs `apply` once per Idempotency-Key within its lifetime; 5xx results are not remembered.
  // `resource` (the table or namespace changed) picks the lock: mutations of one resource are
  // serialized, mutations of different ones run in parallel, as in a real catalog. An
  // Idempotency-Key names one request, hence one resource, so its check-then-act is covered.
  // A `data_write` applies inside the write fence: while writes are paused it is answered 403
  // and not remembered (the refusal is the region's state, not the request's outcome, so the
  // same key applies once writes resume); a replay of an earlier answer is still given.
  StoredResponse Idempotent(const std::string& key, const std::string& resource, bool data_write,
                            const std::function<StoredResponse()>& apply);
  // Idempotent over several resources (a rename's two tables, a transaction's tables): their
  // locks are taken in one order (by stripe), so two such writes cannot deadlock.
  StoredResponse Idempotent(const std::string& key, const std::vector<std::string>& resources,
                            bool data_write, const std::function<StoredResponse()>& apply);

  // The table's metadata at `location` (or at a newer one, when it moved meanwhile), from the
  // cache or the store; nullopt when the table does not exist.
  // The entry's text only: its tree is parsed by Parsed, when something needs it.
  std::optional<CachedMetadata> Metadata(const TableIdent& table, const std::string& location);
  // `entry`'s parsed metadata, parsed now (and cached) if it was not yet.
  const json& Parsed(CachedMetadata& entry);

  std::string region_;
  std::string warehouse_;
  std::string base_location_;
  CatalogStore* store_;
  NowMs now_ms_;
  MetadataCache cache_;
  std::array<std::mutex, 64> mutation_stripes_;
  WriteFence fence_;
};

}  // namespace icewarden::lab
