// Shared by the SQLite StateStore contract tests: a fixture with a fresh database file per
// test, builders for records, and a raw sqlite3 connection for checking that the schema
// itself holds the invariants (what a person with the sqlite3 shell could do).
#pragma once

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <filesystem>
#include <thread>

#include "state/sqlite_store.h"
#include "tests/fakes/fake_clock.h"
#include "tests/fakes/test_paths.h"

namespace icewarden::testing {

inline TableIdent T(std::string_view dotted) { return *TableIdent::Parse(dotted); }

inline AuditEvent Why(std::string action, std::string target) {
  AuditEvent e;
  e.actor = "alice";
  e.source = "cli";
  e.action = std::move(action);
  e.target = std::move(target);
  e.reason = "test";
  return e;
}

inline OwnershipChange Change(std::string_view table, Epoch expected, std::string owner,
                              std::string failover_id = "") {
  return OwnershipChange{T(table), expected, std::move(owner), std::move(failover_id)};
}

// Builders instead of designated initializers: GCC 12's -Wmissing-field-initializers warns on
// designated initializers that leave members without default member initializers.
inline Region NamedRegion(std::string name, std::string reason = "") {
  Region r;
  r.name = std::move(name);
  r.reason = std::move(reason);
  return r;
}

inline StepRecord Step(std::string failover_id, std::string step_id) {
  StepRecord s;
  s.failover_id = std::move(failover_id);
  s.step_id = std::move(step_id);
  return s;
}

inline AuditQuery AuditQueryAll() {
  AuditQuery q;
  q.limit = 0;
  return q;
}

inline OwnershipQuery AllOwnership() {
  OwnershipQuery q;
  q.limit = 0;
  return q;
}

inline Failover SampleFailover(std::string id) {
  Failover f;
  f.id = std::move(id);
  f.kind = FailoverKind::kSwitchover;
  f.scope = "namespace:eu.*";
  f.from = "us-east-1";
  f.to = "eu-west-1";
  f.runbook = "switchover.yaml";
  f.proposed_by = "bob";
  f.reason = "maintenance window";
  f.created_at = 1000;
  return f;
}

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
  Ownership MustGet(std::string_view table) {
    Result<std::optional<Ownership>> o = store_->GetOwnership(T(table));
    EXPECT_TRUE(o.ok()) << o.status().ToString();
    EXPECT_TRUE(o.ok() && o->has_value()) << table << " has no owner";
    return o.ok() && o->has_value() ? **o : Ownership{};
  }
  std::vector<AuditEvent> AllAudit() {
    Result<std::vector<AuditEvent>> events = store_->ListAudit(AuditQueryAll());
    EXPECT_TRUE(events.ok()) << events.status().ToString();
    return events.ok() ? *events : std::vector<AuditEvent>{};
  }

  std::shared_ptr<FakeClock> clock_ = std::make_shared<FakeClock>();
  std::string dir_;
  std::string path_;
  std::unique_ptr<StateStore> store_;
};

}  // namespace icewarden::testing
