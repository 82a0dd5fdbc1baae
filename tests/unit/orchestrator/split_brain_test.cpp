// FindSplitBrain as a pure function, and SplitBrainWatch's effects in order: journaled, fenced,
// alerted, each commit acted on once (also after a restart, from the audit log).
#include <gtest/gtest.h>

#include "health/lag_monitor.h"
#include "orchestrator/watch/live_view.h"
#include "orchestrator/watch/split_brain.h"
#include "state/clock.h"
#include "state/sqlite_store.h"

namespace icewarden {
namespace {

TableLag Diverged(const std::string& table, const std::string& owner, const std::string& replica,
                  UnixMillis newest) {
  TableLag row;
  row.table = *TableIdent::Parse(table);
  row.owner = owner;
  row.replica = replica;
  row.state = LagState::kDiverged;
  row.diverged = true;
  row.divergent_snapshot_ids = {7, 9};
  row.newest_divergent_at = newest;
  return row;
}

Ownership Owned(const std::string& table, const std::string& owner, UnixMillis since,
                const std::string& failover = "fo-1") {
  Ownership o;
  o.table = *TableIdent::Parse(table);
  o.owner = owner;
  o.epoch = 2;
  o.updated_at = since;
  o.failover_id = failover;
  return o;
}

TEST(FindSplitBrainTest, OnlyCommitsAfterOwnershipMovedInARegionThatIsNotTheOwner) {
  LagReport report;
  report.tables = {Diverged("s.new_write", "eu", "us", 2000),  // after the move: two writers
                   Diverged("s.lost", "eu", "us", 900),        // before it: what the failover lost
                   Diverged("s.stale_round", "us", "eu", 2000),  // measured against an old owner
                   Diverged("s.unknown", "eu", "us", 2000)};
  TableLag behind = Diverged("s.behind", "eu", "us", 2000);
  behind.diverged = false;
  behind.state = LagState::kBehind;
  report.tables.push_back(behind);
  std::map<std::string, Ownership> owners = {{"s.new_write", Owned("s.new_write", "eu", 1000)},
                                             {"s.lost", Owned("s.lost", "eu", 1000)},
                                             {"s.stale_round", Owned("s.stale_round", "eu", 1000)},
                                             {"s.behind", Owned("s.behind", "eu", 1000)}};
  auto found = FindSplitBrain(report, [&](const TableIdent& t) -> std::optional<Ownership> {
    auto it = owners.find(t.ToString());
    if (it == owners.end()) return std::nullopt;
    return it->second;
  });
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].table.ToString(), "s.new_write");
  EXPECT_EQ(found[0].region, "us");
  EXPECT_EQ(found[0].owner, "eu");
  EXPECT_EQ(found[0].committed_at, 2000);
  EXPECT_EQ(found[0].failover_id, "fo-1");
  EXPECT_EQ(found[0].Key(), "us|s.new_write|2000|2");
}

TEST(SplitBrainWatchTest, JournalsFencesAndAlertsOncePerCommitAcrossRestarts) {
  auto clock = SystemClock();
  auto store = OpenSqliteStore({":memory:"}, clock);
  ASSERT_TRUE(store.ok());
  OwnershipChange claim{*TableIdent::Parse("s.t"), 0, "eu", "fo-1"};
  AuditEvent why;
  why.actor = "test";
  why.action = "ownership.claim";
  why.target = "s.t";
  ASSERT_TRUE((*store)->CompareAndSetOwnership(std::span(&claim, 1), why).ok());
  const UnixMillis owned_since = (**(*store)->GetOwnership(*TableIdent::Parse("s.t"))).updated_at;

  std::vector<std::string> calls;
  LiveView live;
  SplitBrainWatchDeps deps;
  deps.store = store->get();
  deps.live = &live;
  deps.clock = clock;
  deps.region_event = [&](const std::string& region, const HealthInput& in,
                          const std::string& actor) -> Result<HealthDecision> {
    EXPECT_EQ(in.event, HealthEvent::kSetFenced);
    EXPECT_EQ(in.source, EventSource::kOrchestrator);
    EXPECT_EQ(actor, "split-brain-watch");
    // The finding is journaled before the region is fenced.
    AuditQuery q;
    q.target = "split-brain:" + region;
    auto events = (*store)->ListAudit(q);
    EXPECT_TRUE(events.ok() && !events->empty() && events->back().action == "split_brain.detected");
    calls.push_back("fence " + region);
    HealthDecision d;
    d.accepted = d.changed = true;
    d.next.name = region;
    d.next.fenced = true;
    return d;
  };
  deps.alert = [&](const SplitBrainAlert& a) {
    calls.push_back("alert " + a.region);
    return std::vector<std::string>{"am: succeeded: sent"};
  };
  LagReport report;
  report.at = 1;
  report.tables = {Diverged("s.t", "eu", "us", owned_since + 5)};
  {
    SplitBrainWatch watch(deps);
    ASSERT_EQ(watch.Examine(report).size(), 1u);
    EXPECT_EQ(watch.Examine(report).size(), 0u) << "the same commit is acted on once";
  }
  EXPECT_EQ(calls, (std::vector<std::string>{"fence us", "alert us"}));
  AuditQuery on_failover;
  on_failover.target = "fo-1";
  auto events = (*store)->ListAudit(on_failover);
  ASSERT_TRUE(events.ok());
  ASSERT_EQ(events->size(), 1u) << "the failover's report shows it";
  EXPECT_NE(events->front().reason.find("split brain: us committed to 1 table it does not own"),
            std::string::npos)
      << events->front().reason;
  EXPECT_NE(events->front().reason.find("s.t (snapshots 7, 9"), std::string::npos);
  EXPECT_EQ(live.SplitBrain().count({"s.t", "us"}), 1u);

  // A restarted daemon reads what it did from the audit log; a newer commit is new.
  SplitBrainWatch restarted(deps);
  ASSERT_TRUE(restarted.Start({"us", "eu"}).ok());
  restarted.Stop();
  EXPECT_EQ(restarted.Examine(report).size(), 0u);
  // A writer that keeps going while the region is fenced is the same split brain: its newer
  // commit is journaled, not acted on. Snapshot ids are random: a newer commit's id may well be
  // smaller than every earlier one.
  report.tables[0].divergent_snapshot_ids = {3, 7, 9};
  Region us{"us"};
  us.fenced = true;
  AuditEvent put = why;
  put.target = "us";
  ASSERT_TRUE((*store)->PutRegion(us, put).ok());
  EXPECT_EQ(restarted.Examine(report).size(), 0u);
  EXPECT_EQ(calls.size(), 2u);
  AuditQuery on_region;
  on_region.target = "split-brain:us";
  auto continued = [&] {
    std::vector<std::string> reasons;
    auto journal = (*store)->ListAudit(on_region);
    EXPECT_TRUE(journal.ok());
    for (const AuditEvent& e : *journal)
      if (e.action == "split_brain.continued") reasons.push_back(e.reason);
    return reasons;
  };
  ASSERT_EQ(continued().size(), 1u);
  EXPECT_NE(continued()[0].find("s.t (snapshots 3, 7, 9"), std::string::npos) << continued()[0];
  // The next commit soon after is remembered, but journaled only with the next event: a writer
  // that goes on is not an event per round.
  report.tables[0].divergent_snapshot_ids = {3, 7, 8, 9};
  EXPECT_EQ(restarted.Examine(report).size(), 0u);
  EXPECT_EQ(continued().size(), 1u);
  // The operator who clears the overlay has seen those commits: they do not fence again. The
  // round that sees the overlay cleared journals what was held back, so a restart knows it.
  us.fenced = false;
  ASSERT_TRUE((*store)->PutRegion(us, put).ok());
  EXPECT_EQ(restarted.Examine(report).size(), 0u);
  ASSERT_EQ(continued().size(), 2u);
  EXPECT_NE(continued()[1].find("s.t (snapshots 3, 7, 8, 9"), std::string::npos) << continued()[1];
  EXPECT_EQ(calls.size(), 2u);
  SplitBrainWatch after_unfence(deps);
  ASSERT_TRUE(after_unfence.Start({"us", "eu"}).ok());
  after_unfence.Stop();
  EXPECT_EQ(after_unfence.Examine(report).size(), 0u) << "not after a restart either";
  EXPECT_EQ(calls.size(), 2u);
  // A commit not seen before is a new split brain.
  report.tables[0].divergent_snapshot_ids = {3, 5, 7, 8, 9};
  EXPECT_EQ(after_unfence.Examine(report).size(), 1u);
  EXPECT_EQ(calls, (std::vector<std::string>{"fence us", "alert us", "fence us", "alert us"}));
  // Soon after a detection, commits seen while fenced are held back (the page was just sent),
  // and journaled when the watch stops.
  us.fenced = true;
  ASSERT_TRUE((*store)->PutRegion(us, put).ok());
  report.tables[0].divergent_snapshot_ids = {3, 4, 5, 7, 8, 9};
  EXPECT_EQ(after_unfence.Examine(report).size(), 0u);
  report.tables[0].divergent_snapshot_ids = {2, 3, 4, 5, 7, 8, 9};
  EXPECT_EQ(after_unfence.Examine(report).size(), 0u);
  EXPECT_EQ(continued().size(), 2u);
  after_unfence.Stop();
  ASSERT_EQ(continued().size(), 3u);
  EXPECT_NE(continued()[2].find("s.t (snapshots 2, 3, 4, 5, 7, 8, 9"), std::string::npos)
      << continued()[2];
  EXPECT_EQ(calls.size(), 4u);
}

}  // namespace
}  // namespace icewarden
