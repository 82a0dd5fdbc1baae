// Issue 12, item 5: replicas partitioned from one region's catalog, with three etcd members,
// three replicas and the lab's catalogs as processes on their own hosts (network namespaces;
// tests/etcd/netns_cluster.h). A region's silence is fencing evidence only when a majority of
// the replicas hears nothing from it: one replica cut off is one vote and holds a failover
// out of that region in fencing; a second one cut off makes the majority, and it completes.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "tests/etcd/netns_cluster.h"

namespace icewarden::testing {
namespace {

class NetnsRegionPartitionTest : public NetnsClusterTest {
 protected:
  void SetUp() override {
    NetnsClusterTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    ASSERT_EQ(StartReplicas(), "");
    leader_ = replicas_[0].url;
    // Every table owned and both regions healthy, as the leader sees them.
    ASSERT_TRUE(Eventually([&] { return Ownership(leader_).size() >= 4; }, 30s));
    ASSERT_TRUE(Eventually(
        [&] { return Health(leader_, kUs) == "healthy" && Health(leader_, kEu) == "healthy"; },
        30s));
    // The rpo guard at approval needs a lag round that compared every us-east-1 table in
    // eu-central-1.
    ASSERT_TRUE(Eventually(
        [&] {
          int us = 0;
          for (const auto& [table, owner_epoch] : Ownership(leader_))
            us += owner_epoch.first == kUs;
          HttpReply r = Api(leader_, "GET", "/api/v1/lag?region=eu-central-1");
          int compared = 0;
          for (const json& t : r.body.value("tables", json::array()))
            compared += t.value("owner", "") == kUs && t.value("replica", "") == kEu &&
                        (t.value("state", "") == "behind" || t.value("state", "") == "caught_up");
          return us > 0 && compared >= us;
        },
        30s));
    // Every replica's view of us-east-1 says answered before anything is cut.
    ASSERT_TRUE(Eventually(
        [&] {
          json q = Quorum(leader_, kUs);
          for (const char* r : {"r1", "r2", "r3"})
            if (Vote(q, r).value("saw", "") != "answered") return false;
          return true;
        },
        30s))
        << Quorum(leader_, kUs).dump(2);
  }

  // Cuts `host` from us-east-1's catalog and waits until its replica has heard nothing from it
  // for the whole window, as the leader reads its view.
  void CutFromUs(const std::string& host, const std::string& replica) {
    ASSERT_EQ(lab_.Cut(host, lab_.address("cat", 0)), "");
    ASSERT_TRUE(Eventually(
        [&] { return Vote(Quorum(leader_, kUs), replica).value("silent_for_window", false); }, 30s))
        << Quorum(leader_, kUs).dump(2);
  }

  // Checks, for a few rounds past the window, that failover `id` stays in fencing with no
  // fencing recorded and us-east-1's quorum at one vote of the three.
  void ExpectHeldInFencing(const std::string& id, const std::string& silent_one) {
    ASSERT_TRUE(
        Eventually([&] { return Failover(leader_, id).value("phase", "") == "fencing"; }, 30s))
        << Failover(leader_, id).dump(2);
    // Twice unreachable_for and more, so the one vote has had every chance to count.
    for (int i = 0; i < 10; ++i) {
      std::this_thread::sleep_for(500ms);
      json f = Failover(leader_, id);
      ASSERT_EQ(f.value("phase", ""), "fencing")
          << "a failover left fencing on one vote of three:\n"
          << f.dump(2);
      EXPECT_TRUE(f["fencing"].is_null()) << f.dump(2);
    }
    json q = Quorum(leader_, kUs);
    EXPECT_EQ(q["unreachable"], false) << q.dump(2);
    EXPECT_EQ(q["votes"], 1) << q.dump(2);
    EXPECT_EQ(q["needed"], 2) << q.dump(2);
    EXPECT_NE(q.value("why", "").find("1 of 3"), std::string::npos) << q.dump(2);
    for (const char* r : {"r1", "r2", "r3"}) {
      json v = Vote(q, r);
      if (std::string(r) == silent_one) {
        EXPECT_EQ(v["silent_for_window"], true) << q.dump(2);
      } else {
        EXPECT_EQ(v["saw"], "answered") << q.dump(2);
      }
    }
    // The standbys say the same of their own views: what the leader reads is what they saw.
    HttpReply standby = Api(replicas_[2].url, "GET", "/api/v1/cluster");
    ASSERT_EQ(standby.status, 200) << standby.text;
    EXPECT_EQ(standby.body["quorum"][kUs]["votes"], 1) << standby.text;
    EXPECT_EQ(standby.body["quorum"][kUs]["unreachable"], false) << standby.text;
  }

  std::string leader_;
};

// "One replica partitioned from one region -> no proposal": r2, a standby, cannot reach
// us-east-1 while r1 and r3 can. Its view says silent, the others' answered; the quorum is one
// vote of three and us-east-1 is not unreachable; a failover out of it waits in fencing.
TEST_F(NetnsRegionPartitionTest, AStandbyCutOffFromARegionIsOneVoteAndAFailoverOutOfItWaits) {
  CutFromUs("n2", "r2");
  // r2's own API says what it sees: the region silent, and still no quorum.
  HttpReply own = Api(replicas_[1].url, "GET", "/api/v1/cluster");
  ASSERT_EQ(own.status, 200) << own.text;
  EXPECT_EQ(own.body["role"], "standby");
  for (const json& v : own.body["views"])
    if (v["replica"] == "r2") {
      EXPECT_EQ(v["regions"][kUs]["silent"], true) << own.text;
    }

  const auto before = Ownership(leader_);
  const std::string id = ProposeAndApprove(leader_);
  ASSERT_FALSE(id.empty());
  ExpectHeldInFencing(id, "r2");
  EXPECT_EQ(Ownership(leader_), before) << "ownership moved on one vote of three";
}

// A partition around the leader: r1 leads and cannot reach us-east-1, r2 and r3 can. A failover
// out of us-east-1 is held in fencing (the leader's own silence is one vote); once r2 is cut off
// too, a majority has heard nothing, the evidence is recorded with what each replica saw, and
// the failover completes.
TEST_F(NetnsRegionPartitionTest, AFailoverHeldByAPartitionAroundTheLeaderCompletesWithAMajority) {
  CutFromUs("n1", "r1");
  const auto before = Ownership(leader_);
  const std::string id = ProposeAndApprove(leader_);
  ASSERT_FALSE(id.empty());
  ExpectHeldInFencing(id, "r1");
  if (HasFatalFailure()) return;

  CutFromUs("n2", "r2");
  ASSERT_TRUE(
      Eventually([&] { return Failover(leader_, id).value("phase", "") == "completed"; }, 60s))
      << Failover(leader_, id).dump(2);
  json f = Failover(leader_, id);
  EXPECT_EQ(f["fencing"]["kind"], "old_region_unreachable") << f.dump(2);
  const json& evidence = f["fencing"]["evidence"];
  EXPECT_EQ(evidence["quorum"]["votes"], 2) << evidence.dump(2);
  EXPECT_EQ(evidence["quorum"]["needed"], 2) << evidence.dump(2);
  ASSERT_EQ(evidence["observed_by"].size(), 3u) << evidence.dump(2);
  EXPECT_EQ(evidence["observed_by"][0]["replica"], "r1");
  EXPECT_EQ(evidence["observed_by"][0]["silent_for_window"], true);
  EXPECT_EQ(evidence["observed_by"][1]["replica"], "r2");
  EXPECT_EQ(evidence["observed_by"][1]["silent_for_window"], true);
  EXPECT_EQ(evidence["observed_by"][2]["replica"], "r3");
  EXPECT_EQ(evidence["observed_by"][2]["saw"], "answered");

  const auto after = Ownership(leader_);
  int moved = 0;
  for (const auto& [table, owner_epoch] : before) {
    if (owner_epoch.first != kUs) continue;
    ++moved;
    EXPECT_EQ(after.at(table).first, kEu) << table;
    EXPECT_EQ(after.at(table).second, owner_epoch.second + 1) << table;
  }
  EXPECT_GT(moved, 0) << "us-east-1 owned no table to move";
}

}  // namespace
}  // namespace icewarden::testing
