// The SQL plumbing CatalogStore's files share (catalog_store.cpp, catalog_store_moves.cpp,
// catalog_store_views.cpp): prepared statements cached per connection, one use of one, and a
// BEGIN IMMEDIATE transaction. Internal to CatalogStore: every use is under its mutex.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <unordered_map>

namespace icewarden::lab {

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

}  // namespace icewarden::lab
