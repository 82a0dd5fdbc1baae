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
//
// libfaketime, as Debian 12 ships it (0.9.10), offsets CLOCK_REALTIME and, unless
// FAKETIME_DONT_FAKE_MONOTONIC=1, CLOCK_MONOTONIC too (its base becomes the faked wall clock).
// The replicas here run with the wall clock alone offset, as on a host whose NTP is off: a
// faked CLOCK_MONOTONIC is no clock skew (no host compares monotonic clocks), and libfaketime
// does not intercept pthread_cond_clockwait, so every std::condition_variable::wait_for in a
// process with a faked monotonic clock waits for a deadline ~56 years away (the failover
// runner's poll among them: a failover waiting for evidence was never looked at again).
#include <gtest/gtest.h>
#include <httplib.h>
#include <signal.h>

#include <array>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <thread>

#include "state/etcd_client.h"
#include "tests/etcd/etcd_member.h"
#include "tests/fakes/subprocess.h"
#include "tests/fakes/test_paths.h"

namespace icewarden::testing {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;

constexpr int kSkewTtlSeconds = 2;
constexpr const char* kLibFaketime = "/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1";
constexpr const char* kDeadCatalog = "http://127.0.0.1:9/catalog";

// A catalog that answers everything (any answer is life, DESIGN.md rule 7), until Stop().
class AnsweringCatalog {
 public:
  AnsweringCatalog() {
    server_.Get(".*", [](const httplib::Request&, httplib::Response& res) {
      res.set_content(R"({"defaults": {}, "overrides": {}})", "application/json");
    });
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
  }
  ~AnsweringCatalog() { Stop(); }
  void Stop() {
    server_.stop();
    if (thread_.joinable()) thread_.join();
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_) + "/catalog"; }

 private:
  httplib::Server server_;
  int port_ = 0;
  std::thread thread_;
};

// This process's wall clock (which libfaketime does not touch), in Unix milliseconds.
std::int64_t RealNowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// How a replica's wall clock is off: none, or libfaketime's FAKETIME offset.
struct Skew {
  std::string offset;  // "+30s", "-30s"; empty: the true clock
};

class SkewedReplicaTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!std::filesystem::exists(kLibFaketime))
      GTEST_SKIP() << kLibFaketime << " is missing (scripts/setup.sh installs faketime)";
    ASSERT_TRUE(etcd_.WaitReady());
    dir_ = MakeTempDir("skewed-replica");
    std::ofstream(dir_ + "/admin.token") << "admin-secret-1\n";
    std::ofstream(dir_ + "/operator.token") << "operator-secret-1\n";
    std::ofstream(dir_ + "/approver.token") << "approver-secret-1\n";
    // No fence step: only old_region_unreachable (a quorum's silence) can confirm fencing.
    std::ofstream(dir_ + "/runbook.yaml") << R"(name: skew-failover
guards:
  - kind: leadership
  - kind: no_overlap
promote:
  - id: settle
    action: wait
    params: {duration: 10ms}
)";
  }
  void TearDown() override {
    for (auto& [name, r] : replicas_)
      if (r.process) r.process->Signal(SIGKILL);
    // A failure keeps the replicas' logs for the post-mortem.
    if (HasFailure())
      std::cerr << "replica logs kept in " << dir_ << "\n";
    else if (!dir_.empty())
      std::filesystem::remove_all(dir_);
  }

  struct Replica {
    std::string url;
    std::unique_ptr<Subprocess> process;
  };

  // Starts replica `name` with `skew`, its regions' catalogs at `us` and `eu`; its first line.
  std::string Start(const std::string& name, const Skew& skew, const std::string& us,
                    const std::string& eu) {
    Replica& r = replicas_[name];
    const int port = FreePort();
    r.url = "http://127.0.0.1:" + std::to_string(port);
    const std::string config = dir_ + "/" + name + ".yaml";
    std::ofstream(config) << "api:\n  listen: 127.0.0.1:" << port << R"(
  tokens:
    - {name: ada, role: admin, token_file: admin.token}
    - {name: olga, role: operator, token_file: operator.token}
    - {name: abe, role: approver, token_file: approver.token}
state:
  backend: etcd
  etcd:
    endpoints: [)" << etcd_.url()
                          << "]\n    leader_ttl: " << kSkewTtlSeconds << "s\n    replica: " << name
                          << R"(
    replicas: [replica-a, replica-b, replica-c]
policies:
  unreachable_for: 1s
  cooldown: 0s
  fencing_evidence: [old_region_unreachable]
  probe: {interval: 200ms, timeout: 150ms}
regions:
  - {name: us-east-1, catalog_uri: ")"
                          << us << R"("}
  - {name: eu-central-1, catalog_uri: ")"
                          << eu << R"("}
ownership:
  default_owner: us-east-1
failovers:
  - {name: us-to-eu, kind: failover, from: us-east-1, to: eu-central-1, scope: "*", runbook: )"
                          << dir_ << "/runbook.yaml}\n";
    std::map<std::string, std::string> env;
    if (!skew.offset.empty()) {
      env["LD_PRELOAD"] = kLibFaketime;
      env["FAKETIME"] = skew.offset;
      env["FAKETIME_DONT_FAKE_MONOTONIC"] = "1";  // see the top of the file
    }
    // serve logs to stderr, which goes to a file; stdout carries the role lines.
    r.process = std::make_unique<Subprocess>(
        std::vector<std::string>{"/bin/sh", "-c", "exec \"$0\" serve --config \"$1\" 2>>\"$2\"",
                                 IcewardenBinary(), config, dir_ + "/" + name + ".log"},
        env);
    return r.process->ReadLine(20s).value_or("");
  }

  json Call(const std::string& name, const std::string& method, const std::string& path,
            const std::string& token = "admin-secret-1", const std::string& body = "") {
    httplib::Client c(replicas_[name].url);
    c.set_connection_timeout(2, 0);
    c.set_read_timeout(10, 0);
    httplib::Headers h{{"Authorization", "Bearer " + token}};
    auto res = method == "GET" ? c.Get(path, h) : c.Post(path, h, body, "application/json");
    if (!res) return nullptr;
    json out = json::parse(res->body, nullptr, false);
    if (out.is_discarded()) return nullptr;
    out["_status"] = res->status;
    return out;
  }

  // Polls `done` on `name`'s GET /api/v1/cluster every 100 ms for up to `limit`; the last
  // answer.
  json ClusterUntil(const std::string& name, const std::function<bool(const json&)>& done,
                    std::chrono::milliseconds limit = 20s) {
    json last;
    const auto stop = std::chrono::steady_clock::now() + limit;
    while (std::chrono::steady_clock::now() < stop) {
      last = Call(name, "GET", "/api/v1/cluster");
      try {
        if (last.is_object() && done(last)) return last;
      } catch (const json::exception&) {
      }
      std::this_thread::sleep_for(100ms);
    }
    return last;
  }

  // The leader key as etcd holds it: (term, replica), or (0, "") for nobody.
  std::pair<std::int64_t, std::string> LeaderKey() {
    EtcdClient etcd(EtcdClientOptions{{etcd_.url()}});
    auto r = etcd.Range("/icewarden/leader");
    if (!r.ok() || r->kvs.empty()) return {0, ""};
    json v = json::parse(r->kvs[0].value, nullptr, false);
    return {r->kvs[0].create_revision, v.is_object() ? v.value("replica", "") : ""};
  }

  // Watches the leader key for `span`; true when the term stayed `term` throughout.
  bool TermHolds(std::int64_t term, std::chrono::milliseconds span) {
    const auto stop = std::chrono::steady_clock::now() + span;
    while (std::chrono::steady_clock::now() < stop) {
      if (LeaderKey().first != term) return false;
      std::this_thread::sleep_for(200ms);
    }
    return true;
  }

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

  // Waits up to 10 TTLs for a leader key of another term than `old`; the key then.
  std::pair<std::int64_t, std::string> NextTerm(std::int64_t old) {
    const auto stop = std::chrono::steady_clock::now() + std::chrono::seconds(kSkewTtlSeconds * 10);
    while (std::chrono::steady_clock::now() < stop) {
      auto key = LeaderKey();
      if (key.first != 0 && key.first != old) return key;
      std::this_thread::sleep_for(100ms);
    }
    return LeaderKey();
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

  EtcdMember etcd_;
  std::string dir_;
  std::map<std::string, Replica> replicas_;
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
