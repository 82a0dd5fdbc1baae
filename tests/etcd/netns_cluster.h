// NetnsClusterTest: the Patroni topology of docs/ha.md on one machine, in network namespaces
// (tests/etcd/netns_lab.h), for partition tests with real processes (issue 12, item 5):
//
//   host n1: etcd member e1 (10.77.0.2:2379) and replica r1 (10.77.0.2:8480)
//   host n2: etcd member e2, replica r2          host n3: etcd member e3, replica r3
//   host cat: icewarden-lab, us-east-1's catalog on cat's first address, eu-central-1's on its
//             second (so a route can cut one region and not the other), admin API on the first
//   host op: the operator; the test's HTTP clients and CLI run here, and it is never cut
//
// Every replica lists the three members, its own first; r1 starts first and leads. The
// replicas' route us-east-1 -> eu-central-1 runs a runbook of one ownership.transfer; the only
// fencing evidence is old_region_unreachable (or an operator), so a failover out of
// us-east-1 waits in fencing until a majority of the replicas hears nothing from it.
//
// A machine without root or `ip netns` skips these tests saying why, except in CI (CI=true),
// where that is a failure. Each process's stderr goes to a file in the test's folder; a failed
// test prints their tails.
#pragma once

#include <gtest/gtest.h>
#include <httplib.h>
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "state/etcd_client.h"
#include "tests/e2e/lab_stack.h"  // Eventually, HttpReply
#include "tests/etcd/netns_lab.h"
#include "tests/fakes/subprocess.h"
#include "tests/fakes/test_paths.h"

namespace icewarden::testing {

using namespace std::chrono_literals;

class NetnsClusterTest : public ::testing::Test {
 protected:
  using json = nlohmann::json;
  static constexpr int kTtlSeconds = 2;
  static constexpr const char* kUs = "us-east-1";
  static constexpr const char* kEu = "eu-central-1";

  struct Replica {
    std::string name, host, url;
    std::unique_ptr<Subprocess> process;
  };

  void SetUp() override {
    dir_ = MakeTempDir("netns-cluster");
    if (std::string why = lab_.Up(); !why.empty()) {
      if (NetnsRequiredHere()) FAIL() << why << " (CI=true: namespace tests must run here)";
      GTEST_SKIP() << why;
    }
    for (const char* host : {"n1", "n2", "n3", "op"}) ASSERT_EQ(lab_.AddHost(host), "");
    ASSERT_EQ(lab_.AddHost("cat", 2), "");
    for (const char* role : {"admin", "operator", "approver"})
      std::ofstream(dir_ + "/" + role + ".token") << role << "-secret-1\n";
    std::ofstream(dir_ + "/failover.yaml") << kRunbook;
    StartEtcd();
    StartCatalogs();
    if (HasFatalFailure()) return;
    for (int i = 0; i < 3; ++i) {
      replicas_[i].name = "r" + std::to_string(i + 1);
      replicas_[i].host = "n" + std::to_string(i + 1);
      replicas_[i].url = "http://" + lab_.address(replicas_[i].host) + ":8480";
      std::ofstream(dir_ + "/" + replicas_[i].name + ".yaml") << ConfigYaml(i);
    }
    ASSERT_TRUE(EtcdReady()) << "the three etcd members never formed a cluster";
  }

  void TearDown() override {
    for (auto& r : replicas_) r.process.reset();
    catalogs_.reset();
    for (auto& m : etcd_) m.reset();
    if (HasFailure()) PrintLogs();
    std::filesystem::remove_all(dir_);
  }

  // Starts `r` (again, as systemd would) and returns the first line it printed.
  std::string Start(Replica& r) {
    r.process = Spawn(
        r.host, {IcewardenBinary(), "serve", "--config", dir_ + "/" + r.name + ".yaml"}, r.name);
    return r.process->ReadLine(20s).value_or("");
  }
  // r1 leads, r2 and r3 stand by; "" or what went wrong.
  std::string StartReplicas() {
    std::string first = Start(replicas_[0]);
    if (first.find("serving") == std::string::npos || first.find("leader") == std::string::npos)
      return "r1 did not lead: " + first;
    for (int i = 1; i < 3; ++i) {
      std::string line = Start(replicas_[i]);
      if (line.find("standby") == std::string::npos)
        return replicas_[i].name + " did not stand by: " + line;
    }
    return "";
  }

  // An API call from the operator's host with the token of `role`.
  HttpReply Api(const std::string& url, const std::string& method, const std::string& path,
                const std::string& body = "", const std::string& role = "admin") {
    HttpReply reply;
    lab_.InHost("op", [&] {
      httplib::Client c(url);
      c.set_connection_timeout(2, 0);
      c.set_read_timeout(10, 0);
      httplib::Headers h{{"Authorization", "Bearer " + role + "-secret-1"}};
      auto res = method == "GET" ? c.Get(path, h) : c.Post(path, h, body, "application/json");
      if (!res) return;
      reply.status = res->status;
      reply.text = res->body;
      reply.body = json::parse(res->body, nullptr, false);
      if (reply.body.is_discarded()) reply.body = nullptr;
    });
    return reply;
  }

  // The real CLI from the operator's host against `url`.
  CommandResult Cli(const std::string& url, std::vector<std::string> args,
                    const std::string& role) {
    args.insert(args.begin(), IcewardenBinary());
    return RunCommand(lab_.Argv("op", args),
                      {{"ICEWARDEN_SERVER", url}, {"ICEWARDEN_TOKEN", role + "-secret-1"}}, 60s);
  }

  // GET /api/v1/cluster of `url`'s quorum for `region` (null when it did not answer).
  json Quorum(const std::string& url, const std::string& region) {
    HttpReply r = Api(url, "GET", "/api/v1/cluster");
    return r.status == 200 ? r.body["quorum"][region] : json();
  }
  // What `replica` saw of `region` in a quorum answer ("" when absent).
  static json Vote(const json& quorum, const std::string& replica) {
    for (const json& v : quorum.value("by_replica", json::array()))
      if (v.value("replica", "") == replica) return v;
    return json();
  }

  // Every table's owner and epoch, as the leader at `url` says.
  std::map<std::string, std::pair<std::string, long long>> Ownership(const std::string& url) {
    std::map<std::string, std::pair<std::string, long long>> out;
    HttpReply r = Api(url, "GET", "/api/v1/ownership?limit=10000", "", "admin");
    if (r.status != 200) return out;
    for (const json& t : r.body["tables"])
      out[t["table"]] = {t["owner"], t["epoch"].get<long long>()};
    return out;
  }
  std::string Health(const std::string& url, const std::string& region) {
    HttpReply r = Api(url, "GET", "/api/v1/regions");
    if (r.status != 200) return "";
    for (const json& x : r.body["regions"])
      if (x["name"] == region) return x["health"];
    return "";
  }
  json Failover(const std::string& url, const std::string& id) {
    return Api(url, "GET", "/api/v1/failovers/" + id).body;
  }
  // Proposes us-east-1 -> eu-central-1 for every table us-east-1 owns and approves it, with
  // the CLI; the id ("" after an ADD_FAILURE).
  std::string ProposeAndApprove(const std::string& url) {
    CommandResult p = Cli(url,
                          {"failover", "propose", "--to", kEu, "--scope", "owner:us-east-1",
                           "--reason", "us-east-1 partitioned", "--yes", "--id-only"},
                          "operator");
    const std::string id = p.out.substr(0, p.out.find('\n'));
    if (p.exit_code != 0 || id.rfind("fo-", 0) != 0) {
      ADD_FAILURE() << "propose: " << p.out << p.err;
      return "";
    }
    CommandResult a = Cli(url, {"failover", "approve", id, "--yes"}, "approver");
    if (a.exit_code != 0) ADD_FAILURE() << "approve: " << a.out << a.err;
    return id;
  }

  // The record as etcd holds it, read from the operator's host (any member that answers).
  template <typename F>
  auto WithEtcd(F&& f) {
    std::optional<decltype(f(std::declval<EtcdClient&>()))> out;
    lab_.InHost("op", [&] {
      // e1 last: the tests cut n1 off, and a silent first member would use up the deadline.
      std::vector<std::string> endpoints = EtcdEndpoints();
      std::reverse(endpoints.begin(), endpoints.end());
      EtcdClient etcd(EtcdClientOptions{endpoints, std::chrono::milliseconds(2000)});
      out.emplace(f(etcd));
    });
    return std::move(*out);
  }
  // The members' client URLs, e1 first.
  std::vector<std::string> EtcdEndpoints() const {
    std::vector<std::string> out;
    for (const char* host : {"n1", "n2", "n3"})
      out.push_back("http://" + lab_.address(host) + ":2379");
    return out;
  }

  NetnsLab lab_;
  std::string dir_;
  Replica replicas_[3];
  std::string us_catalog_, eu_catalog_, lab_admin_;

 private:
  static constexpr const char* kRunbook = R"(name: netns-failover
description: Move ownership of a scope; nothing else, so only the fencing gates it.
guards:
  - kind: leadership
  - kind: target_healthy
  - kind: no_overlap
promote:
  - id: transfer-ownership
    action: ownership.transfer
    params: {scope: "${scope}", write_catalog_properties: true}
    timeout: 1m
    retry: {attempts: 3, initial_backoff: 1s, max_backoff: 5s}
verify:
  - id: new-owner-healthy
    action: verify.catalog_healthy
    params: {region: "${to}"}
    retry: {attempts: 5, initial_backoff: 1s, max_backoff: 5s}
)";

  // `argv` in `host`, stderr appended to <dir>/<log>.log.
  std::unique_ptr<Subprocess> Spawn(const std::string& host, const std::vector<std::string>& argv,
                                    const std::string& log) {
    std::vector<std::string> wrapped{"/bin/sh", "-c", "exec \"$@\" 2>>\"$0\"",
                                     dir_ + "/" + log + ".log"};
    wrapped.insert(wrapped.end(), argv.begin(), argv.end());
    if (std::find(logs_.begin(), logs_.end(), dir_ + "/" + log + ".log") == logs_.end())
      logs_.push_back(dir_ + "/" + log + ".log");
    return std::make_unique<Subprocess>(lab_.Argv(host, wrapped));
  }

  void StartEtcd() {
    std::string cluster;
    for (int i = 1; i <= 3; ++i)
      cluster += (i > 1 ? "," : "") + std::string("e") + std::to_string(i) + "=http://" +
                 lab_.address("n" + std::to_string(i)) + ":2380";
    for (int i = 1; i <= 3; ++i) {
      const std::string host = "n" + std::to_string(i), name = "e" + std::to_string(i);
      const std::string at = "http://" + lab_.address(host);
      etcd_[i - 1] = Spawn(
          host,
          {"/usr/bin/etcd", "--name", name, "--data-dir", dir_ + "/" + name, "--listen-client-urls",
           at + ":2379", "--advertise-client-urls", at + ":2379", "--listen-peer-urls",
           at + ":2380", "--initial-advertise-peer-urls", at + ":2380", "--initial-cluster",
           cluster, "--initial-cluster-state", "new", "--max-txn-ops", "1024",
           // A member that comes back from a partition with a higher term
           // asks first instead of deposing the majority's raft leader
           // (etcd 3.5's default; 3.4, Debian 12's, needs the flag).
           "--pre-vote", "--log-level", "error"},
          name);
    }
  }

  bool EtcdReady() {
    return Eventually(
        [&] { return WithEtcd([](EtcdClient& etcd) { return etcd.Put("/ready?", "yes").ok(); }); },
        30s);
  }

  void StartCatalogs() {
    const std::string us = lab_.address("cat", 0), eu = lab_.address("cat", 1);
    us_catalog_ = "http://" + us + ":8181";
    eu_catalog_ = "http://" + eu + ":8181";
    lab_admin_ = "http://" + us + ":8180";
    std::filesystem::create_directories(dir_ + "/catalogs");
    catalogs_ = Spawn(
        "cat",
        {ICEWARDEN_LAB_BINARY, "--data", dir_ + "/catalogs", "--admin", us + ":8180", "--region",
         std::string(kUs) + "=" + us + ":8181", "--region", std::string(kEu) + "=" + eu + ":8181",
         "--default-owner", kUs, "--owner", std::string("eu[.].*=") + kEu, "--no-workload"},
        "lab");
    for (;;) {
      auto line = catalogs_->ReadLine(20s);
      ASSERT_TRUE(line.has_value()) << "icewarden-lab did not print 'lab: ready'";
      if (*line == "lab: ready") break;
    }
  }

  std::string ConfigYaml(int i) const {
    const Replica& r = replicas_[i];
    std::vector<std::string> endpoints = EtcdEndpoints();
    std::rotate(endpoints.begin(), endpoints.begin() + i, endpoints.end());  // its own first
    std::string list;
    for (const auto& e : endpoints) list += (list.empty() ? "" : ", ") + e;
    std::ostringstream y;
    y << "api:\n  listen: " << lab_.address(r.host) << ":8480\n  tokens:\n";
    for (const char* role : {"admin", "operator", "approver"})
      y << "    - {name: " << role << ", role: " << role << ", token_file: " << role << ".token}\n";
    y << "state:\n  backend: etcd\n  etcd:\n    endpoints: [" << list << "]\n"
      << "    max_txn_ops: 1024\n    leader_ttl: " << kTtlSeconds << "s\n"
      << "    replica: " << r.name << "\n    replicas: [r1, r2, r3]\n"
      << "regions:\n"
      << "  - {name: " << kUs << ", catalog_uri: \"" << us_catalog_ << "\", warehouse: lab}\n"
      << "  - {name: " << kEu << ", catalog_uri: \"" << eu_catalog_ << "\", warehouse: lab}\n"
      << "ownership:\n  default_owner: " << kUs << "\n  rules:\n"
      << "    - {match: \"eu.*\", owner: " << kEu << "}\n"
      << "policies:\n  unreachable_for: 2s\n  cooldown: 1m\n  max_staleness: 1m\n"
      << "  lag_interval: 300ms\n"
      << "  fencing_evidence: [old_region_unreachable, operator]\n"
      << "  probe: {interval: 250ms, timeout: 200ms, fall: 3, rise: 2}\n"
      << "failovers:\n  - name: us-to-eu\n    kind: failover\n    from: " << kUs
      << "\n    to: " << kEu << "\n    scope: \"*\"\n    runbook: " << dir_ << "/failover.yaml\n";
    return y.str();
  }

  void PrintLogs() const {
    for (const std::string& path : logs_) {
      std::ifstream in(path);
      std::string text((std::istreambuf_iterator<char>(in)), {});
      if (text.size() > 4000) text = "..." + text.substr(text.size() - 4000);
      std::cerr << "==== " << path << "\n" << text << "\n";
    }
  }

  std::unique_ptr<Subprocess> etcd_[3];
  std::unique_ptr<Subprocess> catalogs_;
  std::vector<std::string> logs_;
};

}  // namespace icewarden::testing
