// Shared by the SQLite store's own tests (the contract both backends keep is tested in
// tests/etcd/store_contract_*): a fixture with a fresh database file per test, and a raw
// sqlite3 connection for checking that the schema itself holds the invariants (what a person
// with the sqlite3 shell could do).
#pragma once

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <filesystem>
#include <thread>

#include "state/sqlite_store.h"
#include "tests/fakes/fake_clock.h"
#include "tests/fakes/store_builders.h"
#include "tests/fakes/test_paths.h"

namespace icewarden::testing {

// Runs SQL on its own connection, as a person with the sqlite3 shell would. Returns the
// SQLite result code; `error` gets the message.
inline int RawExec(const std::string& path, const std::string& sql, std::string* error = nullptr) {
  sqlite3* db = nullptr;
  int rc = sqlite3_open(path.c_str(), &db);
  if (rc == SQLITE_OK) {
    sqlite3_busy_timeout(db, 5000);
    char* message = nullptr;
    rc = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &message);
    if (error != nullptr) *error = message != nullptr ? message : "";
    sqlite3_free(message);
  }
  sqlite3_close(db);
  return rc;
}

inline std::string RawQueryText(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  sqlite3_open(path.c_str(), &db);
  sqlite3_stmt* stmt = nullptr;
  std::string out;
  if (sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt, nullptr) == SQLITE_OK &&
      sqlite3_step(stmt) == SQLITE_ROW) {
    out = reinterpret_cast<const char*>(sqlite3_column_text(stmt, 0));
  }
  sqlite3_finalize(stmt);
  sqlite3_close(db);
  return out;
}

class SqliteStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::MakeTempDir("sqlite-store-test");
    path_ = dir_ + "/state.db";
    Reopen();
  }
  void TearDown() override {
    store_.reset();
    std::filesystem::remove_all(dir_);
  }
  void Reopen() {
    store_.reset();
    Result<std::unique_ptr<StateStore>> opened = OpenSqliteStore({.path = path_}, clock_);
    ASSERT_TRUE(opened.ok()) << opened.status().ToString();
    store_ = std::move(opened).value();
  }
  Ownership MustGet(std::string_view table) { return MustGetOwnership(*store_, table); }
  std::vector<AuditEvent> AllAudit() { return WholeAudit(*store_); }

  std::shared_ptr<FakeClock> clock_ = std::make_shared<FakeClock>();
  std::string dir_;
  std::string path_;
  std::unique_ptr<StateStore> store_;
};

}  // namespace icewarden::testing
