// The fixture of the tests that run real `icewarden serve` replicas on a real etcd member, some
// of them under libfaketime (Debian's `faketime` package) with a constant offset of their wall
// clock: skewed_replica_test.cpp (leadership, quorum votes, fencing evidence) and
// skewed_decisions_test.cpp (the cooldown and approvals, issue 30).
//
// libfaketime, as Debian 12 ships it (0.9.10), offsets CLOCK_REALTIME and, unless
// FAKETIME_DONT_FAKE_MONOTONIC=1, CLOCK_MONOTONIC too (its base becomes the faked wall clock).
// The replicas here run with the wall clock alone offset, as on a host whose NTP is off: a
// faked CLOCK_MONOTONIC is no clock skew (no host compares monotonic clocks), and libfaketime
// does not intercept pthread_cond_clockwait, so every std::condition_variable::wait_for in a
// process with a faked monotonic clock waits for a deadline ~56 years away (the failover
// runner's poll among them: a failover waiting for evidence was never looked at again).
#pragma once

#include <gtest/gtest.h>
#include <httplib.h>
#include <signal.h>

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

using namespace std::chrono_literals;

inline constexpr int kSkewTtlSeconds = 2;
inline constexpr const char* kLibFaketime = "/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1";
inline constexpr const char* kDeadCatalog = "http://127.0.0.1:9/catalog";

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
inline std::int64_t RealNowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// How a replica's wall clock is off: none, or libfaketime's FAKETIME offset.
struct Skew {
  std::string offset;  // "+30s", "-30s"; empty: the true clock
};

class SkewedReplicasTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!std::filesystem::exists(kLibFaketime))
      GTEST_SKIP() << kLibFaketime << " is missing (scripts/setup.sh installs faketime)";
    ASSERT_TRUE(etcd_.WaitReady());
    dir_ = MakeTempDir("skewed-replica");
    std::ofstream(dir_ + "/admin.token") << "admin-secret-1\n";
    std::ofstream(dir_ + "/operator.token") << "operator-secret-1\n";
    std::ofstream(dir_ + "/approver.token") << "approver-secret-1\n";
    std::ofstream(dir_ + "/approver2.token") << "approver-secret-2\n";
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
    - {name: ann, role: approver, token_file: approver2.token}
state:
  backend: etcd
  etcd:
    endpoints: [)" << etcd_.url()
                          << "]\n    leader_ttl: " << kSkewTtlSeconds << "s\n    replica: " << name
                          << R"(
    replicas: [)" << replica_list_
                          << R"(]
policies:
  unreachable_for: 1s
  probe: {interval: 200ms, timeout: 150ms}
)" << policies_ << R"(regions:
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

  nlohmann::json Call(const std::string& name, const std::string& method, const std::string& path,
                      const std::string& token = "admin-secret-1", const std::string& body = "") {
    httplib::Client c(replicas_[name].url);
    c.set_connection_timeout(2, 0);
    c.set_read_timeout(10, 0);
    httplib::Headers h{{"Authorization", "Bearer " + token}};
    auto res = method == "GET" ? c.Get(path, h) : c.Post(path, h, body, "application/json");
    if (!res) return nullptr;
    nlohmann::json out = nlohmann::json::parse(res->body, nullptr, false);
    if (out.is_discarded()) return nullptr;
    out["_status"] = res->status;
    return out;
  }

  // Polls `done` on `name`'s GET /api/v1/cluster every 100 ms for up to `limit`; the last
  // answer.
  nlohmann::json ClusterUntil(const std::string& name,
                              const std::function<bool(const nlohmann::json&)>& done,
                              std::chrono::milliseconds limit = 20s) {
    nlohmann::json last;
    const auto stop = std::chrono::steady_clock::now() + limit;
    while (std::chrono::steady_clock::now() < stop) {
      last = Call(name, "GET", "/api/v1/cluster");
      try {
        if (last.is_object() && done(last)) return last;
      } catch (const nlohmann::json::exception&) {
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
    nlohmann::json v = nlohmann::json::parse(r->kvs[0].value, nullptr, false);
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

  EtcdMember etcd_;
  std::string dir_;
  std::map<std::string, Replica> replicas_;
  // The config's policies beyond unreachable_for and probe, each line indented by two.
  std::string policies_ = "  cooldown: 0s\n  fencing_evidence: [old_region_unreachable]\n";
  std::string replica_list_ = "replica-a, replica-b, replica-c";  // state.etcd.replicas
};

}  // namespace icewarden::testing
