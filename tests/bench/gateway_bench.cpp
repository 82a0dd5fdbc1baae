// The catalog gateway's cost, measured side by side with talking to the lab's catalog directly
// (tests/bench/README.md):
//
//   1. added latency of load table and commit: direct and through `icewarden gateway`, taking
//      turns request by request on keep-alive connections; p50/p99 of each and the difference;
//   2. commits/s to --tables tables from --threads writers, direct vs gateway, alternating
//      phases of --seconds, twice each; the ratio;
//   3. fence → refuse: a failover put in `fencing` in the store until the gateway's closure says
//      confirmed (what gateway.fence waits for), --fences times: p50/p99/max;
//   4. the gateway's RSS with --memory-tables ownership rows, after a write to 2,000 of them.
//
//   gateway_bench [--tables 1000] [--rounds 2000] [--threads 8] [--seconds 5] [--fences 50]
//                 [--memory-tables 100000] [--store-poll 20ms] [--store sqlite|etcd|both]
//                 [--only-fences 1] [--gateway-threads 32] [--gateway-binary build/icewarden]
//
// --store etcd runs the gateway on a real one-member etcd (Debian's /usr/bin/etcd, started here
// as the tests do), where it learns changes from the store's watch; `both` runs SQLite, then
// etcd, so one command gives both figures. --only-fences 1 measures section 3 alone.
//
// The lab runs as its own process (build/examples/lab/icewarden-lab, every table owned by
// us-east-1, no workload, no replication lag); so does the gateway. Loopback only.

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <regex>

#include "examples/lab/lab.h"
#include "examples/lab/workload.h"
#include "state/etcd_store.h"
#include "state/sqlite_store.h"
#include "state/state_store.h"
#include "tests/bench/bench_processes.h"
#include "tests/etcd/etcd_member.h"

#ifndef ICEWARDEN_BINARY
#define ICEWARDEN_BINARY "build/icewarden"
#endif

namespace icewarden::bench {
namespace {

using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

double Percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<std::size_t>(p * static_cast<double>(v.size())))];
}

std::string TablePath(const TableIdent& t) {
  return "/v1/lab/namespaces/" + t.namespace_levels[0] + "/tables/" + t.name;
}

AuditEvent Why(const std::string& action) {
  AuditEvent e;
  e.actor = "bench";
  e.source = "bench";
  e.action = action;
  e.reason = "gateway bench";
  return e;
}

long RssKib(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::stol(line.substr(6));
  }
  return -1;
}

struct Options {
  int tables = 1000, rounds = 2000, threads = 8, seconds = 5, fences = 50;
  int memory_tables = 100000;
  std::string store_poll = "20ms";
  int gateway_threads = 32;
  // Another build's binary, to compare two builds of the gateway on one machine and lab.
  std::string gateway_binary = ICEWARDEN_BINARY;
  std::string store = "sqlite";  // sqlite, etcd or both
  bool only_fences = false;
};

// Commits one append to `t` on `c`, from `metadata` (updated from the answer). Seconds taken,
// or a negative value when it was not 200.
double Commit(httplib::Client& c, const TableIdent& t, json& metadata) {
  const std::string body = lab::AppendCommit(metadata, "bench", lab::SystemNowMs()).dump();
  const auto start = Clock::now();
  auto r = c.Post(TablePath(t), body, "application/json");
  const double took = std::chrono::duration<double>(Clock::now() - start).count();
  if (!r || r->status != 200) return -1;
  metadata = json::parse(r->body)["metadata"];
  return took;
}

std::unique_ptr<httplib::Client> Client(const std::string& url) {
  auto c = std::make_unique<httplib::Client>(url);
  c->set_keep_alive(true);
  // As engines' HTTP clients do (Apache HttpClient 5, Java's HttpClient): without it, a POST
  // written as headers then body waits out the server's delayed ACK, 40 ms per commit, which
  // hid everything else the bench measures.
  c->set_tcp_nodelay(true);
  c->set_read_timeout(30, 0);
  return c;
}

// Loads and commits take turns, direct and through the gateway, request by request. Each
// round uses the next seeded table, so no table's metadata grows past a few snapshots and the
// bodies stay the size of an ordinary table's (one table committed 2,000 times grew a
// multi-megabyte metadata file, which measured copying rather than the gateway).
void Latency(const Options& o, const std::string& direct, const std::string& gateway,
             const std::vector<TableIdent>& tables, std::vector<json>& metadata) {
  auto d = Client(direct), g = Client(gateway);
  std::vector<double> load_d, load_g, commit_d, commit_g;
  for (int i = 0; i < o.rounds; ++i) {
    const std::size_t n = static_cast<std::size_t>(i) % tables.size();
    const TableIdent& t = tables[n];
    const bool gateway_first = i % 2;
    for (int k = 0; k < 2; ++k) {
      httplib::Client& c = (k == 0) == gateway_first ? *g : *d;
      auto& loads = &c == g.get() ? load_g : load_d;
      const auto start = Clock::now();
      auto r = c.Get(TablePath(t));
      if (r && r->status == 200) {
        loads.push_back(std::chrono::duration<double>(Clock::now() - start).count());
      }
    }
    for (int k = 0; k < 2; ++k) {
      httplib::Client& c = (k == 0) == gateway_first ? *g : *d;
      const double took = Commit(c, t, metadata[n]);
      if (took >= 0) (&c == g.get() ? commit_g : commit_d).push_back(took);
    }
  }
  auto row = [](const char* what, const std::vector<double>& dv, const std::vector<double>& gv) {
    const double d50 = Percentile(dv, 0.5) * 1e3, d99 = Percentile(dv, 0.99) * 1e3;
    const double g50 = Percentile(gv, 0.5) * 1e3, g99 = Percentile(gv, 0.99) * 1e3;
    std::printf(
        "%-11s direct p50 %7.3f ms p99 %7.3f ms | gateway p50 %7.3f ms p99 %7.3f ms | "
        "added p50 %+.3f ms p99 %+.3f ms (n=%zu/%zu)\n",
        what, d50, d99, g50, g99, g50 - d50, g99 - d99, dv.size(), gv.size());
  };
  std::printf("1. latency, %d rounds taking turns over %zu tables\n", o.rounds, tables.size());
  row("load table", load_d, load_g);
  row("commit", commit_d, commit_g);
}

double Throughput(const Options& o, const std::string& url, const std::vector<TableIdent>& tables,
                  std::vector<json>& metadata) {
  std::atomic<long> done{0}, failed{0};
  const auto stop = Clock::now() + std::chrono::seconds(o.seconds);
  std::vector<std::thread> writers;
  for (int w = 0; w < o.threads; ++w) {
    writers.emplace_back([&, w] {
      auto c = Client(url);
      for (std::size_t i = w; Clock::now() < stop; i += o.threads) {
        const std::size_t k = i % tables.size();
        if (Commit(*c, tables[k], metadata[k]) >= 0) {
          ++done;
        } else {
          ++failed;
          metadata[k] = json::parse(c->Get(TablePath(tables[k]))->body)["metadata"];
        }
      }
    });
  }
  for (auto& t : writers) t.join();
  if (failed) std::printf("   (%ld commits refused or failed, reloaded)\n", failed.load());
  return static_cast<double>(done) / o.seconds;
}

void Fences(const Options& o, StateStore& store, const std::string& gateway) {
  std::vector<double> took, writes;  // fence -> confirmed; the store write alone
  auto c = Client(gateway);
  for (int i = 0; i < o.fences; ++i) {
    Failover f;
    f.id = "fo-bench-" + std::to_string(i);
    f.scope = "owner:us-east-1";
    f.from = "us-east-1";
    f.to = "eu-central-1";
    f.runbook = "bench";
    f.phase = FailoverPhase::kFencing;
    f.proposed_by = "bench";
    const auto start = Clock::now();
    if (!store.CreateFailover(f, Why("failover.propose")).ok()) continue;
    writes.push_back(std::chrono::duration<double>(Clock::now() - start).count() * 1e3);
    for (;;) {
      auto r = c->Get("/icewarden/v1/closures/" + f.id);
      if (r && r->status == 200 && json::parse(r->body).value("confirmed", false)) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    took.push_back(std::chrono::duration<double>(Clock::now() - start).count() * 1e3);
    auto row = store.GetFailover(f.id);
    Failover ended = **row;
    ended.phase = FailoverPhase::kAborted;
    (void)store.UpdateFailover(ended, ended.version, Why("failover.abort"));
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  std::printf(
      "3. fence -> confirmed closed (%s, store_poll %s), %zu fences: p50 %.1f ms p99 %.1f ms "
      "max %.1f ms\n",
      o.store.c_str(), o.store_poll.c_str(), took.size(), Percentile(took, 0.5),
      Percentile(took, 0.99), took.empty() ? 0.0 : *std::max_element(took.begin(), took.end()));
  std::printf("   of which the store's write of the failover: p50 %.1f ms p99 %.1f ms\n",
              Percentile(writes, 0.5), Percentile(writes, 0.99));
  std::fflush(stdout);  // before the next run forks its children
}

int Run(const Options& o) {
  const std::string dir = std::filesystem::temp_directory_path() /
                          ("icewarden-gateway-bench-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  LabProcess lab;
  if (std::string e = lab.Start({.dir = dir, .seed_tables = o.tables, .server_threads = 32});
      !e.empty()) {
    std::fprintf(stderr, "%s\n", e.c_str());
    return 1;
  }
  std::unique_ptr<testing::EtcdMember> etcd;
  std::string state_yaml = "state:\n  path: " + dir + "/icewarden.db\n";
  Result<std::unique_ptr<StateStore>> opened = Status::Internal("no store");
  if (o.store == "etcd") {
    etcd = std::make_unique<testing::EtcdMember>();
    if (!etcd->WaitReady()) return std::fprintf(stderr, "etcd did not start\n"), 1;
    opened = OpenEtcdStore(std::make_shared<EtcdClient>(EtcdClientOptions{{etcd->url()}}),
                           EtcdStoreOptions{}, SystemClock());
    state_yaml = "state:\n  backend: etcd\n  etcd:\n    endpoints: [" + etcd->url() + "]\n";
  } else {
    opened = OpenSqliteStore(SqliteStoreOptions{dir + "/icewarden.db"}, SystemClock());
  }
  if (!opened.ok()) return std::fprintf(stderr, "%s\n", opened.status().message().c_str()), 1;
  std::unique_ptr<StateStore> store = std::move(opened).value();
  std::vector<TableIdent> tables;
  std::vector<OwnershipChange> claims;
  {
    auto c = Client(lab.region_url("us-east-1"));
    for (const char* ns : {"sales", "clickstream", "eu"}) {
      auto listed = c->Get(std::string("/v1/lab/namespaces/") + ns + "/tables?pageSize=100000");
      if (!listed || listed->status != 200) return std::fprintf(stderr, "cannot list %s\n", ns), 1;
      const json page = json::parse(listed->body);
      for (const json& id : page["identifiers"]) {
        TableIdent ident{{ns}, id["name"].get<std::string>()};
        claims.push_back({ident, 0, "us-east-1", ""});
        if (ident.name.rfind("seed_", 0) == 0) tables.push_back(ident);
      }
    }
  }
  if (tables.empty()) return std::fprintf(stderr, "the lab seeded no tables\n"), 1;
  const std::size_t per_batch =
      std::min<std::size_t>(500, store->MaxOwnershipBatch() > 0 ? store->MaxOwnershipBatch() : 500);
  for (std::size_t i = 0; i < claims.size(); i += per_batch) {
    std::span<const OwnershipChange> batch(claims.data() + i,
                                           std::min<std::size_t>(per_batch, claims.size() - i));
    if (!store->CompareAndSetOwnership(batch, Why("ownership.claim")).ok()) return 1;
  }
  std::ofstream(dir + "/icewarden.yaml")
      << state_yaml << "regions:\n"
      << "  - {name: us-east-1, catalog_uri: " << lab.region_url("us-east-1")
      << ", warehouse: lab}\n"
      << "  - {name: eu-central-1, catalog_uri: " << lab.region_url("eu-central-1")
      << ", warehouse: lab}\n"
      << "ownership:\n  default_owner: us-east-1\n"
      << "gateways:\n  - {name: gw, region: us-east-1, listen: 127.0.0.1:0, store_poll: "
      << o.store_poll << ", threads: " << o.gateway_threads << "}\n";
  ChildProcess gw;
  if (!gw.Start({o.gateway_binary, "gateway", "--config", dir + "/icewarden.yaml"},
                dir + "/gateway.log")) {
    return 1;
  }
  auto line = gw.ReadLine(std::chrono::seconds(20));
  std::smatch m;
  if (!line || !std::regex_search(*line, m, std::regex("(http://127\\.0\\.0\\.1:[0-9]+)/v1/"))) {
    std::fprintf(stderr, "the gateway did not start; see %s/gateway.log\n", dir.c_str());
    return 1;
  }
  const std::string gateway = m[1].str(), direct = lab.region_url("us-east-1");
  if (o.only_fences) {
    Fences(o, *store, gateway);
    gw.Stop();
    lab.Stop();
    std::filesystem::remove_all(dir);
    return 0;
  }

  std::vector<json> metadata;
  {
    auto c = Client(direct);
    for (const auto& t : tables)
      metadata.push_back(json::parse(c->Get(TablePath(t))->body)["metadata"]);
  }
  Latency(o, direct, gateway, tables, metadata);

  std::printf("2. commits/s to %zu tables, %d writers, %d s phases\n", tables.size(), o.threads,
              o.seconds);
  // Phases go direct, gateway, gateway, direct, ... so that the lab's own drift over the run
  // (its tables' metadata grows with every commit) weighs on both sides alike.
  double direct_total = 0, gateway_total = 0;
  for (int round = 0; round < 4; ++round) {
    const bool direct_first = round % 2 == 0;
    double d = 0, g = 0;
    for (int k = 0; k < 2; ++k) {
      if ((k == 0) == direct_first) {
        d = Throughput(o, direct, tables, metadata);
      } else {
        g = Throughput(o, gateway, tables, metadata);
      }
    }
    direct_total += d;
    gateway_total += g;
    std::printf("   round %d: direct %.0f/s, gateway %.0f/s, ratio %.2f\n", round + 1, d, g, g / d);
  }
  std::printf("   all rounds: direct %.0f/s, gateway %.0f/s, ratio %.2f\n", direct_total / 4,
              gateway_total / 4, gateway_total / direct_total);

  Fences(o, *store, gateway);

  std::vector<OwnershipChange> many;
  for (int i = 0; i < o.memory_tables; ++i) {
    many.push_back(
        {*icewarden::TableIdent::Parse("mem.t" + std::to_string(i)), 0, "us-east-1", ""});
  }
  for (std::size_t i = 0; i < many.size(); i += 500) {
    std::span<const OwnershipChange> batch(many.data() + i,
                                           std::min<std::size_t>(500, many.size() - i));
    (void)store->CompareAndSetOwnership(batch, Why("ownership.claim"));
  }
  const long before = RssKib(gw.pid());
  {
    auto c = Client(gateway);
    for (int i = 0; i < 2000; ++i) {
      c->Post("/v1/lab/namespaces/mem/tables/t" + std::to_string(i * (o.memory_tables / 2000)),
              R"({"requirements":[],"updates":[]})", "application/json");
    }
  }
  std::printf(
      "4. gateway RSS with %d more ownership rows: %.1f MiB before the writes, %.1f MiB "
      "after writes to 2,000 of them\n",
      o.memory_tables, before / 1024.0, RssKib(gw.pid()) / 1024.0);
  gw.Stop();
  lab.Stop();
  std::filesystem::remove_all(dir);
  return 0;
}

}  // namespace
}  // namespace icewarden::bench

int main(int argc, char** argv) {
  icewarden::bench::Options o;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i], value = argv[i + 1];
    if (flag == "--tables")
      o.tables = std::stoi(value);
    else if (flag == "--rounds")
      o.rounds = std::stoi(value);
    else if (flag == "--threads")
      o.threads = std::stoi(value);
    else if (flag == "--seconds")
      o.seconds = std::stoi(value);
    else if (flag == "--fences")
      o.fences = std::stoi(value);
    else if (flag == "--memory-tables")
      o.memory_tables = std::stoi(value);
    else if (flag == "--store-poll")
      o.store_poll = value;
    else if (flag == "--gateway-threads")
      o.gateway_threads = std::stoi(value);
    else if (flag == "--gateway-binary")
      o.gateway_binary = value;
    else if (flag == "--store" && (value == "sqlite" || value == "etcd" || value == "both"))
      o.store = value;
    else if (flag == "--only-fences")
      o.only_fences = value != "0";
    else {
      std::fprintf(stderr, "unknown flag %s %s (--store takes sqlite, etcd or both)\n",
                   flag.c_str(), value.c_str());
      return 2;
    }
  }
  if (o.store != "both") return icewarden::bench::Run(o);
  for (const char* store : {"sqlite", "etcd"}) {
    o.store = store;
    if (int rc = icewarden::bench::Run(o); rc != 0) return rc;
  }
  return 0;
}
