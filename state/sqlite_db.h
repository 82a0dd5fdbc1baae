// Thin RAII ownership of the sqlite3 C API objects the SQLite StateStore uses: a connection,
// prepared statements and transactions. Every failure becomes a kIOError Status that says
// what was being done and what SQLite answered, so callers never see raw result codes.
//
// Thread-safety: none. A SqliteConnection and its statements belong to one thread at a time;
// the store serialises access with its own mutex.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "state/status.h"

namespace icewarden {

class SqliteConnection;

// A prepared statement, reusable: Bind*, then Step until it returns false, then Reset.
class SqliteStatement {
 public:
  SqliteStatement() = default;
  ~SqliteStatement();
  SqliteStatement(SqliteStatement&& other) noexcept;
  SqliteStatement& operator=(SqliteStatement&& other) noexcept;
  SqliteStatement(const SqliteStatement&) = delete;
  SqliteStatement& operator=(const SqliteStatement&) = delete;

  // Parameters are 1-based, as in SQLite. Text is copied (SQLITE_TRANSIENT) because
  // callers bind temporaries.
  void BindText(int index, std::string_view value);
  void BindInt(int index, std::int64_t value);
  void BindNull(int index);
  void BindOptionalText(int index, const std::optional<std::string>& value);

  // Runs one step. true: a row is available; false: the statement is done.
  // On error the Status names `what_` (set at Prepare) and SQLite's message.
  Result<bool> Step();
  // Runs a statement that returns no rows to completion, then resets it.
  Status Run();
  // Makes the statement ready to run again and clears its bindings. Never fails in a way
  // that matters: an error from the last Step was already reported by Step.
  void Reset();

  std::int64_t ColumnInt(int index) const;
  std::string ColumnText(int index) const;
  bool ColumnIsNull(int index) const;
  // SQLite's extended result code of the last failed Step, to tell constraint violations
  // from disk errors.
  int last_error() const { return last_error_; }

 private:
  friend class SqliteConnection;
  SqliteStatement(sqlite3* db, sqlite3_stmt* stmt, std::string what)
      : db_(db), stmt_(stmt), what_(std::move(what)) {}

  sqlite3* db_ = nullptr;
  sqlite3_stmt* stmt_ = nullptr;
  std::string what_;
  int last_error_ = SQLITE_OK;
};

// An open database handle. Closing happens in the destructor.
class SqliteConnection {
 public:
  // Opens `path` (":memory:" for a private database). read_only opens without the
  // ability to write or create.
  static Result<SqliteConnection> Open(const std::string& path, bool read_only);

  SqliteConnection() = default;
  ~SqliteConnection();
  SqliteConnection(SqliteConnection&& other) noexcept;
  SqliteConnection& operator=(SqliteConnection&& other) noexcept;
  SqliteConnection(const SqliteConnection&) = delete;
  SqliteConnection& operator=(const SqliteConnection&) = delete;

  // Runs one or more SQL statements that return no rows. `what` says what the statement
  // is for, for the error message ("creating the ownership table").
  Status Exec(std::string_view sql, std::string_view what);
  // Compiles one statement for repeated use. The statement must not outlive the connection.
  Result<SqliteStatement> Prepare(std::string_view sql, std::string what);

  std::int64_t changes() const { return sqlite3_changes64(db_); }
  sqlite3* handle() const { return db_; }

 private:
  explicit SqliteConnection(sqlite3* db) : db_(db) {}
  sqlite3* db_ = nullptr;
};

// A write transaction opened with BEGIN IMMEDIATE, so the write lock is taken up front and
// a compare-and-set can never be invalidated between its read and its write by another
// process. Rolls back on destruction unless Commit succeeded, which is how every early
// return on error leaves the store unchanged.
class SqliteWriteTransaction {
 public:
  explicit SqliteWriteTransaction(SqliteConnection& db) : db_(db) {}
  ~SqliteWriteTransaction();
  SqliteWriteTransaction(const SqliteWriteTransaction&) = delete;
  SqliteWriteTransaction& operator=(const SqliteWriteTransaction&) = delete;

  Status Begin(std::string_view what);
  Status Commit();

 private:
  SqliteConnection& db_;
  std::string what_;
  bool open_ = false;
};

// "while <what>: <sqlite message> (<code name>)" as a kIOError.
Status SqliteError(sqlite3* db, int rc, std::string_view what);

}  // namespace icewarden
