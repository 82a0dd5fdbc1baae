#include "orchestrator/gateway/commit_rules.h"

#include <gtest/gtest.h>

#include "orchestrator/gateway/write_admission.h"

namespace icewarden {
namespace {

const std::vector<std::string> kBoth = {"us-east-1", "eu-central-1"};

TableRecord Owned(const std::string& dotted, const std::string& owner, Epoch epoch,
                  const std::string& moved_by = "") {
  TableRecord r;
  r.table = *TableIdent::Parse(dotted);
  r.row = Ownership{r.table, owner, epoch, 0, moved_by};
  r.rule_owner = "us-east-1";
  return r;
}

Failover Moving(const std::string& id, FailoverPhase phase, const std::string& scope,
                const std::string& from = "us-east-1", const std::string& to = "eu-central-1") {
  Failover f;
  f.id = id;
  f.phase = phase;
  f.scope = scope;
  f.from = from;
  f.to = to;
  return f;
}

StoreSnapshot Store(std::vector<Failover> active = {}, std::vector<Region> regions = {}) {
  StoreSnapshot s;
  s.readable = true;
  s.active = std::move(active);
  s.regions = std::move(regions);
  return s;
}

TEST(CommitRulesTest, AWriteGoesToTheOwnerWithTheEpochItRelievedOn) {
  auto v = DecideWrite({Owned("sales.orders", "eu-central-1", 3)}, Store(), kBoth);
  ASSERT_EQ(v.kind, WriteVerdict::Kind::kForward) << v.reason;
  EXPECT_EQ(v.region, "eu-central-1");
  ASSERT_EQ(v.epochs.size(), 1u);
  EXPECT_EQ(v.epochs[0].second, 3);
}

TEST(CommitRulesTest, ATableNotRecordedYetGoesWhereTheRulesSay) {
  TableRecord fresh;
  fresh.table = *TableIdent::Parse("eu.new_table");
  fresh.rule_owner = "eu-central-1";
  auto v = DecideWrite({fresh}, Store(), kBoth);
  ASSERT_EQ(v.kind, WriteVerdict::Kind::kForward);
  EXPECT_EQ(v.region, "eu-central-1");
  EXPECT_EQ(v.epochs.at(0).second, 0);
}

TEST(CommitRulesTest, AnUnreadableStoreRefusesEveryWrite) {
  StoreSnapshot s;
  s.readable = false;
  s.error = "database is locked";
  auto v = DecideWrite({Owned("sales.orders", "us-east-1", 1)}, s, kBoth);
  EXPECT_EQ(v.kind, WriteVerdict::Kind::kRetryLater);
  EXPECT_EQ(v.refusal, "store_unreadable");
  EXPECT_NE(v.reason.find("database is locked"), std::string::npos);
}

TEST(CommitRulesTest, AnOwnerThisGatewayMayNotReachIsNamedWithItsEpoch) {
  auto v = DecideWrite({Owned("sales.orders", "eu-central-1", 4)}, Store(), {"us-east-1"});
  EXPECT_EQ(v.kind, WriteVerdict::Kind::kOwnedElsewhere);
  EXPECT_EQ(v.region, "eu-central-1");
  EXPECT_EQ(v.epoch, 4);
  EXPECT_NE(v.reason.find("eu-central-1"), std::string::npos);
}

TEST(CommitRulesTest, AFencedOwnerTakesNoWrites) {
  Region fenced;
  fenced.name = "us-east-1";
  fenced.fenced = true;
  auto v = DecideWrite({Owned("sales.orders", "us-east-1", 1)}, Store({}, {fenced}), kBoth);
  EXPECT_EQ(v.kind, WriteVerdict::Kind::kRetryLater);
  EXPECT_EQ(v.refusal, "owner_fenced");
}

TEST(CommitRulesTest, TablesOfTwoOwnersCannotCommitTogether) {
  auto v =
      DecideWrite({Owned("a.t", "us-east-1", 1), Owned("eu.u", "eu-central-1", 2)}, Store(), kBoth);
  EXPECT_EQ(v.kind, WriteVerdict::Kind::kSpansOwners);
  EXPECT_NE(v.reason.find("a.t"), std::string::npos);
  EXPECT_NE(v.reason.find("eu.u"), std::string::npos);
}

TEST(CommitRulesTest, AFailoverClosesItsScopeFromFencingUntilItEnds) {
  const TableRecord orders = Owned("sales.orders", "us-east-1", 1);
  for (auto phase : {FailoverPhase::kProposed, FailoverPhase::kApproved}) {
    auto v = DecideWrite({orders}, Store({Moving("fo-1", phase, "owner:us-east-1")}), kBoth);
    EXPECT_EQ(v.kind, WriteVerdict::Kind::kForward) << FailoverPhaseName(phase);
  }
  for (auto phase : {FailoverPhase::kFencing, FailoverPhase::kFenced, FailoverPhase::kPromoting,
                     FailoverPhase::kVerifying, FailoverPhase::kFailed,
                     FailoverPhase::kCompensating, FailoverPhase::kNeedsAttention}) {
    auto v = DecideWrite({orders}, Store({Moving("fo-1", phase, "owner:us-east-1")}), kBoth);
    EXPECT_EQ(v.kind, WriteVerdict::Kind::kRetryLater) << FailoverPhaseName(phase);
    EXPECT_EQ(v.refusal, "failover_in_progress");
    EXPECT_EQ(v.failover_id, "fo-1");
  }
}

TEST(CommitRulesTest, OnlyTheScopesTablesOfTheOldOwnerAreClosed) {
  auto store = Store({Moving("fo-1", FailoverPhase::kFencing, "namespace:sales")});
  EXPECT_EQ(DecideWrite({Owned("sales.orders", "us-east-1", 1)}, store, kBoth).kind,
            WriteVerdict::Kind::kRetryLater);
  EXPECT_EQ(DecideWrite({Owned("clickstream.events", "us-east-1", 1)}, store, kBoth).kind,
            WriteVerdict::Kind::kForward);
  EXPECT_EQ(DecideWrite({Owned("sales.eu_orders", "eu-central-1", 1)}, store, kBoth).kind,
            WriteVerdict::Kind::kForward)
      << "a table of the scope that another region owns is not moving";
}

TEST(CommitRulesTest, AMovedTableReopensAtTheNewOwnerWhileTheFailoverPromotesAndVerifies) {
  const TableRecord moved = Owned("sales.orders", "eu-central-1", 2, "fo-1");
  for (auto phase : {FailoverPhase::kPromoting, FailoverPhase::kVerifying}) {
    auto v = DecideWrite({moved}, Store({Moving("fo-1", phase, "owner:us-east-1")}), kBoth);
    ASSERT_EQ(v.kind, WriteVerdict::Kind::kForward) << FailoverPhaseName(phase) << v.reason;
    EXPECT_EQ(v.region, "eu-central-1");
    EXPECT_EQ(v.epochs.at(0).second, 2);
  }
  // Compensating may move it back: closed until a person or the run decides.
  auto v = DecideWrite(
      {moved}, Store({Moving("fo-1", FailoverPhase::kCompensating, "owner:us-east-1")}), kBoth);
  EXPECT_EQ(v.kind, WriteVerdict::Kind::kRetryLater);
}

TEST(CommitRulesTest, AFailbackScopeClosesTheTablesTheEarlierFailoverMoved) {
  auto back = Moving("sw-2", FailoverPhase::kFencing, "failover:fo-1", "eu-central-1", "us-east-1");
  EXPECT_EQ(
      DecideWrite({Owned("sales.orders", "eu-central-1", 2, "fo-1")}, Store({back}), kBoth).kind,
      WriteVerdict::Kind::kRetryLater);
  EXPECT_EQ(DecideWrite({Owned("eu.native", "eu-central-1", 1)}, Store({back}), kBoth).kind,
            WriteVerdict::Kind::kForward);
}

TEST(WriteAdmissionTest, AClosureIsConfirmedOnlyOnceNothingIsInFlightToTheOldOwner) {
  WriteAdmission admission(kBoth);
  admission.Publish(Store());
  std::uint64_t ticket = 0;
  auto v = admission.Admit({Owned("sales.orders", "us-east-1", 1)}, &ticket);
  ASSERT_EQ(v.kind, WriteVerdict::Kind::kForward);
  std::uint64_t other = 0;
  ASSERT_EQ(admission.Admit({Owned("eu.t", "eu-central-1", 1)}, &other).kind,
            WriteVerdict::Kind::kForward);

  EXPECT_FALSE(admission.ClosureOf("fo-1").seen) << "not published yet";
  admission.Publish(Store({Moving("fo-1", FailoverPhase::kFencing, "owner:us-east-1")}));
  auto c = admission.ClosureOf("fo-1");
  EXPECT_TRUE(c.seen);
  EXPECT_TRUE(c.closes);
  EXPECT_EQ(c.in_flight, 1) << "the write to us-east-1; the one to eu-central-1 is not moving";
  EXPECT_FALSE(c.confirmed);

  // A write arriving now is refused, so it can never make the closure wrong.
  std::uint64_t late = 0;
  EXPECT_EQ(admission.Admit({Owned("sales.orders", "us-east-1", 1)}, &late).kind,
            WriteVerdict::Kind::kRetryLater);
  EXPECT_EQ(late, 0u);

  admission.Release(ticket);
  c = admission.ClosureOf("fo-1");
  EXPECT_EQ(c.in_flight, 0);
  EXPECT_TRUE(c.confirmed);
}

TEST(WriteAdmissionTest, ARecheckThatRefusesReleasesTheWrite) {
  WriteAdmission admission(kBoth);
  admission.Publish(Store());
  std::uint64_t ticket = 0;
  ASSERT_EQ(admission.Admit({Owned("sales.orders", "us-east-1", 1)}, &ticket).kind,
            WriteVerdict::Kind::kForward);
  admission.Publish(Store({Moving("fo-1", FailoverPhase::kFencing, "owner:us-east-1")}));
  EXPECT_EQ(admission.Recheck(ticket, {Owned("sales.orders", "us-east-1", 1)}).kind,
            WriteVerdict::Kind::kRetryLater);
  EXPECT_EQ(admission.InFlight(), 0u);
  EXPECT_TRUE(admission.ClosureOf("fo-1").confirmed);
}

}  // namespace
}  // namespace icewarden
