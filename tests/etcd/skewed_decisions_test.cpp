// No timestamp compared across replicas (issue 30, item 3): two real `icewarden serve` replicas
// on a real etcd member, the second one's wall clock 30 s ahead (libfaketime; the setup is in
// skewed_replicas.h). A failover's end and a first approval are recorded under the true-clock
// leader; the leader is killed and the skewed replica takes over and decides. The cooldown and
// the approval's window are spans measured by the state store's clock (etcd lease timers,
// StateStore::StartTimer), so the decision comes out as with true clocks. Before, the skewed
// leader compared its own clock with the stamps the first leader wrote: every span looked
// 30 s longer, the cooldown had passed and the first approval had expired.
#include <nlohmann/json.hpp>
#include <string>

#include "tests/etcd/skewed_replicas.h"

namespace icewarden::testing {
namespace {

using nlohmann::json;

class SkewedDecisionsTest : public SkewedReplicasTest {
 protected:
  // replica-a (true clock, leading) and replica-b (30 s fast, standing by); nobody hears
  // us-east-1, so old_region_unreachable confirms a failover's fencing by both views.
  void StartTwo(const std::string& eu) {
    replica_list_ = "replica-a, replica-b";
    const std::string a = Start("replica-a", Skew{}, kDeadCatalog, eu);
    ASSERT_NE(a.find("serving"), std::string::npos) << a;
    const std::string b = Start("replica-b", Skew{"+30s"}, kDeadCatalog, eu);
    ASSERT_NE(b.find("standby"), std::string::npos) << b;
    ASSERT_NO_FATAL_FAILURE(WaitForATargetHealthy("replica-a"));
  }

  // Kills replica-a and waits until replica-b leads.
  void HandOverToTheSkewedReplica() {
    const std::int64_t term = LeaderKey().first;
    replicas_["replica-a"].process->Signal(SIGKILL);
    ASSERT_EQ(replicas_["replica-a"].process->Wait(5s), -SIGKILL);
    const auto next = NextTerm(term);
    ASSERT_EQ(next.second, "replica-b");
    auto line = replicas_["replica-b"].process->ReadLine(10s);
    ASSERT_TRUE(line.has_value()) << "replica-b printed nothing when it took over";
    ASSERT_NE(line->find("serving"), std::string::npos) << *line;
    ASSERT_NO_FATAL_FAILURE(WaitForATargetHealthy("replica-b"));
  }

  // A failover of owner:us-east-1 proposed on `replica`; its body.
  json Propose(const std::string& replica) {
    json proposed = Call(replica, "POST", "/api/v1/failovers", "operator-secret-1",
                         R"({"to": "eu-central-1", "scope": "owner:us-east-1", "reason": "skew"})");
    EXPECT_EQ(proposed["_status"], 201) << proposed.dump(2);
    return proposed;
  }

  json Approve(const std::string& replica, const json& proposed, const std::string& token) {
    const std::string id = proposed["failover"]["id"];
    return Call(
        replica, "POST", "/api/v1/failovers/" + id + "/approve", token,
        json{{"plan_hash", proposed["failover"]["plan"]["plan_hash"]}, {"reason", "skew test"}}
            .dump());
  }

  // Polls failover `id` on `replica` until its phase is `phase` (up to 30 s); the last answer.
  json WaitForPhase(const std::string& replica, const std::string& id, const std::string& phase) {
    json f;
    const auto stop = std::chrono::steady_clock::now() + 30s;
    while (std::chrono::steady_clock::now() < stop) {
      f = Call(replica, "GET", "/api/v1/failovers/" + id);
      if (f.is_object() && f.value("phase", "") == phase) break;
      std::this_thread::sleep_for(200ms);
    }
    return f;
  }

  // Waits (up to 20 s) until `replica` records eu-central-1 healthy, the failovers' target.
  void WaitForATargetHealthy(const std::string& replica) {
    std::string seen;
    const auto stop = std::chrono::steady_clock::now() + 20s;
    while (std::chrono::steady_clock::now() < stop) {
      json regions = Call(replica, "GET", "/api/v1/regions");
      seen = regions.dump();
      const json list = regions.is_object() ? regions.value("regions", json::array()) : regions;
      if (list.is_array())
        for (const json& r : list)
          if (r.value("name", "") == "eu-central-1" && r.value("health", "") == "healthy") return;
      std::this_thread::sleep_for(200ms);
    }
    FAIL() << "eu-central-1 never healthy on " << replica << ": " << seen;
  }

  static json GuardOf(const json& answer, const std::string& guard) {
    for (const json& g : answer.value("guards", json::array()))
      if (g.value("guard", "") == guard) return g;
    return nullptr;
  }
};

// The true-clock leader ends a failover; 30 s fast, the next leader would have found the 30 s
// cooldown over at once. By the store's timer, it holds until acknowledged.
TEST_F(SkewedDecisionsTest, ACooldownEndedUnderOneLeaderHoldsUnderALeaderThirtySecondsFast) {
  policies_ = "  cooldown: 30s\n  fencing_evidence: [old_region_unreachable]\n";
  AnsweringCatalog eu;
  ASSERT_NO_FATAL_FAILURE(StartTwo(eu.url()));

  json first = Propose("replica-a");
  const std::string first_id = first["failover"]["id"];
  json approved = Approve("replica-a", first, "approver-secret-1");
  ASSERT_EQ(approved["_status"], 200) << approved.dump(2);
  json ended = WaitForPhase("replica-a", first_id, "completed");
  ASSERT_EQ(ended.value("phase", ""), "completed") << ended.dump(2);

  ASSERT_NO_FATAL_FAILURE(HandOverToTheSkewedReplica());
  json again = Propose("replica-b");
  ASSERT_TRUE(again["failover"].contains("id")) << again.dump(2);
  const std::int64_t ahead =
      again["failover"]["created_at_unix_ms"].get<std::int64_t>() - RealNowMs();
  EXPECT_GT(ahead, 20'000) << "libfaketime did not move replica-b's clock";
  json refused = Approve("replica-b", again, "approver-secret-1");
  EXPECT_EQ(refused["_status"], 409) << "the cooldown was over by the skewed leader's clock:\n"
                                     << refused.dump(2);
  const json cooldown = GuardOf(refused, "cooldown");
  ASSERT_TRUE(cooldown.is_object()) << refused.dump(2);
  EXPECT_EQ(cooldown["ok"], false) << cooldown.dump();
  EXPECT_NE(cooldown["reason"].get<std::string>().find("by the state store's clock"),
            std::string::npos)
      << cooldown.dump();

  // `failover ack` still lifts it.
  json ack = Call("replica-b", "POST", "/api/v1/failovers/" + first_id + "/ack",
                  "operator-secret-1", R"({"comment": "reviewed"})");
  ASSERT_EQ(ack["_status"], 200) << ack.dump(2);
  json accepted = Approve("replica-b", again, "approver-secret-1");
  EXPECT_EQ(accepted["_status"], 200) << accepted.dump(2);
}

// Two-person approval with a 20 s approval_ttl: the first approval is recorded under the
// true-clock leader, the second a few seconds later under the leader 30 s fast. By the skewed
// clock the first had expired 10 s before; by the store's timer it runs, so the second approval
// completes the pair.
TEST_F(SkewedDecisionsTest, AFirstApprovalStillCountsUnderALeaderThirtySecondsFast) {
  policies_ =
      "  cooldown: 0s\n  two_person_approval: true\n  approval_ttl: 20s\n"
      "  fencing_evidence: [old_region_unreachable]\n";
  AnsweringCatalog eu;
  ASSERT_NO_FATAL_FAILURE(StartTwo(eu.url()));

  json proposed = Propose("replica-a");
  const std::string id = proposed["failover"]["id"];
  json first = Approve("replica-a", proposed, "approver-secret-1");
  ASSERT_EQ(first["_status"], 200) << first.dump(2);
  ASSERT_EQ(first["failover"]["phase"], "proposed") << "one of two";

  ASSERT_NO_FATAL_FAILURE(HandOverToTheSkewedReplica());
  const std::int64_t first_at = first["failover"]["approvals"][0]["at_unix_ms"];
  json second = Approve("replica-b", proposed, "approver-secret-2");
  ASSERT_EQ(second["_status"], 200) << second.dump(2);
  EXPECT_EQ(second["failover"]["phase"], "approved")
      << "abe's approval expired by the skewed leader's clock:\n"
      << second.dump(2);
  ASSERT_EQ(second["failover"]["approvals"].size(), 2u) << second.dump(2);
  const std::int64_t apart =
      second["failover"]["approvals"][1]["at_unix_ms"].get<std::int64_t>() - first_at;
  EXPECT_GT(apart, 20'000) << "libfaketime did not move replica-b's clock";
}

}  // namespace
}  // namespace icewarden::testing
