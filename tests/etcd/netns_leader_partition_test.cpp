// Issue 12, item 5: the leader partitioned from etcd, with three etcd members and three
// replicas as processes on three hosts (network namespaces; tests/etcd/netns_cluster.h). The
// leader's host is cut off whole, silently: it must stop acting before its lease could have
// expired, the majority side must elect another leader, and nothing the old leader was asked
// to do after the cut may land.
#include <gtest/gtest.h>
#include <httplib.h>

#include <chrono>
#include <thread>

#include "tests/etcd/netns_cluster.h"

namespace icewarden::testing {
namespace {

using Steady = std::chrono::steady_clock;

class NetnsLeaderPartitionTest : public NetnsClusterTest {
 protected:
  // The leader key as etcd holds it: {replica, term (its create revision)}; term 0 when absent.
  std::pair<std::string, std::int64_t> LeaderKey() {
    return WithEtcd([](EtcdClient& etcd) -> std::pair<std::string, std::int64_t> {
      auto r = etcd.Range("/icewarden/leader");
      if (!r.ok() || r->kvs.empty()) return {"", 0};
      json v = json::parse(r->kvs[0].value, nullptr, false);
      return {v.is_object() ? v.value("replica", "") : "", r->kvs[0].create_revision};
    });
  }
};

TEST_F(NetnsLeaderPartitionTest, ALeaderCutOffFromEtcdStopsBeforeTheMajorityElectsAnother) {
  ASSERT_EQ(StartReplicas(), "");
  Replica& old_leader = replicas_[0];
  const auto [holder, old_term] = LeaderKey();
  ASSERT_EQ(holder, "r1");
  ASSERT_GT(old_term, 0);

  ASSERT_EQ(lab_.Isolate("n1"), "");
  const auto cut_at = Steady::now();
  // Asked after the cut, from inside its own host (the only place that still reaches it), the
  // partitioned leader may still believe it leads: whatever it does with this must not land.
  std::thread fence([&] {
    lab_.InHost("n1", [&] {
      httplib::Client c(old_leader.url);
      c.set_read_timeout(15, 0);
      c.Post("/api/v1/regions/eu-central-1/fence", {{"Authorization", "Bearer admin-secret-1"}},
             R"({"reason":"sent to a partitioned leader"})", "application/json");
    });
  });

  // Who stops and who takes over, in the order the test sees them. A liveness bound, not a
  // timing goal: TTL, an etcd election and a campaign round, on a loaded machine.
  std::optional<int> exit_code;
  std::optional<Steady::time_point> exited_at, serving_at;
  Replica* new_leader = nullptr;
  while (Steady::now() - cut_at < 30s && (!exit_code || new_leader == nullptr)) {
    if (!exit_code) {
      exit_code = old_leader.process->Wait(0ms);
      if (exit_code) exited_at = Steady::now();
    }
    for (Replica* r : {&replicas_[1], &replicas_[2]}) {
      if (new_leader != nullptr) break;
      auto line = r->process->ReadLine(10ms);
      if (line && line->find("serving") != std::string::npos) {
        new_leader = r;
        serving_at = Steady::now();
      }
    }
  }
  fence.join();
  ASSERT_TRUE(exit_code.has_value()) << "the partitioned leader never stopped";
  EXPECT_EQ(*exit_code, 1) << "a leader that loses its term exits with status 1";
  ASSERT_NE(new_leader, nullptr) << "the majority side elected no leader";
  // The safety property: the old leader stopped before the new one could act. The new one
  // takes the key only once etcd let the old lease expire, so an old leader still running then
  // acted past its lease.
  EXPECT_LT(*exited_at, *serving_at)
      << "the partitioned leader was still running "
      << std::chrono::duration_cast<std::chrono::milliseconds>(*exited_at - *serving_at).count()
      << " ms after " << new_leader->name << " took over";
  RecordProperty(
      "stopped_ms_before_takeover",
      static_cast<int>(
          std::chrono::duration_cast<std::chrono::milliseconds>(*serving_at - *exited_at).count()));
  const auto [new_holder, new_term] = LeaderKey();
  EXPECT_EQ(new_holder, new_leader->name);
  EXPECT_GT(new_term, old_term);

  // Healed and restarted (as systemd does after status 1), the old leader stands by.
  ASSERT_EQ(lab_.Heal("n1"), "");
  const std::string again = Start(old_leader);
  EXPECT_NE(again.find("standby"), std::string::npos) << again;
  ASSERT_TRUE(Eventually([&] { return Api(old_leader.url, "GET", "/readyz").status == 503; }, 20s));
  HttpReply ready = Api(old_leader.url, "GET", "/readyz");
  EXPECT_EQ(ready.body["role"], "standby") << ready.text;
  EXPECT_EQ(ready.body["leader"]["replica"], new_leader->name) << ready.text;

  // Nothing the partitioned leader was asked to do landed: eu-central-1 is not fenced, and no
  // audit event carries that request's reason.
  HttpReply regions = Api(new_leader->url, "GET", "/api/v1/regions");
  ASSERT_EQ(regions.status, 200) << regions.text;
  for (const json& r : regions.body["regions"])
    if (r["name"] == kEu) {
      EXPECT_NE(r.value("fenced", false), true) << r.dump();
    }
  HttpReply audit = Api(new_leader->url, "GET", "/api/v1/audit?limit=1000");
  ASSERT_EQ(audit.status, 200) << audit.text;
  EXPECT_EQ(audit.text.find("sent to a partitioned leader"), std::string::npos)
      << "the partitioned leader's write landed";
  // The new term's leader acts: its API answers itself.
  EXPECT_EQ(Api(new_leader->url, "GET", "/readyz").status, 200);
}

}  // namespace
}  // namespace icewarden::testing
