// One replica's clock 30 s off changes nothing that matters (issue 12, item 5): three real
// `icewarden serve` replicas on a real etcd member, one of them run under libfaketime
// (Debian's `faketime` package) with a constant offset. Leadership, quorum votes and fencing
// evidence must come out exactly as with true clocks, because no timestamp crosses replicas:
// leases are etcd's, a leader's act_until is its own steady clock, silences are measured on the
// prober's clock and a peer's view is fresh when its mod revision is seen to change
// (orchestrator/watch/region_quorum.h, orchestrator/cluster/replica_views.h).
//
// What would break if a wall-clock timestamp were compared across replicas: a view stamped by a
// clock 30 s slow would look 30 s old to the others (no vote), and a reader 30 s fast would find
// every other view 30 s old (its quorum would be its own vote). The tests assert every vote.
// The libfaketime setup: tests/etcd/skewed_replicas.h.
#include <array>
#include <nlohmann/json.hpp>

#include "tests/etcd/skewed_replicas.h"

namespace icewarden::testing {
namespace {

using nlohmann::json;

class SkewedReplicaTest : public SkewedReplicasTest {
 protected:
  // Starts replica-a (which leads), then replica-b and replica-c (which stand by), each with its
  // skew and its us-east-1 catalog; eu-central-1 at `eu` for all. The term replica-a won, or 0
  // when they did not come up so.
  std::int64_t StartThree(const std::array<Skew, 3>& skews, const std::array<std::string, 3>& us,
                          const std::string& eu) {
    const char* names[] = {"replica-a", "replica-b", "replica-c"};
    for (int i = 0; i < 3; ++i) {
      const std::string line = Start(names[i], skews[i], us[i], eu);
      const char* want = i == 0 ? "serving" : "standby";
      EXPECT_NE(line.find(want), std::string::npos) << names[i] << ": " << line;
      if (line.find(want) == std::string::npos) return 0;
    }
    const auto [term, holder] = LeaderKey();
    EXPECT_EQ(holder, "replica-a");
    return holder == "replica-a" ? term : 0;
  }

  // `name`'s vote on `region` in a /api/v1/cluster answer.
  static json VoteOf(const json& cluster, const std::string& region, const std::string& name) {
    for (const json& v : cluster["quorum"][region]["by_replica"])
      if (v["replica"] == name) return v;
    return nullptr;
  }

  // Every replica's /api/v1/cluster, once all three count all three views: us-east-1 (nobody
  // hears it) unreachable with 3 votes, eu-central-1 (everyone hears it) reachable, 0 votes.
  void ExpectEveryViewCountsEverywhere() {
    for (const char* name : {"replica-a", "replica-b", "replica-c"}) {
      SCOPED_TRACE(name);
      json cluster = ClusterUntil(name, [](const json& c) {
        return c["quorum"]["us-east-1"]["votes"] == 3 &&
               c["quorum"]["eu-central-1"]["by_replica"].size() == 3 &&
               VoteOf(c, "eu-central-1", "replica-a")["saw"] == "answered" &&
               VoteOf(c, "eu-central-1", "replica-b")["saw"] == "answered" &&
               VoteOf(c, "eu-central-1", "replica-c")["saw"] == "answered";
      });
      ASSERT_TRUE(cluster.is_object()) << "no answer from " << name;
      EXPECT_EQ(cluster["views"].size(), 3u) << cluster.dump(2);
      const json& us = cluster["quorum"]["us-east-1"];
      EXPECT_EQ(us["votes"], 3) << "every replica's silence counts, the skewed one's too\n"
                                << cluster.dump(2);
      EXPECT_EQ(us["unreachable"], true);
      for (const json& v : us["by_replica"]) EXPECT_EQ(v["silent_for_window"], true) << v.dump();
      const json& eu = cluster["quorum"]["eu-central-1"];
      EXPECT_EQ(eu["unreachable"], false) << "a region everyone hears\n" << eu.dump(2);
      EXPECT_EQ(eu["votes"], 0);
      for (const json& v : eu["by_replica"]) EXPECT_EQ(v["saw"], "answered") << v.dump();
    }
  }

  // The three with nobody hearing us-east-1 and everybody eu-central-1 at `eu`: every view counts
  // on every replica, and over four TTLs the leader key keeps replica-a's term while the others
  // stand by. The term, or 0.
  std::int64_t StartStable(const std::array<Skew, 3>& skews, const std::string& eu) {
    const std::int64_t term = StartThree(skews, {kDeadCatalog, kDeadCatalog, kDeadCatalog}, eu);
    if (term == 0) return 0;
    ExpectEveryViewCountsEverywhere();
    EXPECT_TRUE(TermHolds(term, std::chrono::seconds(kSkewTtlSeconds * 4)))
        << "the leader key changed hands while its holder lived";
    EXPECT_EQ(Call("replica-b", "GET", "/api/v1/cluster")["role"], "standby");
    EXPECT_EQ(Call("replica-c", "GET", "/api/v1/cluster")["role"], "standby");
    return term;
  }
};

TEST_F(SkewedReplicaTest, ALeaderThirtySecondsFastKeepsItsTermAndCountsEveryViewLikeTheOthers) {
  AnsweringCatalog eu;
  const std::int64_t term = StartStable({Skew{"+30s"}, Skew{}, Skew{}}, eu.url());
  ASSERT_NE(term, 0);

  replicas_["replica-a"].process->Signal(SIGKILL);
  ASSERT_EQ(replicas_["replica-a"].process->Wait(5s), -SIGKILL);
  const auto handed = NextTerm(term);
  EXPECT_NE(handed.first, term);
  EXPECT_TRUE(handed.second == "replica-b" || handed.second == "replica-c")
      << "nobody took over from the killed skewed leader: " << handed.second;
}

TEST_F(SkewedReplicaTest, AStandbyThirtySecondsSlowNeitherTakesTheKeyNorLosesItsVote) {
  AnsweringCatalog eu;
  const std::int64_t term = StartStable({Skew{}, Skew{"-30s"}, Skew{}}, eu.url());
  ASSERT_NE(term, 0);

  // Killing the leader hands over; until the skewed standby leads, kill whoever does.
  std::int64_t last = term;
  for (const char* dead : {"replica-a", "replica-c"}) {
    std::string now_leading = LeaderKey().second;
    if (now_leading == "replica-b") break;
    ASSERT_EQ(now_leading, dead);
    replicas_[dead].process->Signal(SIGKILL);
    ASSERT_EQ(replicas_[dead].process->Wait(5s), -SIGKILL);
    const auto next = NextTerm(last);
    ASSERT_NE(next.first, last) << "nobody took over from " << dead;
    last = next.first;
  }
  EXPECT_EQ(LeaderKey().second, "replica-b");
  auto line = replicas_["replica-b"].process->ReadLine(10s);
  ASSERT_TRUE(line.has_value()) << "the skewed standby printed nothing when it took over";
  EXPECT_NE(line->find("serving"), std::string::npos) << *line;
  EXPECT_EQ(Call("replica-b", "GET", "/api/v1/cluster")["role"], "leader");
  // The skew reached the binary: what it writes carries its clock, 30 s behind.
  json proposed = Call("replica-b", "POST", "/api/v1/failovers", "operator-secret-1",
                       R"({"to": "eu-central-1", "scope": "owner:us-east-1", "reason": "skew"})");
  ASSERT_EQ(proposed["_status"], 201) << proposed.dump(2);
  const std::int64_t behind =
      RealNowMs() - proposed["failover"]["created_at_unix_ms"].get<std::int64_t>();
  EXPECT_GT(behind, 20'000) << "libfaketime did not move serve's clock";
  EXPECT_LT(behind, 40'000);
}

// Fencing evidence by quorum: the skewed leader alone hears nothing from us-east-1 (its config
// points it at a dead port) while the two others hear it, so an approved failover waits in
// fencing; once nobody hears us-east-1, it completes.
TEST_F(SkewedReplicaTest, AFailoverNeedingEvidenceDoesNotCompleteOnTheSkewedLeadersSilenceAlone) {
  AnsweringCatalog us, eu;
  ASSERT_NE(
      StartThree({Skew{"+30s"}, Skew{}, Skew{}}, {kDeadCatalog, us.url(), us.url()}, eu.url()), 0);
  json cluster = ClusterUntil("replica-a", [](const json& c) {
    return VoteOf(c, "us-east-1", "replica-a")["silent_for_window"] == true &&
           VoteOf(c, "us-east-1", "replica-b")["saw"] == "answered" &&
           VoteOf(c, "us-east-1", "replica-c")["saw"] == "answered";
  });
  ASSERT_EQ(cluster["quorum"]["us-east-1"]["votes"], 1) << cluster.dump(2);

  const std::int64_t real_now = RealNowMs();
  json proposed = Call("replica-a", "POST", "/api/v1/failovers", "operator-secret-1",
                       R"({"to": "eu-central-1", "scope": "owner:us-east-1",
                           "reason": "us-east-1 silent to the leader"})");
  ASSERT_EQ(proposed["_status"], 201) << proposed.dump(2);
  const std::string id = proposed["failover"]["id"];
  // The skew reached the binary: its store writes carry its clock, 30 s ahead.
  const std::int64_t created = proposed["failover"]["created_at_unix_ms"];
  EXPECT_GT(created - real_now, 20'000) << "libfaketime did not move serve's clock";
  EXPECT_LT(created - real_now, 40'000);
  json approved =
      Call("replica-a", "POST", "/api/v1/failovers/" + id + "/approve", "approver-secret-1",
           json{{"plan_hash", proposed["failover"]["plan"]["plan_hash"]}, {"reason", "skew test"}}
               .dump());
  ASSERT_EQ(approved["_status"], 200) << approved.dump(2);

  // Several windows of unreachable_for (1 s) on the leader's silence alone: still fencing.
  const auto stop = std::chrono::steady_clock::now() + 6s;
  json f;
  while (std::chrono::steady_clock::now() < stop) {
    f = Call("replica-a", "GET", "/api/v1/failovers/" + id);
    ASSERT_TRUE(f.is_object());
    const std::string phase = f.value("phase", "");
    ASSERT_TRUE(phase == "approved" || phase == "fencing")
        << "one replica's silence confirmed fencing:\n"
        << f.dump(2);
    std::this_thread::sleep_for(200ms);
  }

  us.Stop();  // now nobody hears us-east-1: a quorum of three
  const auto done = std::chrono::steady_clock::now() + 30s;
  while (std::chrono::steady_clock::now() < done) {
    f = Call("replica-a", "GET", "/api/v1/failovers/" + id);
    if (f.is_object() && f.value("phase", "") == "completed") break;
    std::this_thread::sleep_for(200ms);
  }
  ASSERT_EQ(f.value("phase", ""), "completed")
      << f.value("last_reason", "") << "\n"
      << Call("replica-a", "GET", "/api/v1/cluster")["quorum"]["us-east-1"].dump(2);
  ASSERT_TRUE(f.contains("fencing")) << f.dump(2);
  EXPECT_NE(f["fencing"].dump().find("old_region_unreachable"), std::string::npos)
      << f["fencing"].dump(2);
}

}  // namespace
}  // namespace icewarden::testing
