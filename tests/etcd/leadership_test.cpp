// Leadership (orchestrator/cluster/leadership.h) against a real etcd member that stops
// answering. Regression test for a leader that kept acting for seconds after its lease could
// have expired: its keeper checked act_until only between renewals, and a renewal sent into a
// silent partition blocks for the whole etcd timeout (longer when other calls queue on the
// shared client first). Found by NetnsLeaderPartitionTest, where the partitioned leader ran
// 6.7 s after the majority had elected another.
#include "orchestrator/cluster/cluster.h"

#include <gtest/gtest.h>
#include <signal.h>

#include <future>

#include "tests/etcd/etcd_member.h"

namespace icewarden {
namespace {

using namespace std::chrono_literals;

TEST(LeadershipTest, ALeaderWhoseRenewalGetsNoAnswerStopsAtItsBoundNotAtTheTimeout) {
  testing::EtcdMember etcd;
  ASSERT_TRUE(etcd.WaitReady());
  // A client that waits 30 s for an answer: a renewal sent to the paused member blocks that long.
  auto client = std::make_shared<EtcdClient>(EtcdClientOptions{{etcd.url()}, 30s});
  LeadershipOptions options;
  options.key = "/leadership-test/leader";
  options.replica = "a";
  options.api = "http://a";
  options.ttl = 2s;
  Leadership leadership(client, options);
  ASSERT_TRUE(leadership.TryLead());
  std::promise<std::string> lost;
  leadership.Keep([&](const std::string& why) { lost.set_value(why); });

  etcd.Signal(SIGSTOP);  // connections stay open and nothing answers: a silent partition
  auto said = lost.get_future();
  // A liveness bound far below the client's 30 s and above the 1.5 s bound (TTL - margin).
  const bool stopped = said.wait_for(10s) == std::future_status::ready;
  etcd.Signal(SIGCONT);  // the keeper's renewal gets its answer and the keeper can be joined
  ASSERT_TRUE(stopped) << "the leader still acted 10 s after its last renewal, with a 2 s lease";
  EXPECT_NE(said.get().find("could have expired"), std::string::npos);
}

}  // namespace
}  // namespace icewarden
