// Contract tests for the SQLite StateStore: the atomicity, compare-and-set and append-only
// promises of state_store.h, checked through the interface and, where the schema itself
// must hold the line, through a raw sqlite3 connection to the same file.
#include "state/sqlite_store.h"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <filesystem>
#include <thread>

#include "tests/fakes/fake_clock.h"
#include "tests/fakes/test_paths.h"

namespace icewarden {
namespace {

using testing::FakeClock;

TableIdent T(std::string_view dotted) { return *TableIdent::Parse(dotted); }

AuditEvent Why(std::string action, std::string target) {
  AuditEvent e;
  e.actor = "alice";
  e.source = "cli";
  e.action = std::move(action);
  e.target = std::move(target);
  e.reason = "test";
  return e;
}

OwnershipChange Change(std::string_view table, Epoch expected, std::string owner,
                       std::string failover_id = "") {
  return OwnershipChange{T(table), expected, std::move(owner), std::move(failover_id)};
}

// Builders instead of designated initializers: GCC 12's -Wmissing-field-initializers warns on
// designated initializers that leave members without default member initializers.
Region NamedRegion(std::string name, std::string reason = "") {
  Region r;
  r.name = std::move(name);
  r.reason = std::move(reason);
  return r;
}

StepRecord Step(std::string failover_id, std::string step_id) {
  StepRecord s;
  s.failover_id = std::move(failover_id);
  s.step_id = std::move(step_id);
  return s;
}

AuditQuery AuditQueryAll() {
  AuditQuery q;
  q.limit = 0;
  return q;
}

OwnershipQuery AllOwnership() {
  OwnershipQuery q;
  q.limit = 0;
  return q;
}

Failover SampleFailover(std::string id) {
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
int RawExec(const std::string& path, const std::string& sql, std::string* error = nullptr) {
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

std::string RawQueryText(const std::string& path, const std::string& sql) {
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

// ---- Regions ------------------------------------------------------------------------------

TEST_F(SqliteStoreTest, RegionsRoundTripOrderedByName) {
  Region east = NamedRegion("us-east-1");
  east.health = RegionHealth::kDegraded;
  east.fenced = true;
  east.consecutive_failures = 2;
  east.reason = "catalog timeouts";
  east.since = 1234;
  Region west = NamedRegion("eu-west-1");
  west.maintenance = true;
  west.consecutive_successes = 7;
  ASSERT_TRUE(store_->PutRegion(east, Why("region.health", "us-east-1")).ok());
  ASSERT_TRUE(store_->PutRegion(west, Why("region.health", "eu-west-1")).ok());

  Result<std::optional<Region>> got = store_->GetRegion("us-east-1");
  ASSERT_TRUE(got.ok() && got->has_value());
  EXPECT_EQ((*got)->health, RegionHealth::kDegraded);
  EXPECT_TRUE((*got)->fenced);
  EXPECT_FALSE((*got)->maintenance);
  EXPECT_EQ((*got)->consecutive_failures, 2);
  EXPECT_EQ((*got)->reason, "catalog timeouts");
  EXPECT_EQ((*got)->since, 1234);

  east.health = RegionHealth::kUnreachable;
  ASSERT_TRUE(store_->PutRegion(east, Why("region.health", "us-east-1")).ok());
  Result<std::vector<Region>> all = store_->ListRegions();
  ASSERT_TRUE(all.ok());
  ASSERT_EQ(all->size(), 2u);
  EXPECT_EQ((*all)[0].name, "eu-west-1");
  EXPECT_TRUE((*all)[0].maintenance);
  EXPECT_EQ((*all)[0].consecutive_successes, 7);
  EXPECT_EQ((*all)[1].health, RegionHealth::kUnreachable);

  Result<std::optional<Region>> missing = store_->GetRegion("ap-south-1");
  ASSERT_TRUE(missing.ok());
  EXPECT_FALSE(missing->has_value());
  EXPECT_EQ(AllAudit().size(), 3u);
}

// ---- Ownership compare-and-set --------------------------------------------------------------

TEST_F(SqliteStoreTest, CasClaimsAtEpochOneThenBumps) {
  std::vector<OwnershipChange> claim{Change("sales.eu.orders", 0, "us-east-1")};
  ASSERT_TRUE(store_->CompareAndSetOwnership(claim, Why("ownership.set", "x")).ok());
  Ownership o = MustGet("sales.eu.orders");
  EXPECT_EQ(o.owner, "us-east-1");
  EXPECT_EQ(o.epoch, 1);
  EXPECT_EQ(o.updated_at, clock_->Now());
  EXPECT_EQ(o.failover_id, "");
  EXPECT_EQ(o.table, T("sales.eu.orders"));

  clock_->Advance(std::chrono::seconds(5));
  std::vector<OwnershipChange> move{Change("sales.eu.orders", 1, "eu-west-1", "fo-1")};
  ASSERT_TRUE(store_->CompareAndSetOwnership(move, Why("ownership.set", "x")).ok());
  o = MustGet("sales.eu.orders");
  EXPECT_EQ(o.owner, "eu-west-1");
  EXPECT_EQ(o.epoch, 2);
  EXPECT_EQ(o.updated_at, clock_->Now());
  EXPECT_EQ(o.failover_id, "fo-1");
}

TEST_F(SqliteStoreTest, CasConflictLeavesWholeBatchUnapplied) {
  std::vector<OwnershipChange> claim{Change("s.t1", 0, "a"), Change("s.t2", 0, "a"),
                                     Change("s.t3", 0, "a")};
  ASSERT_TRUE(store_->CompareAndSetOwnership(claim, Why("ownership.set", "s")).ok());
  const std::size_t audit_before = AllAudit().size();

  // t1 matches and comes first, so it is written before t2 fails: only a rollback of the
  // whole batch leaves it at epoch 1.
  std::vector<OwnershipChange> batch{Change("s.t1", 1, "b"), Change("s.t2", 5, "b"),
                                     Change("s.t3", 1, "b")};
  Status s = store_->CompareAndSetOwnership(batch, Why("ownership.set", "s"));
  EXPECT_EQ(s.code(), StatusCode::kConflict) << s.ToString();
  EXPECT_NE(s.message().find("s.t2"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("epoch 1"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("owned by a"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("expected epoch 5"), std::string::npos) << s.message();
  for (const char* t : {"s.t1", "s.t2", "s.t3"}) {
    Ownership o = MustGet(t);
    EXPECT_EQ(o.epoch, 1) << t;
    EXPECT_EQ(o.owner, "a") << t;
  }
  EXPECT_EQ(AllAudit().size(), audit_before) << "a refused batch must not be audited";

  // Claiming a table that already has an owner is a conflict too, as is moving one that has
  // none; and a new table in a failing batch is not created.
  std::vector<OwnershipChange> reclaim{Change("s.new", 0, "b"), Change("s.t3", 0, "b")};
  EXPECT_EQ(store_->CompareAndSetOwnership(reclaim, Why("ownership.set", "s")).code(),
            StatusCode::kConflict);
  Result<std::optional<Ownership>> fresh = store_->GetOwnership(T("s.new"));
  ASSERT_TRUE(fresh.ok());
  EXPECT_FALSE(fresh->has_value());
  std::vector<OwnershipChange> ghost{Change("s.ghost", 3, "b")};
  Status g = store_->CompareAndSetOwnership(ghost, Why("ownership.set", "s"));
  EXPECT_EQ(g.code(), StatusCode::kConflict);
  EXPECT_NE(g.message().find("no owner"), std::string::npos) << g.message();
}

TEST_F(SqliteStoreTest, DuplicateTableInBatchIsInvalid) {
  std::vector<OwnershipChange> batch{Change("s.t1", 0, "a"), Change("s.t2", 0, "a"),
                                     Change("s.t1", 0, "b")};
  Status s = store_->CompareAndSetOwnership(batch, Why("ownership.set", "s"));
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s.ToString();
  EXPECT_NE(s.message().find("s.t1"), std::string::npos);
  Result<std::vector<Ownership>> all = store_->ListOwnership(AllOwnership());
  ASSERT_TRUE(all.ok());
  EXPECT_TRUE(all->empty());
  EXPECT_TRUE(AllAudit().empty());
}

TEST_F(SqliteStoreTest, SameNameInDifferentNamespacesIsNotADuplicate) {
  std::vector<OwnershipChange> batch{Change("a.b.t", 0, "x"), Change("a.bt", 0, "x"),
                                     Change("a.b.t2", 0, "x")};
  ASSERT_TRUE(store_->CompareAndSetOwnership(batch, Why("ownership.set", "a")).ok());
  EXPECT_EQ(MustGet("a.bt").epoch, 1);
}

TEST_F(SqliteStoreTest, EpochsNeverDecreaseEvenThroughRawSql) {
  std::vector<OwnershipChange> claim{Change("sales.orders", 0, "a")};
  ASSERT_TRUE(store_->CompareAndSetOwnership(claim, Why("ownership.set", "x")).ok());
  std::vector<OwnershipChange> move{Change("sales.orders", 1, "b")};
  ASSERT_TRUE(store_->CompareAndSetOwnership(move, Why("ownership.set", "x")).ok());
  store_.reset();

  std::string error;
  EXPECT_NE(RawExec(path_, "UPDATE ownership SET epoch = epoch - 1", &error), SQLITE_OK);
  EXPECT_NE(error.find("epoch must increase"), std::string::npos) << error;
  EXPECT_NE(RawExec(path_, "UPDATE ownership SET owner = 'c'"), SQLITE_OK)
      << "changing the owner without bumping the epoch must be refused";
  EXPECT_NE(RawExec(path_, "DELETE FROM ownership"), SQLITE_OK)
      << "deleting would let the table be claimed again at epoch 1";
  // The triggers refuse exactly the bad updates, not every update.
  EXPECT_EQ(RawExec(path_, "UPDATE ownership SET epoch = epoch + 1, owner = 'c'"), SQLITE_OK);

  Reopen();
  Ownership o = MustGet("sales.orders");
  EXPECT_EQ(o.epoch, 3);
  EXPECT_EQ(o.owner, "c");
}

TEST_F(SqliteStoreTest, SecondOwnerRowIsImpossible) {
  std::vector<OwnershipChange> claim{Change("sales.orders", 0, "a")};
  ASSERT_TRUE(store_->CompareAndSetOwnership(claim, Why("ownership.set", "x")).ok());
  store_.reset();
  EXPECT_NE(RawExec(path_,
                    "INSERT INTO ownership (namespace_key, name, owner, epoch, updated_at,"
                    " failover_id) VALUES ('sales', 'orders', 'b', 7, 0, '')"),
            SQLITE_OK);
  EXPECT_NE(RawExec(path_,
                    "INSERT INTO ownership (namespace_key, name, owner, epoch, updated_at,"
                    " failover_id) VALUES ('sales', 'other', 'b', 0, 0, '')"),
            SQLITE_OK)
      << "epoch 0 is not a recorded ownership";
  EXPECT_EQ(RawQueryText(path_, "SELECT COUNT(*) FROM ownership"), "1");
  EXPECT_EQ(RawQueryText(path_, "PRAGMA journal_mode"), "wal");
}

// ---- Audit --------------------------------------------------------------------------------

TEST_F(SqliteStoreTest, AuditIsAppendOnly) {
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

TEST_F(SqliteStoreTest, EveryMutationAppendsItsAuditEventWithIncreasingSeq) {
  AuditEvent dated = Why("region.health", "r1");
  dated.at = 42;
  dated.detail_json = R"({"rounds":3})";
  ASSERT_TRUE(store_->PutRegion(NamedRegion("r1"), dated).ok());
  clock_->Advance(std::chrono::seconds(1));
  std::vector<OwnershipChange> claim{Change("s.t", 0, "r1")};
  ASSERT_TRUE(store_->CompareAndSetOwnership(claim, Why("ownership.set", "s.t")).ok());
  Failover f = SampleFailover("fo-1");
  ASSERT_TRUE(store_->CreateFailover(f, Why("failover.propose", "fo-1")).ok());
  f.phase = FailoverPhase::kApproved;
  ASSERT_TRUE(store_->UpdateFailover(f, 1, Why("failover.approve", "fo-1")).ok());
  AuditEvent empty_detail = Why("note", "fo-1");
  empty_detail.detail_json = "";
  ASSERT_TRUE(store_->AppendAudit(empty_detail).ok());

  std::vector<AuditEvent> events = AllAudit();
  ASSERT_EQ(events.size(), 5u);
  const char* actions[] = {"region.health", "ownership.set", "failover.propose", "failover.approve",
                           "note"};
  for (std::size_t i = 0; i < events.size(); ++i) {
    EXPECT_EQ(events[i].action, actions[i]);
    if (i > 0) {
      EXPECT_GT(events[i].seq, events[i - 1].seq);
    }
  }
  EXPECT_EQ(events[0].at, 42) << "a caller's time is kept";
  EXPECT_EQ(events[0].detail_json, R"({"rounds":3})");
  EXPECT_EQ(events[1].at, clock_->Now()) << "at = 0 means now";
  EXPECT_EQ(events[1].actor, "alice");
  EXPECT_EQ(events[1].source, "cli");
  EXPECT_EQ(events[4].detail_json, "{}");

  AuditQuery about_query;
  about_query.after_seq = events[2].seq;
  about_query.limit = 0;
  about_query.target = "fo-1";
  Result<std::vector<AuditEvent>> about = store_->ListAudit(about_query);
  ASSERT_TRUE(about.ok());
  ASSERT_EQ(about->size(), 2u);
  EXPECT_EQ((*about)[0].action, "failover.approve");
  AuditQuery two;
  two.limit = 2;
  Result<std::vector<AuditEvent>> first_two = store_->ListAudit(two);
  ASSERT_TRUE(first_two.ok());
  EXPECT_EQ(first_two->size(), 2u);

  AuditEvent bad = Why("x", "y");
  bad.detail_json = "{not json";
  EXPECT_EQ(store_->AppendAudit(bad).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(store_->CompareAndSetOwnership(claim, bad).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(AllAudit().size(), 5u);
}

// ---- Failovers ----------------------------------------------------------------------------

TEST_F(SqliteStoreTest, FailoverCreateAndUpdateWithVersionCompareAndSet) {
  Failover f = SampleFailover("fo-1");
  ASSERT_TRUE(store_->CreateFailover(f, Why("failover.propose", "fo-1")).ok());
  EXPECT_EQ(store_->CreateFailover(f, Why("failover.propose", "fo-1")).code(),
            StatusCode::kConflict);

  Result<std::optional<Failover>> got = store_->GetFailover("fo-1");
  ASSERT_TRUE(got.ok() && got->has_value());
  EXPECT_EQ((*got)->version, 1);
  EXPECT_EQ((*got)->kind, FailoverKind::kSwitchover);
  EXPECT_EQ((*got)->scope, "namespace:eu.*");
  EXPECT_EQ((*got)->from, "us-east-1");
  EXPECT_EQ((*got)->to, "eu-west-1");
  EXPECT_EQ((*got)->created_at, 1000);
  EXPECT_FALSE((*got)->fencing.has_value());
  EXPECT_FALSE((*got)->accept_data_loss.has_value());

  Failover next = **got;
  next.phase = FailoverPhase::kFenced;
  next.approvals = {{"carol", "looks right", 2000}, {"dave", "second pair of eyes", 2100}};
  next.fencing = FencingConfirmation{FencingKind::kEvidenceUnreachable, "probe-quorum",
                                     "3/3 vantage points", 2500};
  next.accept_data_loss = "region is gone";
  next.last_reason = "fenced by quorum";
  next.created_at = 0;  // ignored: creation time never changes
  next.version = 99;    // ignored: the store owns the version
  clock_->Set(3000);
  ASSERT_TRUE(store_->UpdateFailover(next, 1, Why("failover.fence", "fo-1")).ok());

  got = store_->GetFailover("fo-1");
  ASSERT_TRUE(got.ok() && got->has_value());
  const Failover& stored = **got;
  EXPECT_EQ(stored.version, 2);
  EXPECT_EQ(stored.phase, FailoverPhase::kFenced);
  ASSERT_EQ(stored.approvals.size(), 2u);
  EXPECT_EQ(stored.approvals[1].by, "dave");
  EXPECT_EQ(stored.approvals[1].reason, "second pair of eyes");
  EXPECT_EQ(stored.approvals[1].at, 2100);
  ASSERT_TRUE(stored.fencing.has_value());
  EXPECT_EQ(stored.fencing->kind, FencingKind::kEvidenceUnreachable);
  EXPECT_EQ(stored.fencing->reason, "3/3 vantage points");
  EXPECT_EQ(stored.fencing->at, 2500);
  EXPECT_EQ(stored.accept_data_loss, "region is gone");
  EXPECT_EQ(stored.last_reason, "fenced by quorum");
  EXPECT_EQ(stored.created_at, 1000);
  EXPECT_EQ(stored.updated_at, 3000);

  // A writer that read version 1 lost the race.
  next.phase = FailoverPhase::kAborted;
  Status stale = store_->UpdateFailover(next, 1, Why("failover.abort", "fo-1"));
  EXPECT_EQ(stale.code(), StatusCode::kConflict) << stale.ToString();
  EXPECT_NE(stale.message().find("version 2"), std::string::npos) << stale.message();
  got = store_->GetFailover("fo-1");
  EXPECT_EQ((*got)->phase, FailoverPhase::kFenced);

  Failover ghost = SampleFailover("fo-404");
  EXPECT_EQ(store_->UpdateFailover(ghost, 1, Why("failover.abort", "fo-404")).code(),
            StatusCode::kNotFound);
  Result<std::optional<Failover>> none = store_->GetFailover("fo-404");
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->has_value());
}

TEST_F(SqliteStoreTest, ActiveFailoversExcludeTerminalPhasesOldestFirst) {
  const std::pair<const char*, FailoverPhase> phases[] = {
      {"fo-1", FailoverPhase::kProposed},       {"fo-2", FailoverPhase::kCompleted},
      {"fo-3", FailoverPhase::kNeedsAttention}, {"fo-4", FailoverPhase::kAborted},
      {"fo-5", FailoverPhase::kRolledBack},     {"fo-6", FailoverPhase::kFencing}};
  UnixMillis t = 1000;
  for (const auto& [id, phase] : phases) {
    Failover f = SampleFailover(id);
    f.created_at = t += 10;
    ASSERT_TRUE(store_->CreateFailover(f, Why("failover.propose", id)).ok());
    f.phase = phase;
    ASSERT_TRUE(store_->UpdateFailover(f, 1, Why("failover.move", id)).ok());
  }
  Result<std::vector<Failover>> active = store_->ListActiveFailovers();
  ASSERT_TRUE(active.ok());
  std::vector<std::string> ids;
  for (const Failover& f : *active) ids.push_back(f.id);
  EXPECT_EQ(ids, (std::vector<std::string>{"fo-1", "fo-3", "fo-6"}));

  Result<std::vector<Failover>> newest = store_->ListFailovers(2);
  ASSERT_TRUE(newest.ok());
  ASSERT_EQ(newest->size(), 2u);
  EXPECT_EQ((*newest)[0].id, "fo-6");
  EXPECT_EQ((*newest)[1].id, "fo-5");
  Result<std::vector<Failover>> all = store_->ListFailovers(0);
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(all->size(), 6u);
}

// ---- Step journal -------------------------------------------------------------------------

TEST_F(SqliteStoreTest, StepsKeepFirstRecordedOrderAndUpsert) {
  ASSERT_TRUE(store_->CreateFailover(SampleFailover("fo-1"), Why("failover.propose", "fo-1")).ok());
  // Ids chosen so that alphabetical order differs from recorded order.
  for (const char* id : {"zz-dns", "aa-fence", "mm-verify"}) {
    StepRecord s = Step("fo-1", id);
    s.section = "fence";
    s.action = "dns";
    s.state = StepState::kRunning;
    ASSERT_TRUE(store_->PutStep(s).ok()) << id;
  }
  StepRecord done = Step("fo-1", "aa-fence");
  done.section = "fence";
  done.action = "fence.http";
  done.state = StepState::kSucceeded;
  done.attempt = 2;
  done.reason = "fenced";
  done.result_json = R"({"status":204})";
  done.started_at = 10;
  done.finished_at = 20;
  ASSERT_TRUE(store_->PutStep(done).ok());

  Result<std::vector<StepRecord>> steps = store_->ListSteps("fo-1");
  ASSERT_TRUE(steps.ok());
  ASSERT_EQ(steps->size(), 3u);
  EXPECT_EQ((*steps)[0].step_id, "zz-dns");
  EXPECT_EQ((*steps)[1].step_id, "aa-fence");
  EXPECT_EQ((*steps)[2].step_id, "mm-verify");
  EXPECT_EQ((*steps)[1].state, StepState::kSucceeded);
  EXPECT_EQ((*steps)[1].attempt, 2);
  EXPECT_EQ((*steps)[1].action, "fence.http");
  EXPECT_EQ((*steps)[1].result_json, R"({"status":204})");
  EXPECT_EQ((*steps)[1].finished_at, 20);
  EXPECT_EQ((*steps)[0].result_json, "{}");

  StepRecord orphan = Step("fo-404", "x");
  EXPECT_EQ(store_->PutStep(orphan).code(), StatusCode::kNotFound);
  Result<std::vector<StepRecord>> none = store_->ListSteps("fo-404");
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());
}

// ---- Listing ------------------------------------------------------------------------------

TEST_F(SqliteStoreTest, OwnershipPagesInNamespaceNameOrder) {
  std::vector<OwnershipChange> claim;
  for (const char* ns : {"sales.eu", "sales", "hr", "sales.us"}) {
    for (int i = 9; i >= 0; --i) {
      std::string table = std::string(ns) + ".t" + std::to_string(i);
      claim.push_back(Change(table, 0, i % 3 == 0 ? "east" : "west"));
    }
  }
  ASSERT_TRUE(store_->CompareAndSetOwnership(claim, Why("ownership.set", "*")).ok());

  Result<std::vector<Ownership>> all = store_->ListOwnership(AllOwnership());
  ASSERT_TRUE(all.ok());
  ASSERT_EQ(all->size(), 40u);
  for (std::size_t i = 1; i < all->size(); ++i) {
    const TableIdent& a = (*all)[i - 1].table;
    const TableIdent& b = (*all)[i].table;
    EXPECT_LT(std::make_pair(a.NamespaceKey(), a.name), std::make_pair(b.NamespaceKey(), b.name));
  }
  EXPECT_EQ((*all)[0].table, T("hr.t0"));

  std::vector<Ownership> paged;
  OwnershipQuery q;
  q.limit = 7;
  for (;;) {
    Result<std::vector<Ownership>> page = store_->ListOwnership(q);
    ASSERT_TRUE(page.ok());
    ASSERT_LE(page->size(), 7u);
    if (page->empty()) break;
    paged.insert(paged.end(), page->begin(), page->end());
    q.after = page->back().table;
  }
  ASSERT_EQ(paged.size(), all->size());
  for (std::size_t i = 0; i < paged.size(); ++i) EXPECT_EQ(paged[i].table, (*all)[i].table);

  OwnershipQuery east_query;
  east_query.owner = "east";
  east_query.after = T("sales.t3");
  east_query.limit = 0;
  Result<std::vector<Ownership>> east = store_->ListOwnership(east_query);
  ASSERT_TRUE(east.ok());
  std::vector<std::string> names;
  for (const Ownership& o : *east) names.push_back(o.table.ToString());
  EXPECT_EQ(names, (std::vector<std::string>{"sales.t6", "sales.t9", "sales.eu.t0", "sales.eu.t3",
                                             "sales.eu.t6", "sales.eu.t9", "sales.us.t0",
                                             "sales.us.t3", "sales.us.t6", "sales.us.t9"}));

  Result<std::vector<std::pair<std::string, std::int64_t>>> counts =
      store_->CountOwnershipByOwner();
  ASSERT_TRUE(counts.ok());
  EXPECT_EQ(*counts,
            (std::vector<std::pair<std::string, std::int64_t>>{{"east", 16}, {"west", 24}}));
}

// ---- Schema and lifetime ------------------------------------------------------------------

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

TEST_F(SqliteStoreTest, ReopeningKeepsEverything) {
  ASSERT_TRUE(store_->PutRegion(NamedRegion("east", "up"), Why("r", "east")).ok());
  std::vector<OwnershipChange> claim{Change("s.t", 0, "east")};
  ASSERT_TRUE(store_->CompareAndSetOwnership(claim, Why("ownership.set", "s.t")).ok());
  ASSERT_TRUE(store_->CreateFailover(SampleFailover("fo-1"), Why("failover.propose", "fo")).ok());
  ASSERT_TRUE(store_->PutStep(Step("fo-1", "s1")).ok());

  Reopen();
  Reopen();  // migrating an up-to-date file is a no-op
  EXPECT_EQ(RawQueryText(path_, "SELECT COUNT(*) FROM schema_version"),
            std::to_string(SqliteSchemaVersion()));
  Result<std::optional<Region>> region = store_->GetRegion("east");
  ASSERT_TRUE(region.ok() && region->has_value());
  EXPECT_EQ((*region)->reason, "up");
  EXPECT_EQ(MustGet("s.t").epoch, 1);
  Result<std::optional<Failover>> f = store_->GetFailover("fo-1");
  ASSERT_TRUE(f.ok() && f->has_value());
  EXPECT_EQ((*f)->proposed_by, "bob");
  Result<std::vector<StepRecord>> steps = store_->ListSteps("fo-1");
  ASSERT_TRUE(steps.ok());
  EXPECT_EQ(steps->size(), 1u);
  EXPECT_EQ(AllAudit().size(), 3u);
  // The next seq continues after the reopen.
  ASSERT_TRUE(store_->AppendAudit(Why("note", "x")).ok());
  std::vector<AuditEvent> events = AllAudit();
  EXPECT_GT(events.back().seq, events[events.size() - 2].seq);
}

TEST_F(SqliteStoreTest, ReadOnlyStoreReadsButRefusesWrites) {
  std::vector<OwnershipChange> claim{Change("s.t", 0, "east")};
  ASSERT_TRUE(store_->CompareAndSetOwnership(claim, Why("ownership.set", "s.t")).ok());
  Result<std::unique_ptr<StateStore>> ro =
      OpenSqliteStore({.path = path_, .read_only = true}, clock_);
  ASSERT_TRUE(ro.ok()) << ro.status().ToString();
  Result<std::optional<Ownership>> o = (*ro)->GetOwnership(T("s.t"));
  ASSERT_TRUE(o.ok() && o->has_value());
  EXPECT_EQ((*o)->owner, "east");
  std::vector<OwnershipChange> move{Change("s.t", 1, "west")};
  EXPECT_EQ((*ro)->CompareAndSetOwnership(move, Why("ownership.set", "s.t")).code(),
            StatusCode::kFailedPrecondition);
  EXPECT_EQ((*ro)->AppendAudit(Why("x", "y")).code(), StatusCode::kFailedPrecondition);
}

TEST_F(SqliteStoreTest, ConcurrentCompareAndSetNeverLosesAnUpdate) {
  std::vector<OwnershipChange> claim{Change("s.hot", 0, "r0")};
  ASSERT_TRUE(store_->CompareAndSetOwnership(claim, Why("ownership.set", "s.hot")).ok());
  std::atomic<int> wins{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 25; ++i) {
        Result<std::optional<Ownership>> cur = store_->GetOwnership(T("s.hot"));
        if (!cur.ok() || !cur->has_value()) continue;
        std::vector<OwnershipChange> move{Change("s.hot", (*cur)->epoch, "r" + std::to_string(t))};
        if (store_->CompareAndSetOwnership(move, Why("ownership.set", "s.hot")).ok()) ++wins;
      }
    });
  }
  for (std::thread& th : threads) th.join();
  EXPECT_GT(wins.load(), 0);
  EXPECT_EQ(MustGet("s.hot").epoch, 1 + wins.load());
  EXPECT_EQ(AllAudit().size(), static_cast<std::size_t>(1 + wins.load()));
}

TEST_F(SqliteStoreTest, InMemoryStoreWorks) {
  Result<std::unique_ptr<StateStore>> mem = OpenSqliteStore({.path = ":memory:"}, clock_);
  ASSERT_TRUE(mem.ok()) << mem.status().ToString();
  std::vector<OwnershipChange> claim{Change("s.t", 0, "east")};
  EXPECT_TRUE((*mem)->CompareAndSetOwnership(claim, Why("ownership.set", "s.t")).ok());
}

}  // namespace
}  // namespace icewarden
