// CompareReplica and Summarise on constructed snapshot histories.
#include "health/replication_lag.h"

#include <gtest/gtest.h>

namespace icewarden {
namespace {

using std::chrono::hours;
using std::chrono::milliseconds;
using std::chrono::minutes;
using std::chrono::seconds;

constexpr UnixMillis kT0 = 1'780'000'000'000;
const TableIdent kOrders{{"sales"}, "orders"};

// Snapshot `id` committed at kT0 + id seconds with sequence number `seq`.
SnapshotInfo Snap(std::int64_t id, std::optional<std::int64_t> parent, std::int64_t seq) {
  return SnapshotInfo{id, parent, seq, kT0 + id * 1000, "append"};
}

// A table whose snapshots are `snaps` (in commit order) and whose current is the last.
TableSnapshotView View(std::vector<SnapshotInfo> snaps, std::string uuid = "uuid-orders") {
  TableSnapshotView v;
  v.table_uuid = std::move(uuid);
  v.format_version = 2;
  for (const auto& s : snaps) v.snapshot_log.push_back({s.snapshot_id, s.timestamp_ms});
  if (!snaps.empty()) {
    v.current_snapshot_id = snaps.back().snapshot_id;
    v.refs["main"] = snaps.back().snapshot_id;
    v.last_sequence_number = snaps.back().sequence_number.value_or(0);
  }
  v.snapshots = std::move(snaps);
  return v;
}

// 1 <- 2 <- ... <- n, sequence numbers equal to ids.
std::vector<SnapshotInfo> Chain(std::int64_t from, std::int64_t to) {
  std::vector<SnapshotInfo> out;
  for (std::int64_t id = from; id <= to; ++id) {
    out.push_back(Snap(id, id == 1 ? std::nullopt : std::optional<std::int64_t>(id - 1), id));
  }
  return out;
}

TableLag Compare(const TableSnapshotView& owner, const TableSnapshotView& replica, UnixMillis now,
                 LagPolicy policy = {}) {
  return CompareReplica(kOrders, "us-east-1", owner, "eu-central-1", replica, now, policy);
}

TEST(ReplicationLagTest, CaughtUpReplicaHasNoLag) {
  const UnixMillis now = kT0 + 600'000;
  TableLag lag = Compare(View(Chain(1, 3)), View(Chain(1, 3)), now);
  EXPECT_EQ(lag.state, LagState::kCaughtUp);
  EXPECT_EQ(lag.missing_commits, 0);
  EXPECT_EQ(lag.oldest_missing_at, std::nullopt);
  EXPECT_EQ(lag.lag, milliseconds(0));
  EXPECT_TRUE(lag.within_max_staleness);
  EXPECT_FALSE(lag.diverged);
  EXPECT_EQ(lag.owner_snapshot_id, 3);
  EXPECT_EQ(lag.replica_snapshot_id, 3);
  EXPECT_EQ(lag.reason, "sales.orders: eu-central-1 is caught up with us-east-1 at snapshot 3");
}

TEST(ReplicationLagTest, ThreeCommitsBehindWithTheAgeOfTheOldest) {
  // Snapshot 3 (committed at kT0 + 3s) is the first the replica lacks; 42s later:
  const UnixMillis now = kT0 + 3'000 + 42'000;
  TableLag lag = Compare(View(Chain(1, 5)), View(Chain(1, 2)), now);
  EXPECT_EQ(lag.state, LagState::kBehind);
  EXPECT_EQ(lag.missing_commits, 3);
  EXPECT_EQ(lag.oldest_missing_at, kT0 + 3'000);
  EXPECT_EQ(lag.lag, seconds(42));
  EXPECT_TRUE(lag.within_max_staleness);
  EXPECT_FALSE(lag.diverged);
  EXPECT_EQ(lag.reason, "sales.orders: eu-central-1 is 3 commits behind us-east-1, oldest 42s ago");
}

TEST(ReplicationLagTest, LagOverMaxStalenessIsSaid) {
  const UnixMillis now = kT0 + 5'000 + 20 * 60'000;
  TableLag lag = Compare(View(Chain(1, 5)), View(Chain(1, 4)), now);
  EXPECT_EQ(lag.lag, minutes(20));
  EXPECT_FALSE(lag.within_max_staleness);
  EXPECT_EQ(lag.reason,
            "sales.orders: eu-central-1 is 1 commit behind us-east-1, oldest 20m ago, over the "
            "max staleness of 15m");
}

TEST(ReplicationLagTest, EmptyReplicaLacksEveryOwnerCommit) {
  TableLag lag = Compare(View(Chain(1, 2)), View({}), kT0 + 60'000);
  EXPECT_EQ(lag.missing_commits, 2);
  EXPECT_EQ(lag.oldest_missing_at, kT0 + 1'000);
  EXPECT_EQ(lag.replica_snapshot_id, -1);
}

TEST(ReplicationLagTest, SnapshotsTheOwnerExpiredAreNotDivergence) {
  // The owner expired 1 and 2; the replica has not run (or received) that expiry yet.
  const UnixMillis now = kT0 + 60'000;
  TableSnapshotView owner = View(Chain(3, 6));
  TableLag lag = Compare(owner, View(Chain(1, 6)), now);
  EXPECT_FALSE(lag.diverged) << lag.reason;
  EXPECT_TRUE(lag.divergent_snapshot_ids.empty());
  EXPECT_EQ(lag.state, LagState::kCaughtUp);

  // Same, with the replica still on snapshot 2, which the owner no longer has: it is behind
  // by at least everything the owner retains, not diverged.
  lag = Compare(owner, View(Chain(1, 2)), now);
  EXPECT_FALSE(lag.diverged) << lag.reason;
  EXPECT_EQ(lag.state, LagState::kBehind);
  EXPECT_EQ(lag.missing_commits, 4);
  EXPECT_EQ(lag.oldest_missing_at, kT0 + 3'000);
  EXPECT_NE(lag.reason.find("its current snapshot 2 predates us-east-1's retained history"),
            std::string::npos)
      << lag.reason;
}

TEST(ReplicationLagTest, ExpiredOrphanOlderThanRetentionIsNotDivergence) {
  // Owner: 1..4 on main, retention 10s; the replica still has 50, a rolled-back snapshot the
  // owner's expiry removed although min-snapshots-to-keep kept the old lineage.
  TableSnapshotView owner = View(Chain(1, 4));
  owner.properties["history.expire.max-snapshot-age-ms"] = "10000";
  auto replica_snaps = Chain(1, 4);
  replica_snaps.insert(replica_snaps.begin() + 2, SnapshotInfo{50, 2, 3, kT0 + 2'500, "append"});
  TableLag lag = Compare(owner, View(replica_snaps), kT0 + 60'000);
  EXPECT_FALSE(lag.diverged) << lag.reason;
}

TEST(ReplicationLagTest, RogueCommitInReplicaIsDivergenceWithItsId) {
  // Both had 1 <- 2. Then the owner committed 3, 4 while someone committed 99 in the replica.
  const UnixMillis now = kT0 + 60'000;
  auto replica_snaps = Chain(1, 2);
  replica_snaps.push_back(SnapshotInfo{99, 2, 3, kT0 + 3'500, "overwrite"});
  TableLag lag = Compare(View(Chain(1, 4)), View(replica_snaps), now);
  EXPECT_TRUE(lag.diverged);
  EXPECT_EQ(lag.state, LagState::kDiverged);
  EXPECT_EQ(lag.divergent_snapshot_ids, (std::vector<std::int64_t>{99}));
  EXPECT_EQ(lag.missing_commits, 2);  // 3 and 4, after the fork at 2
  EXPECT_EQ(lag.replica_snapshot_id, 99);
  EXPECT_EQ(lag.newest_divergent_at, std::optional<UnixMillis>(kT0 + 3'500));
  EXPECT_EQ(lag.reason,
            "sales.orders: DIVERGED: eu-central-1 has snapshot 99 that us-east-1 never had (two "
            "histories under one name)");
}

TEST(ReplicationLagTest, TwoRogueCommitsAreBothListed) {
  auto replica_snaps = Chain(1, 2);
  replica_snaps.push_back(SnapshotInfo{98, 2, 3, kT0 + 3'500, "append"});
  replica_snaps.push_back(SnapshotInfo{99, 98, 4, kT0 + 4'500, "append"});
  TableLag lag = Compare(View(Chain(1, 2)), View(replica_snaps), kT0 + 60'000);
  EXPECT_EQ(lag.divergent_snapshot_ids, (std::vector<std::int64_t>{98, 99}));
  EXPECT_EQ(lag.missing_commits, 0);  // the replica is "ahead", which is no better
  // The split-brain watch times a second writer by its newest divergent commit.
  ASSERT_TRUE(lag.newest_divergent_at);
  EXPECT_EQ(*lag.newest_divergent_at, kT0 + 4'500);
  EXPECT_NE(lag.reason.find("has snapshots 98, 99 that us-east-1 never had"), std::string::npos);
}

TEST(ReplicationLagTest, ReplicaMetadataInOwnersLogProvesNoDivergence) {
  TableSnapshotView owner = View(Chain(3, 4));  // 1, 2 expired
  owner.metadata_log.push_back({"s3://lake/orders/metadata/00002.metadata.json", kT0 + 2'000});
  auto replica_snaps = Chain(1, 2);
  replica_snaps[1].sequence_number = 7;  // a sequence number that would look divergent
  TableSnapshotView replica = View(replica_snaps);
  replica.metadata_location = "s3://lake/orders/metadata/00002.metadata.json";
  EXPECT_FALSE(Compare(owner, replica, kT0 + 60'000).diverged);
  replica.metadata_location = "s3://lake/orders/metadata/00009-other.metadata.json";
  EXPECT_TRUE(Compare(owner, replica, kT0 + 60'000).diverged);
}

TEST(ReplicationLagTest, DifferentTableUuidIsNotTheSameTable) {
  TableLag lag = Compare(View(Chain(1, 3), "uuid-a"), View(Chain(1, 3), "uuid-b"), kT0);
  EXPECT_TRUE(lag.uuid_mismatch);
  EXPECT_EQ(lag.state, LagState::kNotSameTable);
  EXPECT_FALSE(lag.within_max_staleness);
  EXPECT_EQ(lag.owner_uuid, "uuid-a");
  EXPECT_EQ(lag.replica_uuid, "uuid-b");
  EXPECT_EQ(lag.reason,
            "sales.orders: NOT THE SAME TABLE: us-east-1 has table-uuid uuid-a, eu-central-1 has "
            "uuid-b");
}

TEST(ReplicationLagTest, DefaultRetentionOfFiveDaysIsLongEnough) {
  TableLag lag = Compare(View(Chain(1, 3)), View(Chain(1, 3)), kT0 + 60'000,
                         LagPolicy{minutes(45), minutes(30)});
  EXPECT_EQ(lag.owner_retention, kDefaultSnapshotRetention);
  EXPECT_FALSE(lag.retention_too_short);
}

TEST(ReplicationLagTest, DefaultRetentionIsFlaggedAgainstAWeekOfStaleness) {
  TableLag lag =
      Compare(View(Chain(1, 3)), View(Chain(1, 3)), kT0 + 60'000, LagPolicy{hours(24 * 7), {}});
  EXPECT_TRUE(lag.retention_too_short);
  EXPECT_NE(lag.reason.find("snapshot retention 5d is shorter than max staleness 7d + margin 0ms"),
            std::string::npos)
      << lag.reason;
}

TEST(ReplicationLagTest, ExplicitShortRetentionIsFlaggedWithTheNumbers) {
  TableSnapshotView owner = View(Chain(1, 3));
  owner.properties["history.expire.max-snapshot-age-ms"] = "3600000";
  TableLag lag =
      Compare(owner, View(Chain(1, 3)), kT0 + 60'000, LagPolicy{minutes(45), minutes(30)});
  EXPECT_EQ(lag.owner_retention, hours(1));
  EXPECT_TRUE(lag.retention_too_short);
  EXPECT_EQ(lag.reason,
            "sales.orders: eu-central-1 is caught up with us-east-1 at snapshot 3; snapshot "
            "retention 1h is shorter than max staleness 45m + margin 30m: replicas may lose "
            "snapshots before they catch up");
  owner.properties["history.expire.max-snapshot-age-ms"] = "4500000";  // exactly 75m
  EXPECT_FALSE(Compare(owner, View(Chain(1, 3)), kT0, LagPolicy{minutes(45), minutes(30)})
                   .retention_too_short);
}

TEST(ReplicationLagTest, SnapshotLogStandsInWhenTheSnapshotListIsAbsent) {
  TableSnapshotView owner = View(Chain(1, 4));
  owner.snapshots.clear();
  TableLag lag = Compare(owner, View(Chain(1, 2)), kT0 + 13'000);
  EXPECT_EQ(lag.missing_commits, 2);
  EXPECT_EQ(lag.lag, seconds(10));
}

TEST(ReplicationLagTest, SummariseReportsTheWorstLagAsTheRpo) {
  const UnixMillis now = kT0 + 100'000;
  std::vector<TableLag> rows;
  rows.push_back(Compare(View(Chain(1, 5)), View(Chain(1, 4)), now));  // 95s, 1 missing
  rows.push_back(CompareReplica({{"ops"}, "events"}, "us-east-1", View(Chain(1, 5)), "ap-south-1",
                                View(Chain(1, 2)), now, {}));  // 97s, 3 missing
  rows.push_back(Compare(View(Chain(1, 5)), View(Chain(1, 5)), now));
  ScopeLag scope = Summarise(rows);
  EXPECT_EQ(scope.worst_lag, seconds(97));
  EXPECT_EQ(scope.worst_table, (TableIdent{{"ops"}, "events"}));
  EXPECT_EQ(scope.worst_replica, "ap-south-1");
  EXPECT_EQ(scope.total_missing, 4);
  EXPECT_EQ(scope.tables, 3);
  EXPECT_FALSE(scope.any_divergence);
  EXPECT_TRUE(scope.complete);
  EXPECT_TRUE(scope.all_within_max_staleness);

  rows.push_back(UncomparedLag(kOrders, "us-east-1", "eu-west-1", LagState::kUnknown,
                               "could not load from eu-west-1"));
  rows.push_back(Compare(View(Chain(1, 3), "a"), View(Chain(1, 3), "b"), now));
  scope = Summarise(rows);
  EXPECT_FALSE(scope.complete);
  EXPECT_TRUE(scope.any_divergence);
  EXPECT_EQ(scope.worst_lag, seconds(97));
}

// While a catalog is away the RPO is still bounded by the last comparison plus its age;
// a pair never compared is not, and Summarise says how many such rows there are.
TEST(ReplicationLagTest, SummariseBoundsUnknownRowsByTheirLastComparison) {
  const UnixMillis now = kT0 + 100'000;
  std::vector<TableLag> rows;
  rows.push_back(Compare(View(Chain(1, 5)), View(Chain(1, 4)), now));  // 95s behind
  TableLag away = UncomparedLag({{"ops"}, "events"}, "us-east-1", "eu-central-1",
                                LagState::kUnknown, "owner us-east-1 could not be listed");
  away.last_known_at = now - 35'000;
  away.last_known_lag = milliseconds(70'000);
  away.last_known_missing = 2;
  rows.push_back(away);
  EXPECT_EQ(LagUpperBound(away, now), milliseconds(105'000));

  ScopeLag scope = Summarise(rows, now);
  EXPECT_EQ(scope.worst_lag, seconds(95));  // what was measured this round
  EXPECT_FALSE(scope.complete);
  EXPECT_EQ(scope.worst_bound, seconds(105));
  EXPECT_EQ(scope.worst_bound_table, (TableIdent{{"ops"}, "events"}));
  EXPECT_EQ(scope.worst_bound_replica, "eu-central-1");
  EXPECT_EQ(scope.unbounded, 0);

  // Without the time of the rows, an unknown row's bound cannot be computed.
  scope = Summarise(rows);
  EXPECT_EQ(scope.worst_bound, seconds(95));
  EXPECT_EQ(scope.unbounded, 1);

  rows.push_back(UncomparedLag(kOrders, "us-east-1", "ap-south-1", LagState::kUnknown,
                               "ap-south-1 could not be listed"));
  rows.push_back(Compare(View(Chain(1, 3), "a"), View(Chain(1, 3), "b"), now));
  scope = Summarise(rows, now);
  EXPECT_EQ(scope.worst_bound, seconds(105));
  EXPECT_EQ(scope.unbounded, 2);  // never compared, and another table
}

TEST(ReplicationLagTest, SummariseOfNothingIsCaughtUp) {
  ScopeLag scope = Summarise({});
  EXPECT_EQ(scope.worst_lag, milliseconds(0));
  EXPECT_EQ(scope.worst_table, std::nullopt);
  EXPECT_TRUE(scope.complete);
}

TEST(ReplicationLagTest, DurationsReadLikePeopleWriteThem) {
  EXPECT_EQ(FormatLagDuration(milliseconds(850)), "850ms");
  EXPECT_EQ(FormatLagDuration(seconds(42)), "42s");
  EXPECT_EQ(FormatLagDuration(minutes(45)), "45m");
  EXPECT_EQ(FormatLagDuration(minutes(90) + seconds(7)), "1h30m");
  EXPECT_EQ(FormatLagDuration(kDefaultSnapshotRetention), "5d");
  EXPECT_EQ(FormatLagDuration(hours(24) + seconds(5)), "1d");
}

}  // namespace
}  // namespace icewarden
