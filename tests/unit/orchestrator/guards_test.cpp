// EvaluateGuards as a pure function: each guard passes or fails for the reason it names.
#include "orchestrator/failovers/guards.h"

#include <gtest/gtest.h>

#include "health/lag_monitor.h"

namespace icewarden {
namespace {

using namespace std::chrono_literals;

// By value: callers pass the temporary EvaluateGuards returns.
GuardResult Find(const std::vector<GuardResult>& results, const std::string& guard) {
  for (const GuardResult& g : results)
    if (g.guard == guard) return g;
  return GuardResult{"none", false, false, "not evaluated"};
}

class GuardsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    s_.now = 1'000'000;
    s_.failover.id = "fo-1";
    s_.failover.scope = "owner:a";
    s_.failover.from = "a";
    s_.failover.to = "b";
    for (const char* r : {"a", "b", "c"}) s_.regions.push_back(Region{r});
    s_.scope_tables = {*TableIdent::Parse("s.t1"), *TableIdent::Parse("s.t2")};
    s_.max_staleness = 60s;
    s_.cooldown = 120s;
    auto lag = std::make_shared<LagReport>();
    lag->at = s_.now;
    for (const char* replica : {"b", "c"})
      for (const TableIdent& t : s_.scope_tables) {
        TableLag row;
        row.table = t;
        row.owner = "a";
        row.replica = replica;
        row.state = LagState::kBehind;
        row.missing_commits = std::string(replica) == "b" ? 3 : 1;
        row.lag = 5s;
        lag->tables.push_back(row);
      }
    lag_ = lag;
    s_.lag = lag_;
  }

  // fo-0, a move of the same scope that ended in `phase` at `at`.
  static Failover Ended(FailoverPhase phase, UnixMillis at) {
    Failover last;
    last.id = "fo-0";
    last.scope = "owner:a";
    last.from = "a";
    last.to = "b";
    last.phase = phase;
    last.updated_at = at;
    return last;
  }

  GuardSnapshot s_;
  std::shared_ptr<LagReport> lag_;
};

TEST_F(GuardsTest, AMoreAdvancedHealthyReplicaMustBeForced) {
  auto results = EvaluateGuards(s_);
  const GuardResult g = Find(results, "best_candidate");
  EXPECT_FALSE(g.ok);
  EXPECT_NE(g.reason.find("c lacks 2 commits"), std::string::npos) << g.reason;
  EXPECT_FALSE(GuardsPass(results));
  s_.waivers.force_candidate = "c's storage is read-only";
  results = EvaluateGuards(s_);
  EXPECT_TRUE(Find(results, "best_candidate").waived);
  EXPECT_TRUE(GuardsPass(results)) << GuardFailures(results);
}

TEST_F(GuardsTest, AnUnhealthyThirdRegionIsNoCandidate) {
  s_.regions[2].health = RegionHealth::kUnreachable;
  EXPECT_TRUE(Find(EvaluateGuards(s_), "best_candidate").ok);
}

TEST_F(GuardsTest, RpoCountsTheTimeSinceTheLagRound) {
  s_.now += 56'000;  // 5 s of lag measured 56 s ago: up to 61 s now
  const GuardResult g = Find(EvaluateGuards(s_), "rpo");
  EXPECT_FALSE(g.ok);
  EXPECT_NE(g.reason.find("accept_data_loss"), std::string::npos) << g.reason;
}

TEST_F(GuardsTest, RunbookMaxLagTightensButNeverLoosens) {
  s_.runbook_guards = {RunbookGuard{"max_lag", {{"max_staleness", "2s"}}}};
  EXPECT_FALSE(Find(EvaluateGuards(s_), "rpo").ok);
  s_.runbook_guards = {RunbookGuard{"max_lag", {{"max_staleness", "1h"}}}};
  s_.now += 56'000;
  EXPECT_FALSE(Find(EvaluateGuards(s_), "rpo").ok) << "policy's 60 s still holds";
}

TEST_F(GuardsTest, CooldownOfAnOverlappingFailoverUnlessAcknowledged) {
  s_.others = {Ended(FailoverPhase::kRolledBack, s_.now - 30'000)};
  s_.cooldown_elapsed["fo-0"] = 30s;
  const GuardResult g = Find(EvaluateGuards(s_), "cooldown");
  EXPECT_FALSE(g.ok);
  EXPECT_NE(g.reason.find("failover ack fo-0"), std::string::npos) << g.reason;
  EXPECT_NE(g.reason.find("1m30s left"), std::string::npos) << g.reason;
  s_.others[0].ack = FailoverAck{"olivia", "reviewed", s_.now};
  EXPECT_TRUE(Find(EvaluateGuards(s_), "cooldown").ok);
  s_.others[0].ack.reset();
  s_.waivers.cooldown_override = "the way back is the fix";
  EXPECT_TRUE(Find(EvaluateGuards(s_), "cooldown").waived);
  s_.waivers.cooldown_override.clear();
  s_.others[0].phase = FailoverPhase::kAborted;  // an aborted one changed nothing
  EXPECT_TRUE(Find(EvaluateGuards(s_), "cooldown").ok);
}

// Issue 30: how long ago a failover ended is its cooldown timer's age by the store's clock;
// the end's updated_at, stamped by the replica that led then, is not read at all. (Before, a
// leader 30 s ahead made the end 30 s later than it was, and one 30 s behind 30 s earlier.)
TEST_F(GuardsTest, TheCooldownIsTheStoreTimersAgeNotTheEndsStamp) {
  s_.others = {Ended(FailoverPhase::kCompleted, s_.now + 30'000)};  // stamped by a fast clock
  s_.cooldown_elapsed["fo-0"] = 110s;
  GuardResult g = Find(EvaluateGuards(s_), "cooldown");
  EXPECT_FALSE(g.ok);
  EXPECT_NE(g.reason.find("ended 1m50s ago by the state store's clock"), std::string::npos)
      << g.reason;
  EXPECT_NE(g.reason.find("10s left"), std::string::npos) << g.reason;
  s_.others[0].updated_at = s_.now - 3'600'000;  // stamped by a slow clock: still held
  EXPECT_FALSE(Find(EvaluateGuards(s_), "cooldown").ok);
  s_.cooldown = 100s;  // a shorter cooldown than the timer's age holds nothing
  EXPECT_TRUE(Find(EvaluateGuards(s_), "cooldown").ok);
  s_.cooldown = 0ms;
  EXPECT_TRUE(Find(EvaluateGuards(s_), "cooldown").ok);
  s_.cooldown = 120s;
  s_.cooldown_elapsed.clear();  // the timer ran out (or the end predates timers)
  s_.others[0].updated_at = s_.now;
  g = Find(EvaluateGuards(s_), "cooldown");
  EXPECT_TRUE(g.ok) << g.reason;
}

TEST_F(GuardsTest, ARunbookCooldownLongerThanThePolicysHolds) {
  s_.others = {Ended(FailoverPhase::kCompleted, s_.now)};
  s_.cooldown_elapsed["fo-0"] = 150s;
  EXPECT_TRUE(Find(EvaluateGuards(s_), "cooldown").ok);
  s_.runbook_guards = {RunbookGuard{"cooldown", {{"period", "5m"}}}};
  EXPECT_FALSE(Find(EvaluateGuards(s_), "cooldown").ok);
  EXPECT_EQ(CooldownOf(120s, s_.runbook_guards), 5min);
  EXPECT_EQ(CooldownOf(10min, s_.runbook_guards), 10min);
}

TEST_F(GuardsTest, AnActiveFailoverOnTheScopeOverlaps) {
  Failover other;
  other.id = "fo-9";
  other.scope = "tables:s.t2";
  other.from = "a";
  other.to = "c";
  other.phase = FailoverPhase::kProposed;
  s_.others = {other};
  EXPECT_FALSE(Find(EvaluateGuards(s_), "no_overlap").ok);
  s_.others[0].scope = "tables:x.y";
  EXPECT_TRUE(Find(EvaluateGuards(s_), "no_overlap").ok);
}

TEST_F(GuardsTest, NoLagRoundYetFailsRpo) {
  s_.lag = nullptr;
  const GuardResult g = Find(EvaluateGuards(s_), "rpo");
  EXPECT_FALSE(g.ok);
  EXPECT_NE(g.reason.find("no replication-lag round"), std::string::npos) << g.reason;
}

}  // namespace
}  // namespace icewarden

namespace icewarden {
namespace {

TEST_F(GuardsTest, DivergenceNamesEachTableAndSnapshotAndOnlyAcceptedLossWaivesIt) {
  for (TableLag& row : lag_->tables) {
    if (row.replica != "b" || row.table.name != "t2") continue;
    row.state = LagState::kDiverged;
    row.diverged = true;
    row.divergent_snapshot_ids = {111, 222};
  }
  GuardResult g = Find(EvaluateGuards(s_), "divergence");
  EXPECT_FALSE(g.ok);
  EXPECT_FALSE(g.waived);
  EXPECT_NE(g.reason.find("1 tables hold commits in b that a never had: s.t2 (snapshots 111, 222)"),
            std::string::npos)
      << g.reason;
  EXPECT_NE(g.reason.find("reconcile them by hand"), std::string::npos) << g.reason;
  EXPECT_NE(g.reason.find("accept_data_loss"), std::string::npos) << g.reason;
  s_.waivers.accept_data_loss = "the rogue writes were test data";
  g = Find(EvaluateGuards(s_), "divergence");
  EXPECT_TRUE(g.waived);
  EXPECT_NE(g.reason.find("accepted by an approver: the rogue writes were test data"),
            std::string::npos);
}

TEST_F(GuardsTest, ASwitchoverNeedsAHealthyOldOwner) {
  for (Region& r : s_.regions) r.health = RegionHealth::kHealthy;
  EXPECT_EQ(Find(EvaluateGuards(s_), "source_healthy").guard, "none") << "failovers skip it";
  s_.failover.kind = FailoverKind::kSwitchover;
  EXPECT_TRUE(Find(EvaluateGuards(s_), "source_healthy").ok);
  s_.regions[0].health = RegionHealth::kUnreachable;
  GuardResult g = Find(EvaluateGuards(s_), "source_healthy");
  EXPECT_FALSE(g.ok);
  EXPECT_NE(g.reason.find("propose a failover instead"), std::string::npos) << g.reason;
}

}  // namespace
}  // namespace icewarden
