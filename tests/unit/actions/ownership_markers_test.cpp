// JudgeMarker: every verdict of a catalog's ownership marker against the store's row.
#include "actions/ownership_markers.h"

#include <gtest/gtest.h>

namespace icewarden {
namespace {

const std::string kUs = "us-east-1";
const std::string kEu = "eu-central-1";

Ownership Row(std::string owner, Epoch epoch, std::string failover_id = "fo-1") {
  Ownership row;
  row.table = *TableIdent::Parse("eu.orders");
  row.owner = std::move(owner);
  row.epoch = epoch;
  row.failover_id = std::move(failover_id);
  return row;
}

MarkerProperties Marker(std::optional<std::string> owner, std::optional<std::string> epoch) {
  return MarkerProperties{std::move(owner), std::move(epoch)};
}

MarkerVerdict Verdict(const Ownership& row, const std::optional<MarkerProperties>& m) {
  return JudgeMarker(row, m, kUs).verdict;
}

TEST(OwnershipMarkersTest, ReadsOnlyTheTwoProperties) {
  auto m =
      ReadMarkerProperties({{"icewarden.owner", kUs}, {"owner", "x"}, {"icewarden.epoch", "2"}});
  EXPECT_EQ(m.owner, kUs);
  EXPECT_EQ(m.epoch, "2");
  auto none = ReadMarkerProperties({{"write.format.default", "parquet"}});
  EXPECT_FALSE(none.owner);
  EXPECT_FALSE(none.epoch);
}

TEST(OwnershipMarkersTest, AtTheStoresEpochAndOwnerIsOk) {
  auto j = JudgeMarker(Row(kUs, 2), Marker(kUs, "2"), kUs);
  EXPECT_EQ(j.verdict, MarkerVerdict::kOk);
  EXPECT_EQ(j.marker_epoch, 2);
  EXPECT_TRUE(j.reason.empty());
  // A table the region does not own, marked by replication from its owner, is ok too.
  EXPECT_EQ(Verdict(Row(kEu, 5), Marker(kEu, "5")), MarkerVerdict::kOk);
}

TEST(OwnershipMarkersTest, LowerEpochIsStaleWhoeverOwnsTheTable) {
  auto j = JudgeMarker(Row(kUs, 3), Marker(kUs, "2"), kUs);
  EXPECT_EQ(j.verdict, MarkerVerdict::kStale);
  EXPECT_EQ(j.reason,
            "marker epoch 2 (owner \"us-east-1\") is lower than the store's epoch 3 (owner "
            "us-east-1): a stale leader's or stale run's residue");
  EXPECT_EQ(Verdict(Row(kEu, 3), Marker(kUs, "1")), MarkerVerdict::kStale);
  EXPECT_EQ(Verdict(Row(kEu, 3, ""), Marker(kEu, "0")), MarkerVerdict::kStale);
}

TEST(OwnershipMarkersTest, HigherEpochIsAhead) {
  auto j = JudgeMarker(Row(kUs, 2), Marker(kUs, "3"), kUs);
  EXPECT_EQ(j.verdict, MarkerVerdict::kAhead);
  EXPECT_NE(j.reason.find("a marker from a future epoch; the store was rolled back or another "
                          "orchestrator writes this catalog"),
            std::string::npos)
      << j.reason;
  EXPECT_EQ(Verdict(Row(kEu, 2), Marker(kEu, "9")), MarkerVerdict::kAhead);
}

TEST(OwnershipMarkersTest, SameEpochOtherOwnerIsAContradiction) {
  auto j = JudgeMarker(Row(kUs, 2), Marker(kEu, "2"), kUs);
  EXPECT_EQ(j.verdict, MarkerVerdict::kConflicting);
  EXPECT_EQ(j.reason,
            "marker at the store's epoch 2 names \"eu-central-1\", but the store's owner is "
            "us-east-1");
  EXPECT_EQ(Verdict(Row(kEu, 2), Marker(kUs, "2")), MarkerVerdict::kConflicting);
}

TEST(OwnershipMarkersTest, HalfAMarkerOrAnEpochThatIsNoNumberIsInvalid) {
  for (const char* epoch : {"two", "", "2.0", " 2", "2 ", "-1", "+2", "99999999999999999999"}) {
    auto j = JudgeMarker(Row(kUs, 2), Marker(kUs, std::string(epoch)), kUs);
    EXPECT_EQ(j.verdict, MarkerVerdict::kInvalid) << "'" << epoch << "'";
    EXPECT_FALSE(j.marker_epoch) << epoch;
  }
  EXPECT_EQ(JudgeMarker(Row(kUs, 2), Marker(kUs, std::nullopt), kUs).reason,
            "unparseable marker: icewarden.owner \"us-east-1\" without icewarden.epoch");
  EXPECT_EQ(JudgeMarker(Row(kUs, 2), Marker(std::nullopt, "2"), kUs).reason,
            "unparseable marker: icewarden.epoch \"2\" without icewarden.owner");
  // Quoted values are bounded.
  auto long_value = JudgeMarker(Row(kUs, 2), Marker(kUs, std::string(5000, 'x')), kUs);
  EXPECT_EQ(long_value.verdict, MarkerVerdict::kInvalid);
  EXPECT_LT(long_value.reason.size(), 150u) << long_value.reason;
  EXPECT_NE(long_value.reason.find("(5000 bytes)"), std::string::npos) << long_value.reason;
}

TEST(OwnershipMarkersTest, NoMarkerIsMissingOnlyWhereAFailoverMovedTheTableToTheRegion) {
  auto j = JudgeMarker(Row(kUs, 2, "fo-7"), Marker(std::nullopt, std::nullopt), kUs);
  EXPECT_EQ(j.verdict, MarkerVerdict::kMissing);
  EXPECT_EQ(j.reason,
            "no marker in us-east-1, which owns it at epoch 2 since failover fo-7: its transfer "
            "should have written one");
  EXPECT_EQ(Verdict(Row(kUs, 2), std::nullopt), MarkerVerdict::kMissing);  // not in the catalog
  EXPECT_EQ(JudgeMarker(Row(kUs, 2), std::nullopt, kUs).reason.rfind("not in the catalog", 0), 0u);
  // Owned elsewhere: only a marker there is checked.
  EXPECT_EQ(Verdict(Row(kEu, 2), Marker(std::nullopt, std::nullopt)), MarkerVerdict::kUnmarked);
  EXPECT_EQ(Verdict(Row(kEu, 2), std::nullopt), MarkerVerdict::kUnmarked);
  // An initial claim: no failover moved it, so nothing ever wrote a marker.
  EXPECT_EQ(Verdict(Row(kUs, 1, ""), Marker(std::nullopt, std::nullopt)), MarkerVerdict::kUnmarked);
}

TEST(OwnershipMarkersTest, WhichVerdictsFail) {
  EXPECT_FALSE(MarkerVerdictFails(MarkerVerdict::kOk, false));
  EXPECT_FALSE(MarkerVerdictFails(MarkerVerdict::kUnmarked, false));
  EXPECT_TRUE(MarkerVerdictFails(MarkerVerdict::kMissing, false));
  EXPECT_FALSE(MarkerVerdictFails(MarkerVerdict::kMissing, true));
  for (auto v : {MarkerVerdict::kStale, MarkerVerdict::kAhead, MarkerVerdict::kConflicting,
                 MarkerVerdict::kInvalid}) {
    EXPECT_TRUE(MarkerVerdictFails(v, false)) << MarkerVerdictName(v);
    EXPECT_TRUE(MarkerVerdictFails(v, true)) << MarkerVerdictName(v);
  }
}

}  // namespace
}  // namespace icewarden
