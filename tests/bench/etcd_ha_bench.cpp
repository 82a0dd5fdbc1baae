// The etcd backend's two figures (issue 12), in one run on a 3-member etcd cluster of Debian's
// /usr/bin/etcd on loopback (each member its own process and data folder in $TMPDIR):
//
//  1. Ownership compare-and-set throughput: N tables (default 10,000) moved to the other
//     region and back in batches of B (default 500; etcd runs with --max-txn-ops 1024), on the
//     etcd store and on the SQLite store in $TMPDIR (durable), taking turns, rows per second.
//  2. Takeover: two real `icewarden serve` replicas over the cluster with leader_ttl T
//     (default 2 s); K times (default 50) the leader is SIGKILLed and the time until the other
//     replica prints its "serving" line is measured; then the killed one is started again and
//     stands by. p50 and p99 next to T (goal: p99 <= T + 1 s).
//
//   ./build/tests/bench/etcd_ha_bench [--tables 10000] [--batch 500] [--kills 50] [--ttl 2]
//                                     [--skip-cas] [--skip-takeover]
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "state/etcd_client.h"
#include "state/etcd_store.h"
#include "state/sqlite_store.h"
#include "tests/etcd/etcd_cluster.h"
#include "tests/etcd/etcd_member.h"
#include "tests/fakes/subprocess.h"
#include "tests/fakes/test_paths.h"

namespace icewarden::bench {
namespace {

using Steady = std::chrono::steady_clock;
using testing::EtcdCluster;
using testing::FreePort;
using testing::Subprocess;

double Ms(Steady::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }

AuditEvent Why() {
  AuditEvent e;
  e.actor = "bench";
  e.source = "bench";
  e.action = "ownership.set";
  e.target = "bench";
  return e;
}

// Moves every table to `to` (from epoch `epoch`) in batches; rows per second, or -1.
double MoveAll(StateStore& store, const std::vector<TableIdent>& tables, Epoch epoch,
               const std::string& to, std::size_t batch) {
  std::vector<OwnershipChange> changes;
  for (const TableIdent& t : tables) changes.push_back({t, epoch, to, ""});
  const auto start = Steady::now();
  for (std::size_t i = 0; i < changes.size(); i += batch) {
    std::span<const OwnershipChange> part(changes.data() + i, std::min(batch, changes.size() - i));
    if (Status s = store.CompareAndSetOwnership(part, Why()); !s.ok()) {
      std::fprintf(stderr, "compare-and-set failed: %s\n", s.ToString().c_str());
      return -1;
    }
  }
  return tables.size() / std::chrono::duration<double>(Steady::now() - start).count();
}

int RunCas(const EtcdCluster& cluster, const std::string& dir, int n, std::size_t batch) {
  std::vector<TableIdent> tables;
  for (int i = 0; i < n; ++i) {
    char ns[16], name[16];
    std::snprintf(ns, sizeof ns, "ns%03d", i / 100);
    std::snprintf(name, sizeof name, "t%06d", i);
    tables.push_back(TableIdent{{"bench", ns}, name});
  }
  auto clock = SystemClock();
  auto sqlite = OpenSqliteStore({dir + "/state.db"}, clock);
  EtcdStoreOptions eo;
  eo.prefix = "/bench/cas/";
  eo.max_txn_ops = 1024;
  auto etcd = OpenEtcdStore(std::make_shared<EtcdClient>(EtcdClientOptions{cluster.endpoints()}),
                            eo, clock);
  if (!sqlite.ok() || !etcd.ok()) {
    std::fprintf(stderr, "cannot open the stores\n");
    return 1;
  }
  std::printf("ownership compare-and-set: %d tables, batches of %zu, rows/s (durable)\n", n, batch);
  std::printf("  round      sqlite        etcd   etcd/sqlite\n");
  // Round 0 claims (epoch 0 -> 1); then each round moves every table to the other region.
  std::vector<double> ratios;
  for (int round = 0; round < 5; ++round) {
    const std::string to = round % 2 == 0 ? "us-east-1" : "eu-central-1";
    const double s = MoveAll(**sqlite, tables, round, to, batch);
    const double e = MoveAll(**etcd, tables, round, to, batch);
    if (s < 0 || e < 0) return 1;
    std::printf("  %5d  %10.0f  %10.0f   %8.3f%s\n", round, s, e, e / s,
                round == 0 ? "  (claims)" : "");
    if (round > 0) ratios.push_back(e / s);
  }
  std::sort(ratios.begin(), ratios.end());
  std::printf("median etcd/sqlite over the moves: %.3f\n\n", ratios[ratios.size() / 2]);
  return 0;
}

struct Replica {
  std::string name, config;
  std::unique_ptr<Subprocess> process;
};

// Starts `r`; true when it printed a line containing `want` within 30 s.
bool Start(Replica& r, const std::string& want) {
  r.process = std::make_unique<Subprocess>(
      std::vector<std::string>{testing::IcewardenBinary(), "serve", "--config", r.config});
  auto line = r.process->ReadLine(std::chrono::seconds(30));
  return line && line->find(want) != std::string::npos;
}

int RunTakeover(const EtcdCluster& cluster, const std::string& dir, int kills, int ttl) {
  std::ofstream(dir + "/admin.token") << "admin-secret\n";
  std::string endpoints;
  for (const std::string& e : cluster.endpoints()) endpoints += (endpoints.empty() ? "" : ", ") + e;
  Replica replicas[2];
  for (int i = 0; i < 2; ++i) {
    replicas[i].name = std::string("replica-") + char('a' + i);
    replicas[i].config = dir + "/" + replicas[i].name + ".yaml";
    std::ofstream(replicas[i].config)
        << "api:\n  listen: 127.0.0.1:" << FreePort()
        << "\n  tokens: [{name: ada, role: admin, token_file: admin.token}]\n"
        << "state:\n  backend: etcd\n  etcd:\n    endpoints: [" << endpoints
        << "]\n    prefix: /bench/ha/\n    leader_ttl: " << ttl
        << "s\n    replica: " << replicas[i].name << "\n"
        << "regions:\n  - {name: us-east-1, catalog_uri: \"http://127.0.0.1:9/c\"}\n"
        << "  - {name: eu-central-1, catalog_uri: \"http://127.0.0.1:9/c\"}\n"
        << "ownership: {default_owner: us-east-1}\n";
  }
  if (!Start(replicas[0], "serving") || !Start(replicas[1], "standby")) {
    std::fprintf(stderr, "the replicas did not start as leader and standby\n");
    return 1;
  }
  std::printf("takeover: %d kills of the leader, leader_ttl %d s (kill -> the standby serves)\n",
              kills, ttl);
  int leader = 0;
  std::vector<double> ms;
  for (int k = 0; k < kills; ++k) {
    Replica& dead = replicas[leader];
    Replica& next = replicas[1 - leader];
    const auto killed = Steady::now();
    dead.process->Signal(SIGKILL);
    dead.process->Wait(std::chrono::seconds(5));
    auto line = next.process->ReadLine(std::chrono::seconds(ttl * 10));
    if (!line || line->find("serving") == std::string::npos) {
      std::fprintf(stderr, "kill %d: the standby did not take over\n", k + 1);
      return 1;
    }
    ms.push_back(Ms(Steady::now() - killed));
    if (!Start(dead, "standby")) {
      std::fprintf(stderr, "kill %d: the killed replica did not come back as a standby\n", k + 1);
      return 1;
    }
    leader = 1 - leader;
  }
  for (auto& r : replicas) r.process->Signal(SIGKILL);
  std::vector<double> sorted = ms;
  std::sort(sorted.begin(), sorted.end());
  auto pct = [&](double p) {
    return sorted[std::min(sorted.size() - 1, static_cast<std::size_t>(p * sorted.size()))];
  };
  std::printf(
      "  min %.0f ms  p50 %.0f ms  p99 %.0f ms  max %.0f ms; TTL %d ms; goal p99 <= %d ms: %s\n",
      sorted.front(), pct(0.5), pct(0.99), sorted.back(), ttl * 1000, ttl * 1000 + 1000,
      pct(0.99) <= ttl * 1000 + 1000 ? "met" : "NOT met");
  return 0;
}

}  // namespace
}  // namespace icewarden::bench

int main(int argc, char** argv) {
  int tables = 10000, kills = 50, ttl = 2;
  std::size_t batch = 500;
  bool cas = true, takeover = true;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&] { return i + 1 < argc ? std::atoi(argv[++i]) : 0; };
    if (a == "--tables")
      tables = next();
    else if (a == "--batch")
      batch = static_cast<std::size_t>(next());
    else if (a == "--kills")
      kills = next();
    else if (a == "--ttl")
      ttl = next();
    else if (a == "--skip-cas")
      cas = false;
    else if (a == "--skip-takeover")
      takeover = false;
    else {
      std::fprintf(stderr, "unknown argument %s\n", argv[i]);
      return 2;
    }
  }
  const char* base = std::getenv("TMPDIR");
  std::string dir = std::string(base && *base ? base : "/tmp") + "/etcd-ha-bench-XXXXXX";
  if (mkdtemp(dir.data()) == nullptr) return 1;
  int rc = 0;
  {
    icewarden::testing::EtcdCluster cluster(dir);
    if (!cluster.WaitReady()) {
      std::fprintf(stderr, "the etcd cluster did not become ready\n");
      rc = 1;
    } else {
      if (cas) rc = icewarden::bench::RunCas(cluster, dir, tables, batch);
      if (rc == 0 && takeover) rc = icewarden::bench::RunTakeover(cluster, dir, kills, ttl);
    }
  }
  std::filesystem::remove_all(dir);
  return rc;
}
