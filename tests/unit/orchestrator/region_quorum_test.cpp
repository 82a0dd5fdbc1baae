// Detection by quorum (orchestrator/watch/region_quorum.h): who votes, what a vote needs, and the
// views as replicas publish them in etcd (orchestrator/cluster/cluster.h).
#include "orchestrator/watch/region_quorum.h"

#include <gtest/gtest.h>

#include "orchestrator/cluster/cluster_internal.h"
#include "orchestrator/config/config.h"
#include "orchestrator/watch/live_view.h"

namespace icewarden {
namespace {

using namespace std::chrono_literals;

QuorumRules Rules(std::vector<std::string> replicas) {
  QuorumRules r;
  r.replicas = std::move(replicas);
  r.window = 10s;
  r.max_view_age = 5s;
  r.max_round_age = 4s;
  return r;
}

ReplicaView Silent(const std::string& name, std::int64_t silent_ms,
                   std::optional<std::int64_t> heard_ms = 500, std::int64_t round_age_ms = 200) {
  ReplicaView v;
  v.replica = name;
  v.heard_ms_ago = heard_ms;
  RegionSight s;
  s.probed = true;
  s.silent = silent_ms > 0;
  s.silent_for_ms = silent_ms;
  s.silent_rounds = 3;
  s.detail = s.silent ? "connection refused" : "";
  s.round_age_ms = round_age_ms;
  v.regions["us"] = s;
  return v;
}

TEST(RegionQuorumTest, AMajorityOfTheConfiguredReplicasMustEachHaveHeardNothingForTheWindow) {
  auto rules = Rules({"a", "b", "c"});
  auto one = JudgeUnreachable("us", rules, {Silent("a", 60'000), Silent("b", 0), Silent("c", 0)});
  EXPECT_FALSE(one.unreachable);
  EXPECT_EQ(one.votes, 1);
  EXPECT_EQ(one.needed, 2);
  auto two =
      JudgeUnreachable("us", rules, {Silent("a", 60'000), Silent("b", 0), Silent("c", 10'000)});
  EXPECT_TRUE(two.unreachable) << two.why;
  EXPECT_EQ(two.votes, 2);
  ASSERT_EQ(two.by_replica.size(), 3u);
  EXPECT_TRUE(two.by_replica[2].silent_long_enough);
  EXPECT_EQ(two.by_replica[1].saw, "answered");
  // Silent, but not for the whole window yet.
  auto short_run =
      JudgeUnreachable("us", rules, {Silent("a", 60'000), Silent("b", 0), Silent("c", 9'999)});
  EXPECT_FALSE(short_run.unreachable);
  // Five replicas: three are a majority, two are not.
  auto five = Rules({"a", "b", "c", "d", "e"});
  EXPECT_FALSE(
      JudgeUnreachable("us", five, {Silent("a", 20'000), Silent("b", 20'000)}).unreachable);
  EXPECT_TRUE(
      JudgeUnreachable("us", five, {Silent("a", 20'000), Silent("b", 20'000), Silent("e", 20'000)})
          .unreachable);
}

// The leader's health machine asks a looser question than the fencing evidence: did a majority
// get no answer in their latest rounds, however short the silence so far?
TEST(RegionQuorumTest, HealthIsWithheldFromUnreachableUntilAMajorityIsSilentNow) {
  Config config;
  config.state.etcd.replicas = {"a", "b", "c"};
  config.policies.unreachable_for = 60s;
  RegionConfig us;
  us.name = "us";
  config.regions.push_back(us);
  const std::string one = UnreachableWithheld("us", config, {Silent("a", 900), Silent("b", 0)});
  EXPECT_NE(one.find("1 of 3 replicas heard nothing from us in their latest round"),
            std::string::npos)
      << one;
  EXPECT_NE(one.find("b: answered"), std::string::npos) << one;
  EXPECT_EQ(UnreachableWithheld("us", config, {Silent("a", 900), Silent("c", 300)}), "")
      << "two of three silent now, well inside unreachable_for";
  // One replica listed (or none): nobody else to ask.
  config.state.etcd.replicas = {"a"};
  EXPECT_EQ(UnreachableWithheld("us", config, {Silent("a", 900), Silent("b", 0)}), "");
}

TEST(RegionQuorumTest, MissingStaleOrForeignViewsAreNoVote) {
  auto rules = Rules({"a", "b", "c"});
  // c has no view at all (cut off from etcd, or not running).
  auto missing = JudgeUnreachable("us", rules, {Silent("a", 60'000), Silent("b", 0)});
  EXPECT_FALSE(missing.unreachable);
  EXPECT_NE(missing.by_replica[2].saw.find("no view"), std::string::npos);
  // b's view was never seen to change: left by a replica that may have died.
  EXPECT_FALSE(
      JudgeUnreachable("us", rules, {Silent("a", 60'000), Silent("b", 60'000, std::nullopt)})
          .unreachable);
  // b's view stopped changing 6 s ago: older than max_view_age.
  EXPECT_FALSE(
      JudgeUnreachable("us", rules, {Silent("a", 60'000), Silent("b", 60'000, 6'000)}).unreachable);
  // b publishes, but its probes are stuck: its latest round is older than max_round_age once
  // the view's own age is added (3.5 s + 1 s).
  auto stuck =
      JudgeUnreachable("us", rules, {Silent("a", 60'000), Silent("b", 60'000, 1'000, 3'500)});
  EXPECT_FALSE(stuck.unreachable);
  EXPECT_NE(stuck.by_replica[1].saw.find("stuck"), std::string::npos) << stuck.by_replica[1].saw;
  // z is not in state.etcd.replicas: it never votes, however many views it leaves.
  EXPECT_FALSE(
      JudgeUnreachable("us", rules, {Silent("a", 60'000), Silent("z", 60'000)}).unreachable);
  // A replica that never probed the region has nothing to say of it.
  ReplicaView unprobed = Silent("b", 60'000);
  unprobed.regions["us"].probed = false;
  EXPECT_FALSE(JudgeUnreachable("us", rules, {Silent("a", 60'000), unprobed}).unreachable);
  // No replicas configured: no quorum can form.
  EXPECT_FALSE(JudgeUnreachable("us", Rules({}), {Silent("a", 60'000)}).unreachable);
}

TEST(RegionQuorumTest, AViewIsMeasuredOnItsOwnReplicasClockSoAClockOffsetCancels) {
  // The same observations on two clocks 30 s apart give the same view.
  auto view_at = [](UnixMillis offset) {
    LiveView live;
    const UnixMillis now = 1'800'000'000'000 + offset;
    live.PublishProbeRound("us",
                           ProbeRoundView{false, 200ms, "catalog_config", "refused", now - 300});
    live.PublishSilence("us", RegionSilence{now - 4'000, 16, "connection refused"});
    live.PublishProbeRound("eu", ProbeRoundView{true, 3ms, "catalog_config", "", now - 100});
    return ViewOf("a", {"us", "eu", "ap"}, live, now);
  };
  const ReplicaView true_clock = view_at(0), skewed = view_at(30'000);
  EXPECT_EQ(ViewJson(true_clock), ViewJson(skewed));
  EXPECT_TRUE(true_clock.regions.at("us").silent);
  EXPECT_EQ(true_clock.regions.at("us").silent_for_ms, 4'000);
  EXPECT_EQ(true_clock.regions.at("us").round_age_ms, 300);
  EXPECT_FALSE(true_clock.regions.at("eu").silent);
  EXPECT_TRUE(true_clock.regions.at("eu").probed);
  EXPECT_FALSE(true_clock.regions.at("ap").probed);
}

TEST(RegionQuorumTest, ViewsRoundTripThroughTheirJsonAndAnythingElseIsNoView) {
  ReplicaView v = Silent("b", 12'345);
  auto back = ParseViewJson(ViewJson(v));
  ASSERT_TRUE(back);
  EXPECT_EQ(back->replica, "b");
  EXPECT_EQ(back->regions.at("us").silent_for_ms, 12'345);
  EXPECT_EQ(back->regions.at("us").detail, "connection refused");
  EXPECT_FALSE(back->heard_ms_ago) << "freshness is the reader's to measure, never published";
  for (const char* bad :
       {"", "[]", "{\"replica\": 3, \"regions\": {}}", "{\"replica\": \"b\"}",
        "{\"replica\": \"b\", \"regions\": {\"us\": 1}}",
        "{\"replica\": \"b\", \"regions\": {\"us\": {\"silent_for_ms\": \"x\"}}}"})
    EXPECT_FALSE(ParseViewJson(bad)) << bad;
}

}  // namespace
}  // namespace icewarden
