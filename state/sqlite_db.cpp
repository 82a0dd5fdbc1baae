#include "state/sqlite_db.h"

namespace icewarden {

Status SqliteError(sqlite3* db, int rc, std::string_view what) {
  std::string message = "while ";
  message += what;
  message += ": ";
  // sqlite3_errmsg describes the most recent failure on the connection, which carries
  // detail (the constraint or trigger message) that sqlite3_errstr(rc) lacks.
  message += db != nullptr ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
  message += " (";
  message += sqlite3_errstr(rc);
  message += ")";
  return Status::IOError(std::move(message));
}

// ---- SqliteStatement ----------------------------------------------------------------------

SqliteStatement::~SqliteStatement() { sqlite3_finalize(stmt_); }

SqliteStatement::SqliteStatement(SqliteStatement&& other) noexcept
    : db_(std::exchange(other.db_, nullptr)),
      stmt_(std::exchange(other.stmt_, nullptr)),
      what_(std::move(other.what_)),
      last_error_(other.last_error_) {}

SqliteStatement& SqliteStatement::operator=(SqliteStatement&& other) noexcept {
  if (this != &other) {
    sqlite3_finalize(stmt_);
    db_ = std::exchange(other.db_, nullptr);
    stmt_ = std::exchange(other.stmt_, nullptr);
    what_ = std::move(other.what_);
    last_error_ = other.last_error_;
  }
  return *this;
}

void SqliteStatement::BindText(int index, std::string_view value) {
  sqlite3_bind_text64(stmt_, index, value.data(), value.size(), SQLITE_TRANSIENT, SQLITE_UTF8);
}

void SqliteStatement::BindInt(int index, std::int64_t value) {
  sqlite3_bind_int64(stmt_, index, value);
}

void SqliteStatement::BindNull(int index) { sqlite3_bind_null(stmt_, index); }

void SqliteStatement::BindOptionalText(int index, const std::optional<std::string>& value) {
  if (value) {
    BindText(index, *value);
  } else {
    BindNull(index);
  }
}

Result<bool> SqliteStatement::Step() {
  int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  last_error_ = sqlite3_extended_errcode(db_);
  Status error = SqliteError(db_, rc, what_);
  sqlite3_reset(stmt_);
  return error;
}

Status SqliteStatement::Run() {
  Result<bool> row = Step();
  Reset();
  if (!row.ok()) return row.status();
  return Status::Ok();
}

void SqliteStatement::Reset() {
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
}

std::int64_t SqliteStatement::ColumnInt(int index) const {
  return sqlite3_column_int64(stmt_, index);
}

std::string SqliteStatement::ColumnText(int index) const {
  const unsigned char* text = sqlite3_column_text(stmt_, index);
  if (text == nullptr) return {};
  return std::string(reinterpret_cast<const char*>(text),
                     static_cast<std::size_t>(sqlite3_column_bytes(stmt_, index)));
}

bool SqliteStatement::ColumnIsNull(int index) const {
  return sqlite3_column_type(stmt_, index) == SQLITE_NULL;
}

// ---- SqliteConnection ---------------------------------------------------------------------

Result<SqliteConnection> SqliteConnection::Open(const std::string& path, bool read_only) {
  sqlite3* db = nullptr;
  // NOMUTEX: the store serialises every call itself, so SQLite's own locking is redundant.
  int flags = SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_EXRESCODE;
  flags |= read_only ? SQLITE_OPEN_READONLY : (SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
  int rc = sqlite3_open_v2(path.c_str(), &db, flags, nullptr);
  if (rc != SQLITE_OK) {
    Status error = SqliteError(db, rc, "opening the state database " + path);
    sqlite3_close(db);  // a handle is returned even on failure and must be closed
    return error;
  }
  return SqliteConnection(db);
}

SqliteConnection::~SqliteConnection() { sqlite3_close_v2(db_); }

SqliteConnection::SqliteConnection(SqliteConnection&& other) noexcept
    : db_(std::exchange(other.db_, nullptr)) {}

SqliteConnection& SqliteConnection::operator=(SqliteConnection&& other) noexcept {
  if (this != &other) {
    sqlite3_close_v2(db_);
    db_ = std::exchange(other.db_, nullptr);
  }
  return *this;
}

Status SqliteConnection::Exec(std::string_view sql, std::string_view what) {
  // sqlite3_exec needs a NUL-terminated string.
  std::string text(sql);
  int rc = sqlite3_exec(db_, text.c_str(), nullptr, nullptr, nullptr);
  if (rc != SQLITE_OK) return SqliteError(db_, rc, what);
  return Status::Ok();
}

Result<SqliteStatement> SqliteConnection::Prepare(std::string_view sql, std::string what) {
  sqlite3_stmt* stmt = nullptr;
  int rc = sqlite3_prepare_v3(db_, sql.data(), static_cast<int>(sql.size()),
                              SQLITE_PREPARE_PERSISTENT, &stmt, nullptr);
  if (rc != SQLITE_OK) return SqliteError(db_, rc, "preparing the statement for " + what);
  return SqliteStatement(db_, stmt, std::move(what));
}

// ---- SqliteWriteTransaction ---------------------------------------------------------------

SqliteWriteTransaction::~SqliteWriteTransaction() {
  // Nothing to report to: the caller already returned the error that made it give up.
  if (open_) (void)db_.Exec("ROLLBACK", "rolling back " + what_);
}

Status SqliteWriteTransaction::Begin(std::string_view what) {
  what_ = what;
  Status s = db_.Exec("BEGIN IMMEDIATE", "starting the transaction for " + what_);
  if (s.ok()) open_ = true;
  return s;
}

Status SqliteWriteTransaction::Commit() {
  Status s = db_.Exec("COMMIT", "committing " + what_);
  // A failed COMMIT may leave the transaction open (SQLITE_BUSY); the destructor's
  // ROLLBACK then releases it. Otherwise SQLite has already ended it.
  if (s.ok() || sqlite3_get_autocommit(db_.handle())) open_ = false;
  return s;
}

}  // namespace icewarden
