// What only the SQLite store promises beyond the StateStore contract (which both backends keep,
// tested in tests/etcd/store_contract_*): an append-only audit log even against raw SQL, the
// schema version, the owner index, and the in-memory store.
#include <atomic>
#include <thread>

#include "state/sqlite_records.h"
#include "tests/unit/state/sqlite_store_fixture.h"

namespace icewarden::testing {
namespace {

TEST_F(SqliteStoreTest, AuditIsAppendOnly) {
  EXPECT_EQ(*store_->LastAuditSeq(), 0) << "an empty log";
  ASSERT_TRUE(store_->AppendAudit(Why("failover.propose", "fo-1")).ok());
  store_.reset();
  std::string error;
  EXPECT_NE(RawExec(path_, "UPDATE audit SET reason = 'nothing happened'", &error), SQLITE_OK);
  EXPECT_NE(error.find("append-only"), std::string::npos) << error;
  EXPECT_NE(RawExec(path_, "DELETE FROM audit"), SQLITE_OK);
  Reopen();
  std::vector<AuditEvent> events = AllAudit();
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].reason, "test");
}

TEST_F(SqliteStoreTest, RefusesADatabaseWithANewerSchema) {
  EXPECT_EQ(RawQueryText(path_, "SELECT MAX(version) FROM schema_version"),
            std::to_string(SqliteSchemaVersion()));
  store_.reset();
  ASSERT_EQ(RawExec(path_,
                    "INSERT INTO schema_version (version, applied_at, description)"
                    " VALUES (999, 0, 'from the future')"),
            SQLITE_OK);
  Result<std::unique_ptr<StateStore>> opened = OpenSqliteStore({.path = path_}, clock_);
  ASSERT_FALSE(opened.ok());
  EXPECT_EQ(opened.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(opened.status().message().find("999"), std::string::npos) << opened.status().message();
  Result<std::unique_ptr<StateStore>> read_only =
      OpenSqliteStore({.path = path_, .read_only = true}, clock_);
  EXPECT_EQ(read_only.status().code(), StatusCode::kFailedPrecondition);
}

// A scope listing (tables of one owner, in paging order) is answered from the index alone:
// no lookup of each row in the primary key, which at 10,000 tables was most of a guard check.
TEST_F(SqliteStoreTest, ListingTheTablesOfAnOwnerReadsOnlyTheIndex) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path_.c_str(), &db), SQLITE_OK);
  const std::string sql = std::string("EXPLAIN QUERY PLAN SELECT ") + kOwnershipColumns +
                          " FROM ownership WHERE owner = ?1 AND (namespace_key, name) > (?2, ?3)"
                          " ORDER BY namespace_key, name LIMIT ?4";
  sqlite3_stmt* stmt = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt, nullptr), SQLITE_OK);
  std::string plan;
  while (sqlite3_step(stmt) == SQLITE_ROW)
    plan += reinterpret_cast<const char*>(sqlite3_column_text(stmt, 3)) + std::string("\n");
  sqlite3_finalize(stmt);
  sqlite3_close(db);
  EXPECT_NE(plan.find("USING COVERING INDEX ownership_by_owner"), std::string::npos) << plan;
  EXPECT_EQ(plan.find("TEMP B-TREE"), std::string::npos) << "no sort: " << plan;
}

TEST_F(SqliteStoreTest, ReopeningAnUpToDateFileMigratesNothing) {
  ASSERT_TRUE(store_->AppendAudit(Why("note", "x")).ok());
  Reopen();
  Reopen();
  EXPECT_EQ(RawQueryText(path_, "SELECT COUNT(*) FROM schema_version"),
            std::to_string(SqliteSchemaVersion()));
  EXPECT_EQ(AllAudit().size(), 1u);
}

TEST_F(SqliteStoreTest, TheOwnershipRevisionMovesWithEveryOwnershipCommitFromAnyConnection) {
  std::optional<std::int64_t> before = store_->OwnershipRevision();
  ASSERT_TRUE(before.has_value());
  ASSERT_TRUE(store_->GetOwnership(T("s.t")).ok());
  EXPECT_EQ(store_->OwnershipRevision(), before) << "a read changes nothing";
  std::vector<OwnershipChange> claim{Change("s.t", 0, "east")};
  ASSERT_TRUE(store_->CompareAndSetOwnership(claim, Why("ownership.set", "s.t")).ok());
  std::optional<std::int64_t> after_own = store_->OwnershipRevision();
  EXPECT_NE(after_own, before) << "this connection's commit";
  std::vector<OwnershipChange> stale{Change("s.t", 7, "west")};
  EXPECT_EQ(store_->CompareAndSetOwnership(stale, Why("ownership.set", "s.t")).code(),
            StatusCode::kConflict);
  EXPECT_EQ(store_->OwnershipRevision(), after_own) << "a refused batch changed nothing";

  Result<std::unique_ptr<StateStore>> other = OpenSqliteStore({.path = path_}, clock_);
  ASSERT_TRUE(other.ok());
  std::vector<OwnershipChange> move{Change("s.t", 1, "west")};
  ASSERT_TRUE((*other)->CompareAndSetOwnership(move, Why("ownership.set", "s.t")).ok());
  EXPECT_NE(store_->OwnershipRevision(), after_own) << "another connection's commit";
}

TEST_F(SqliteStoreTest, InMemoryStoreWorks) {
  Result<std::unique_ptr<StateStore>> mem = OpenSqliteStore({.path = ":memory:"}, clock_);
  ASSERT_TRUE(mem.ok()) << mem.status().ToString();
  std::vector<OwnershipChange> claim{Change("s.t", 0, "east")};
  EXPECT_TRUE((*mem)->CompareAndSetOwnership(claim, Why("ownership.set", "s.t")).ok());
}

}  // namespace
}  // namespace icewarden::testing
