// EtcdWatch (state/etcd_watch.h) against real etcd members: it reports a change under its prefix
// (and not one outside it), keeps watching across a killed and restarted member, reports the
// store unreadable when its member goes silent or its cluster loses quorum, and starts over
// after a compaction removed events it had not seen.
#include "state/etcd_watch.h"

#include <gtest/gtest.h>
#include <httplib.h>
#include <signal.h>

#include <chrono>
#include <filesystem>
#include <thread>

#include "tests/etcd/etcd_cluster.h"
#include "tests/etcd/etcd_member.h"
#include "tests/fakes/etcd_admin.h"
#include "tests/fakes/test_paths.h"
#include "tests/fakes/test_pki.h"

namespace icewarden::testing {
namespace {

using namespace std::chrono_literals;

// Waits (bounded) until the watch's state satisfies `want`.
template <class Want>
bool WatchReaches(const EtcdWatch& watch, Want want, std::chrono::milliseconds within = 10s) {
  const auto until = std::chrono::steady_clock::now() + within;
  while (std::chrono::steady_clock::now() < until) {
    if (want(watch.Current())) return true;
    std::this_thread::sleep_for(10ms);
  }
  return want(watch.Current());
}

bool Healthy(const EtcdWatch::State& s) { return s.healthy; }
bool Unhealthy(const EtcdWatch::State& s) { return !s.healthy; }

EtcdWatchOptions WatchOf(std::vector<std::string> endpoints) {
  EtcdWatchOptions o;
  o.client = EtcdClientOptions(std::move(endpoints), 1s);
  o.prefix = "/watched/";
  return o;
}

// A change seen by the watch: WaitForChange from `since` within a bounded wait.
std::int64_t NextRevision(EtcdWatch& watch, std::int64_t since) {
  EtcdWatch::State now;
  if (!watch.WaitForChange(since, true, 2s, &now)) return 0;
  return now.revision;
}

TEST(EtcdWatchTest, APutUnderThePrefixIsReportedAndOneOutsideItIsNot) {
  EtcdMember member;
  ASSERT_TRUE(member.WaitReady());
  EtcdClient etcd({{member.url()}});
  EtcdWatch watch(WatchOf({member.url()}));
  watch.Start();
  ASSERT_TRUE(WatchReaches(watch, Healthy)) << watch.Current().why;
  const std::int64_t start = watch.Current().revision;

  ASSERT_TRUE(etcd.Put("/elsewhere/x", "1").ok());
  EtcdWatch::State now;
  EXPECT_FALSE(watch.WaitForChange(start, true, 300ms, &now)) << "a key outside the prefix";
  EXPECT_TRUE(now.healthy);

  auto put = etcd.Put("/watched/regions/us", "1");
  ASSERT_TRUE(put.ok());
  // Bounded, and well past the 100 ms the gateway needs (the benchmark measures it).
  EXPECT_EQ(NextRevision(watch, start), *put);
  auto second = etcd.Put("/watched/failovers/f", "2");
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(NextRevision(watch, *put), *second);
}

TEST(EtcdWatchTest, AKilledAndRestartedMemberIsWatchedAgainFromWhereTheWatchLeftOff) {
  EtcdMember member;
  ASSERT_TRUE(member.WaitReady());
  EtcdWatch watch(WatchOf({member.url()}));
  watch.Start();
  ASSERT_TRUE(WatchReaches(watch, Healthy)) << watch.Current().why;
  const std::int64_t before = watch.Current().revision;

  member.Kill();
  ASSERT_TRUE(WatchReaches(watch, Unhealthy)) << "a dead member is not a readable store";
  member.Restart();
  ASSERT_TRUE(member.WaitReady());
  // Written as soon as the member is back, likely before the watch's stream is: the stream
  // resumes from the revision it had seen, so the put is reported either way.
  EtcdClient etcd({{member.url()}});
  auto put = etcd.Put("/watched/regions/us", "after restart");
  ASSERT_TRUE(put.ok()) << put.status().message();
  ASSERT_TRUE(WatchReaches(watch, [&](const EtcdWatch::State& s) {
    return s.healthy && s.revision == *put;
  })) << watch.Current().why;
  EXPECT_GT(*put, before);
  EXPECT_EQ(watch.Current().resyncs, 0) << "nothing was compacted: no reason to start over";
}

TEST(EtcdWatchTest, ASilentMemberIsReportedUnreadableAndReadableWhenItAnswersAgain) {
  EtcdMember member;
  ASSERT_TRUE(member.WaitReady());
  EtcdWatch watch(WatchOf({member.url()}));
  watch.Start();
  ASSERT_TRUE(WatchReaches(watch, Healthy)) << watch.Current().why;
  const std::int64_t since = watch.Current().revision;

  member.Signal(SIGSTOP);  // its stream stays open and says nothing
  EtcdWatch::State now;
  // A caller that believed the store readable hears at once when that changes.
  bool seen_unreadable = false;
  for (int i = 0; i < 100 && !seen_unreadable; ++i) {
    watch.WaitForChange(since, true, 100ms, &now);
    seen_unreadable = !now.healthy;
  }
  member.Signal(SIGCONT);
  ASSERT_TRUE(seen_unreadable) << "the silent member was never noticed";
  EXPECT_FALSE(now.why.empty());
  EXPECT_TRUE(WatchReaches(watch, Healthy)) << watch.Current().why;
}

TEST(EtcdWatchTest, AStartRevisionCompactedAwayMakesTheWatchStartOverAtTheStoresRevision) {
  EtcdMember member;
  ASSERT_TRUE(member.WaitReady());
  EtcdClient etcd({{member.url()}});
  auto first = etcd.Put("/watched/regions/us", "1");
  ASSERT_TRUE(first.ok());
  std::int64_t last = 0;
  for (int i = 0; i < 5; ++i) last = *etcd.Put("/watched/regions/us", std::to_string(i));
  std::string answer;
  ASSERT_EQ(
      EtcdAdmin(member.url())
          .Post("/v3/kv/compaction",
                "{\"revision\":\"" + std::to_string(last) + "\",\"physical\":true}", "", &answer),
      200)
      << answer;

  // A reader that saw the store at `first` and comes back after the compaction: the events
  // after `first` are gone, so the watch must say "read everything again".
  EtcdWatchOptions options = WatchOf({member.url()});
  options.start_after = *first;
  EtcdWatch watch(options);
  watch.Start();
  ASSERT_TRUE(WatchReaches(watch, [](const EtcdWatch::State& s) {
    return s.healthy && s.resyncs == 1;
  })) << watch.Current().why;
  const std::int64_t resynced = watch.Current().revision;
  EXPECT_GE(resynced, last);
  // And it watches on from there.
  auto put = etcd.Put("/watched/failovers/f", "after");
  ASSERT_TRUE(put.ok());
  EXPECT_EQ(NextRevision(watch, resynced), *put);
}

TEST(EtcdWatchTest, AMemberWithoutQuorumIsReportedUnreadable) {
  const std::string dir = MakeTempDir("etcd-watch-quorum");
  {
    EtcdCluster cluster(dir);
    ASSERT_TRUE(cluster.WaitReady());
    // Watching member 0 only: its stream stays open when the other two go, but it can no
    // longer answer a linearizable read.
    EtcdWatch watch(WatchOf({cluster.endpoints()[0]}));
    watch.Start();
    ASSERT_TRUE(WatchReaches(watch, Healthy)) << watch.Current().why;
    cluster.Signal(1, SIGSTOP);
    cluster.Signal(2, SIGSTOP);
    const bool lost = WatchReaches(watch, Unhealthy);
    cluster.Signal(1, SIGCONT);
    cluster.Signal(2, SIGCONT);
    EXPECT_TRUE(lost) << "a member without quorum was trusted";
    EXPECT_TRUE(WatchReaches(watch, Healthy, 20s)) << watch.Current().why;
  }
  std::filesystem::remove_all(dir);
}

TEST(EtcdWatchTest, WatchesOverTlsWithAClientCertificateAndAUsersToken) {
  if (!HaveOpenSslCli()) GTEST_SKIP() << "openssl CLI is not installed";
  const std::string dir = MakeTempDir("etcd-watch-tls");
  {
    EtcdTestPki pki;
    std::string e;
    ASSERT_TRUE(MakeEtcdTestPki(dir, &pki, &e)) << e;
    const EtcdMemberTls tls{pki.member.cert, pki.member.key, pki.ca.cert};
    EtcdMember member({"--auth-token", "simple"}, &tls);
    const EtcdTlsOptions client_tls{pki.ca.cert, pki.client.cert, ReadTestFile(pki.client.key)};
    ASSERT_TRUE(member.WaitReady(client_tls));
    ASSERT_TRUE(EtcdAdmin(member.url(), {pki.client.cert, pki.client.key})
                    .EnableAuth("root-pw", "icewarden", "icewarden-pw", &e))
        << e;
    const EtcdClientOptions options({member.url()}, 2s, client_tls, {"icewarden", "icewarden-pw"});
    EtcdWatchOptions watched;
    watched.client = options;
    watched.prefix = "/watched/";
    EtcdWatch watch(watched);
    watch.Start();
    ASSERT_TRUE(WatchReaches(watch, Healthy)) << watch.Current().why;
    const std::int64_t start = watch.Current().revision;
    EtcdClient etcd(options);
    auto put = etcd.Put("/watched/regions/us", "1");
    ASSERT_TRUE(put.ok()) << put.status().message();
    EXPECT_EQ(NextRevision(watch, start), *put);
  }
  std::filesystem::remove_all(dir);
}

// A member (here a stand-in for one: real etcd caps a message near 2 MiB) that streams a watch
// response without end and never a newline: the watch gives that stream up at its bound instead
// of growing without limit, and says why.
TEST(EtcdWatchTest, AWatchResponseWithoutEndIsRefusedAtItsBound) {
  httplib::Server fake;
  fake.Post("/v3/kv/range", [](const httplib::Request&, httplib::Response& res) {
    res.set_content(R"({"header":{"revision":"5"},"count":"0"})", "application/json");
  });
  fake.Post("/v3/watch", [](const httplib::Request&, httplib::Response& res) {
    auto sent = std::make_shared<std::size_t>(0);
    res.set_chunked_content_provider(
        "application/json", [sent](std::size_t, httplib::DataSink& sink) {
          if (*sent == 0) {
            const std::string created = R"({"result":{"header":{"revision":"5"},"created":true}})"
                                        "\n{\"result\":{\"events\":[{\"kv\":{\"value\":\"";
            sink.write(created.data(), created.size());
          }
          // Past the bound and then some; a watch without one would take it all.
          if (*sent > 80u * 1024 * 1024) {
            sink.done();
            return true;
          }
          static const std::string chunk(1024 * 1024, 'A');
          *sent += chunk.size();
          return sink.write(chunk.data(), chunk.size());
        });
  });
  const int port = fake.bind_to_any_port("127.0.0.1");
  ASSERT_GT(port, 0);
  std::thread server([&] { fake.listen_after_bind(); });
  {
    EtcdWatch watch(WatchOf({"http://127.0.0.1:" + std::to_string(port)}));
    watch.Start();
    EXPECT_TRUE(WatchReaches(watch, [](const EtcdWatch::State& s) {
      return !s.healthy && s.why.find("a watch response longer than") != std::string::npos;
    })) << watch.Current().why;
  }
  fake.stop();
  server.join();
}

}  // namespace
}  // namespace icewarden::testing
