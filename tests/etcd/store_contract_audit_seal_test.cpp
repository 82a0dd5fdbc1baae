// The audit log's seal for both backends (store_contract_fixture.h, state/audit_seal.h): every
// event a store appends, by any kind of write and from two stores on one record at once, is
// sealed to the one before it; an event edited, removed or moved in the record itself (SQL on
// the file, a put to etcd: what someone with access to the record could do) is found at that
// event, and what the chain alone cannot show (the newest events removed, the log resealed
// from an edit on) is found against an anchor taken before.
#include <sqlite3.h>

#include <cinttypes>
#include <cstdio>
#include <thread>

#include "state/audit_seal.h"
#include "state/etcd_records.h"
#include "tests/etcd/store_contract_fixture.h"

namespace icewarden::testing {
namespace {

class AuditSealContractTest : public StoreContractTest {
 protected:
  // Several kinds of writes, each appending its event in its own transaction.
  void AppendSome(int n) {
    for (int i = 0; i < n; ++i) {
      AuditEvent e = Why("note", "event-" + std::to_string(i));
      e.detail_json = R"({"i":)" + std::to_string(i) + "}";
      ASSERT_TRUE(store_->AppendAudit(e).ok());
    }
    ASSERT_TRUE(
        store_->PutRegion(NamedRegion("us-east-1"), Why("region.health", "us-east-1")).ok());
  }

  AuditChainReport Verify(std::optional<AuditAnchor> anchor = std::nullopt) {
    auto r = VerifyAuditChain(*store_, anchor);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? *r : AuditChainReport{};
  }

  AuditEvent Event(std::int64_t seq) {
    for (AuditEvent& e : AllAudit())
      if (e.seq == seq) return e;
    ADD_FAILURE() << "no event " << seq;
    return {};
  }

  // Writes `e` at e.seq in the record as it is, bypassing the store.
  void PutRaw(const AuditEvent& e) {
    if (etcd()) {
      ASSERT_TRUE(client_->Put(AuditKey(e.seq), etcd_records::Encode(e)).ok());
      return;
    }
    sqlite3* db = OpenRaw();
    ASSERT_EQ(sqlite3_exec(db,
                           "DROP TRIGGER IF EXISTS audit_is_append_only_update;"
                           "DROP TRIGGER IF EXISTS audit_is_append_only_delete;",
                           nullptr, nullptr, nullptr),
              SQLITE_OK);
    sqlite3_stmt* st = nullptr;
    ASSERT_EQ(sqlite3_prepare_v2(db,
                                 "INSERT OR REPLACE INTO audit (seq, at, actor, source, action,"
                                 " target, reason, detail_json, prev_sha256, sha256)"
                                 " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
                                 -1, &st, nullptr),
              SQLITE_OK);
    sqlite3_bind_int64(st, 1, e.seq);
    sqlite3_bind_int64(st, 2, e.at);
    int i = 3;
    for (const std::string* s : {&e.actor, &e.source, &e.action, &e.target, &e.reason,
                                 &e.detail_json, &e.prev_sha256, &e.sha256})
      sqlite3_bind_text(st, i++, s->c_str(), -1, SQLITE_TRANSIENT);
    EXPECT_EQ(sqlite3_step(st), SQLITE_DONE) << sqlite3_errmsg(db);
    sqlite3_finalize(st);
    sqlite3_close(db);
  }

  void RemoveRaw(std::int64_t seq) {
    if (etcd()) {
      ASSERT_TRUE(client_->DeleteRange(AuditKey(seq)).ok());
      return;
    }
    sqlite3* db = OpenRaw();
    const std::string sql =
        "DROP TRIGGER IF EXISTS audit_is_append_only_delete; DELETE FROM audit WHERE seq = " +
        std::to_string(seq);
    EXPECT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr), SQLITE_OK);
    sqlite3_close(db);
  }

 private:
  std::string AuditKey(std::int64_t seq) const {
    char digits[32];
    std::snprintf(digits, sizeof digits, "%020" PRId64, seq);
    return prefix_ + "audit/" + digits;
  }
  sqlite3* OpenRaw() {
    sqlite3* db = nullptr;
    EXPECT_EQ(sqlite3_open((dir_ + "/state.db").c_str(), &db), SQLITE_OK);
    sqlite3_busy_timeout(db, 5000);
    return db;
  }
};

TEST_P(AuditSealContractTest, EveryEventIsSealedToTheOneBeforeAcrossARestart) {
  AppendSome(3);
  Reopen();
  AppendSome(2);
  const std::vector<AuditEvent> events = AllAudit();
  ASSERT_EQ(events.size(), 7u);
  EXPECT_EQ(events[0].prev_sha256, "");
  for (std::size_t i = 0; i < events.size(); ++i) {
    EXPECT_EQ(events[i].sha256, AuditSealOf(events[i])) << "event " << events[i].seq;
    if (i > 0) {
      EXPECT_EQ(events[i].prev_sha256, events[i - 1].sha256) << "event " << events[i].seq;
    }
  }
  const AuditChainReport r = Verify();
  EXPECT_TRUE(r.intact) << r.problem;
  EXPECT_EQ(r.events, 7);
  EXPECT_EQ(r.unsealed, 0);
  EXPECT_EQ(r.head_seq, events.back().seq);
  EXPECT_EQ(r.head_sha256, events.back().sha256);
}

// A gateway and the daemon append to one record: the chain must not fork.
TEST_P(AuditSealContractTest, TwoStoresAppendingAtOnceKeepOneChain) {
  auto other = Open();
  ASSERT_TRUE(other.ok()) << other.status().ToString();
  auto append = [](StateStore& store, const std::string& who) {
    for (int i = 0; i < 25; ++i) {
      AuditEvent e = Why("note", who + "-" + std::to_string(i));
      Status s = store.AppendAudit(e);
      EXPECT_TRUE(s.ok()) << s.ToString();
    }
  };
  std::thread a([&] { append(*store_, "a"); });
  std::thread b([&] { append(**other, "b"); });
  a.join();
  b.join();
  const AuditChainReport r = Verify();
  EXPECT_TRUE(r.intact) << r.problem;
  EXPECT_EQ(r.events, 50);
}

TEST_P(AuditSealContractTest, AnEditedEventIsFoundAtThatEvent) {
  AppendSome(4);
  AuditEvent e = Event(3);
  e.reason = "nothing happened here";
  PutRaw(e);
  const AuditChainReport r = Verify();
  EXPECT_FALSE(r.intact);
  EXPECT_EQ(r.broken_at, 3);
  EXPECT_NE(r.problem.find("edited"), std::string::npos) << r.problem;
  EXPECT_EQ(r.events, 2);
}

TEST_P(AuditSealContractTest, AnEditedEventResealedBreaksTheNextOne) {
  AppendSome(4);
  AuditEvent e = Event(3);
  e.actor = "mallory";
  e.sha256 = AuditSealOf(e);
  PutRaw(e);
  const AuditChainReport r = Verify();
  EXPECT_FALSE(r.intact);
  EXPECT_EQ(r.broken_at, 4);
  EXPECT_NE(r.problem.find("does not follow event 3"), std::string::npos) << r.problem;
}

TEST_P(AuditSealContractTest, ARemovedEventIsNamed) {
  AppendSome(4);
  RemoveRaw(2);
  const AuditChainReport r = Verify();
  EXPECT_FALSE(r.intact);
  EXPECT_EQ(r.broken_at, 2);
  EXPECT_NE(r.problem.find("event 2 is missing"), std::string::npos) << r.problem;
}

TEST_P(AuditSealContractTest, TwoEventsSwappedAreFound) {
  AppendSome(4);
  AuditEvent second = Event(2), third = Event(3);
  std::swap(second.seq, third.seq);
  PutRaw(second);
  PutRaw(third);
  const AuditChainReport r = Verify();
  EXPECT_FALSE(r.intact);
  EXPECT_EQ(r.broken_at, 2);
}

TEST_P(AuditSealContractTest, AStrippedSealAfterSealedEventsIsABreak) {
  AppendSome(3);
  AuditEvent e = Event(4);
  e.prev_sha256.clear();
  e.sha256.clear();
  PutRaw(e);
  const AuditChainReport r = Verify();
  EXPECT_FALSE(r.intact);
  EXPECT_EQ(r.broken_at, 4);
  EXPECT_NE(r.problem.find("has no seal"), std::string::npos) << r.problem;
}

// What the chain alone cannot show, an anchor does: the newest events removed, or the log
// rewritten and resealed from an edit on.
TEST_P(AuditSealContractTest, AnAnchorCatchesATruncatedOrResealedLog) {
  AppendSome(4);
  const AuditChainReport before = Verify();
  ASSERT_TRUE(before.intact);
  const AuditAnchor anchor{before.head_seq, before.head_sha256};
  EXPECT_TRUE(Verify(anchor).intact);

  // Resealed from event 2 on: the chain holds, the anchor does not.
  std::string prev = Event(1).sha256;
  for (std::int64_t seq = 2; seq <= before.head_seq; ++seq) {
    AuditEvent e = Event(seq);
    if (seq == 2) e.reason = "rewritten";
    e.prev_sha256 = prev;
    e.sha256 = AuditSealOf(e);
    prev = e.sha256;
    PutRaw(e);
  }
  EXPECT_TRUE(Verify().intact);
  AuditChainReport r = Verify(anchor);
  EXPECT_FALSE(r.intact);
  EXPECT_EQ(r.broken_at, anchor.seq);
  EXPECT_NE(r.problem.find("rewritten"), std::string::npos) << r.problem;

  // The newest event removed: the chain holds, the anchor is past its end.
  RemoveRaw(before.head_seq);
  EXPECT_TRUE(Verify().intact);
  r = Verify(anchor);
  EXPECT_FALSE(r.intact);
  EXPECT_NE(r.problem.find("removed from its end"), std::string::npos) << r.problem;
}

INSTANTIATE_TEST_SUITE_P(Backends, AuditSealContractTest, ::testing::Values("sqlite", "etcd"),
                         BackendName);

}  // namespace
}  // namespace icewarden::testing
