// SQLite StateStore contract tests for regions, the audit log, failovers, the step journal,
// the schema version and the store's lifetime (reopen, read-only, in-memory). Ownership is
// in sqlite_store_ownership_test.cpp.
#include <atomic>
#include <thread>

#include "state/sqlite_records.h"
#include "tests/unit/state/sqlite_store_fixture.h"

namespace icewarden::testing {
namespace {

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
  Result<std::int64_t> last = store_->LastAuditSeq();
  ASSERT_TRUE(last.ok());
  EXPECT_EQ(*last, events.back().seq) << "the newest event's seq";

  AuditEvent bad = Why("x", "y");
  bad.detail_json = "{not json";
  EXPECT_EQ(store_->AppendAudit(bad).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(store_->CompareAndSetOwnership(claim, bad).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(AllAudit().size(), 5u);
}

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

TEST_F(SqliteStoreTest, InMemoryStoreWorks) {
  Result<std::unique_ptr<StateStore>> mem = OpenSqliteStore({.path = ":memory:"}, clock_);
  ASSERT_TRUE(mem.ok()) << mem.status().ToString();
  std::vector<OwnershipChange> claim{Change("s.t", 0, "east")};
  EXPECT_TRUE((*mem)->CompareAndSetOwnership(claim, Why("ownership.set", "s.t")).ok());
}

}  // namespace
}  // namespace icewarden::testing
