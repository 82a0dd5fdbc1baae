// The randomized fault mode of issue 12, item 5, on demand: a 3-member etcd cluster, N real
// `icewarden serve` replicas, the lab's catalogs (the icewarden-lab executable) and an effect
// sink, all on loopback; failovers and switchovers driven through the leader's API while faults
// are injected at random (tests/chaos/fault_injector.h), and every invariant checked all along
// (tests/chaos/invariants.h). Prints a report; exits 1 on any violation, 2 when the run could
// not be set up.
//
//   build/tests/chaos/etcd_chaos [--duration 120s] [--seed 1] [--replicas 3] [--ttl 2]
//                                [--fault-gap 2s..6s as --min-gap 2 --max-gap 6] [--keep]
//
// CTest runs a short one (etcd_chaos_smoke, label etcd); tests/bench/README.md says more.
#include <stdlib.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <filesystem>
#include <random>
#include <set>
#include <string>
#include <thread>

#include "state/etcd_client.h"
#include "state/etcd_store.h"
#include "state/state_store.h"
#include "tests/chaos/chaos_replicas.h"
#include "tests/chaos/chaos_setup.h"
#include "tests/chaos/effect_sink.h"
#include "tests/chaos/failover_driver.h"
#include "tests/chaos/fault_injector.h"
#include "tests/chaos/invariants.h"
#include "tests/e2e/lab_stack.h"
#include "tests/etcd/etcd_cluster.h"

namespace icewarden::chaos {
namespace {

using namespace std::chrono_literals;
using Steady = std::chrono::steady_clock;

constexpr const char* kLeaderKey = "/icewarden/leader";

struct Flags {
  std::chrono::seconds duration{120};
  std::uint64_t seed = 1;
  int replicas = 3;
  int ttl = 2;
  int min_gap = 2, max_gap = 6;  // seconds between faults
  bool keep = false;
};

// "120", "120s", "5m" -> seconds; -1 when it is none of those.
long long Seconds(const std::string& s) {
  char* end = nullptr;
  const long long n = std::strtoll(s.c_str(), &end, 10);
  if (end == s.c_str()) return -1;
  const std::string unit(end);
  if (unit.empty() || unit == "s") return n;
  if (unit == "m") return n * 60;
  return -1;
}

bool Parse(int argc, char** argv, Flags& f) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--keep") {
      f.keep = true;
      continue;
    }
    if (i + 1 >= argc) return false;
    const std::string v = argv[++i];
    const long long n = Seconds(v);
    if (n < 0) return false;
    if (a == "--duration")
      f.duration = std::chrono::seconds(n);
    else if (a == "--seed")
      f.seed = static_cast<std::uint64_t>(n);
    else if (a == "--replicas" && n >= 2 && n <= 7)
      f.replicas = static_cast<int>(n);
    else if (a == "--ttl" && n >= 1)
      f.ttl = static_cast<int>(n);
    else if (a == "--min-gap")
      f.min_gap = static_cast<int>(n);
    else if (a == "--max-gap" && n >= 1)
      f.max_gap = static_cast<int>(n);
    else
      return false;
  }
  return f.min_gap <= f.max_gap;
}

// Reads the record as etcd holds it, over and over, until stopped: ownership rows and every
// recent failover's journal.
void Watch(StateStore& record, Invariants& invariants, const std::atomic<bool>& stop,
           std::atomic<std::int64_t>& reads) {
  while (!stop) {
    OwnershipQuery all;
    all.limit = 0;
    if (auto rows = record.ListOwnership(all); rows.ok()) invariants.ObserveOwnership(*rows);
    if (auto failovers = record.ListFailovers(20); failovers.ok()) {
      for (const Failover& f : *failovers)
        if (auto steps = record.ListSteps(f.id); steps.ok())
          invariants.ObserveSteps(*steps, Steady::now());
    }
    ++reads;
    std::this_thread::sleep_for(300ms);
  }
}

// Every audit event's reason, to look for the writes sent to deposed leaders.
std::vector<std::string> AuditReasons(StateStore& record) {
  std::vector<std::string> out;
  AuditQuery q;
  q.limit = 1000;
  for (;;) {
    auto page = record.ListAudit(q);
    if (!page.ok() || page->empty()) return out;
    for (const AuditEvent& e : *page) out.push_back(e.reason);
    q.after_seq = page->back().seq;
  }
}

int Run(const Flags& flags) {
  const char* base = std::getenv("TMPDIR");
  std::string dir = std::string(base && *base ? base : "/tmp") + "/etcd-chaos-XXXXXX";
  if (mkdtemp(dir.data()) == nullptr) return 2;
  std::printf(
      "etcd chaos: seed %llu, %d replicas, leader_ttl %d s, %lld s of faults every %d-%d s; "
      "files in %s\n",
      static_cast<unsigned long long>(flags.seed), flags.replicas, flags.ttl,
      static_cast<long long>(flags.duration.count()), flags.min_gap, flags.max_gap, dir.c_str());
  std::fflush(stdout);

  testing::EtcdCluster etcd(dir);
  if (!etcd.WaitReady()) {
    std::fprintf(stderr, "the etcd cluster did not become ready\n");
    return 2;
  }
  std::filesystem::create_directories(dir + "/catalogs");
  testing::LabProcess lab(dir + "/catalogs", {"--no-workload", "--replication-lag-ms", "100"});
  if (!lab.WaitUntilReady()) {
    std::fprintf(stderr, "icewarden-lab did not print 'lab: ready'\n");
    return 2;
  }
  EffectSink sink(etcd.endpoints(), kLeaderKey);

  ChaosLayout layout;
  layout.dir = dir;
  layout.etcd_endpoints = etcd.endpoints();
  for (int i = 0; i < flags.replicas; ++i)
    layout.replicas.push_back(std::string("replica-") + char('a' + i));
  layout.ttl_seconds = flags.ttl;
  layout.us_catalog = lab.region_url(testing::kLabUs);
  layout.eu_catalog = lab.region_url(testing::kLabEu);
  layout.sink_notify = sink.Url("/effects/notify");
  layout.sink_confirm = sink.Url("/effects/confirm");
  std::vector<int> ports;
  for (int i = 0; i < flags.replicas; ++i) ports.push_back(testing::FreePort());
  WriteChaosFiles(layout, ports);

  ReplicaSet replicas({dir, layout.replicas, etcd.endpoints(), kLeaderKey});
  for (std::size_t i = 0; i < replicas.size(); ++i) {
    const std::string line = replicas.Start(i);
    if (line.empty()) {
      std::fprintf(stderr, "%s did not start; see %s/%s.log\n", replicas.name(i).c_str(),
                   dir.c_str(), replicas.name(i).c_str());
      return 2;
    }
  }

  auto opened = OpenEtcdStore(std::make_shared<EtcdClient>(EtcdClientOptions{etcd.endpoints()}),
                              EtcdStoreOptions{}, SystemClock());
  if (!opened.ok()) {
    std::fprintf(stderr, "cannot read the record: %s\n", opened.status().ToString().c_str());
    return 2;
  }
  std::shared_ptr<StateStore> record = std::move(opened).value();
  Invariants invariants({testing::kLabUs, testing::kLabEu});
  std::atomic<bool> stop_watch{false};
  std::atomic<std::int64_t> reads{0};
  std::thread watch([&] { Watch(*record, invariants, stop_watch, reads); });

  DriverOptions driver_options;
  driver_options.etcd_endpoints = etcd.endpoints();
  driver_options.leader_key = kLeaderKey;
  driver_options.regions = {testing::kLabUs, testing::kLabEu};
  driver_options.operator_token = kOperatorToken;
  driver_options.approver_token = kApproverToken;
  driver_options.seed = flags.seed;
  FailoverDriver driver(driver_options, record);
  driver.Start();

  FaultInjector faults({etcd.endpoints(), kLeaderKey, flags.ttl, flags.seed}, replicas, invariants);
  std::mt19937_64 gaps(flags.seed);
  const auto started = Steady::now();
  const auto until = started + flags.duration;
  while (Steady::now() < until) {
    const int gap = flags.min_gap + static_cast<int>(gaps() % (flags.max_gap - flags.min_gap + 1));
    std::this_thread::sleep_until(std::min(until, Steady::now() + std::chrono::seconds(gap)));
    if (Steady::now() >= until) break;
    const std::string did = faults.InjectOne();
    std::printf("  [%5.1fs] %s\n", std::chrono::duration<double>(Steady::now() - started).count(),
                did.c_str());
    std::fflush(stdout);
  }
  // No more faults: every replica runs again, and the failover in flight may finish.
  faults.Heal();
  driver.Drain();
  const auto settle = Steady::now() + 60s;
  while (!driver.Idle() && Steady::now() < settle) std::this_thread::sleep_for(250ms);
  driver.Stop();
  std::this_thread::sleep_for(1s);  // one more read of everything
  stop_watch = true;
  watch.join();

  const std::vector<Effect> effects = sink.Effects();
  invariants.CheckEffects(
      effects, replicas,
      std::set<std::string>(kNonIdempotentSteps.begin(), kNonIdempotentSteps.end()));
  const std::vector<std::string> reasons = AuditReasons(*record);
  for (const std::string& sent : faults.deposed_writes()) {
    bool landed = false;
    for (const std::string& r : reasons) landed = landed || r.find(sent) != std::string::npos;
    invariants.Count("no write from a deposed leader", !landed,
                     "'" + sent + "' is in the audit log");
  }

  // The report.
  const DriverFigures figures = driver.Figures();
  std::printf("\nfaults injected:\n");
  std::int64_t total = 0;
  for (const auto& [kind, n] : faults.injected()) {
    std::printf("  %-16s %lld\n", kind.c_str(), static_cast<long long>(n));
    total += n;
  }
  std::printf("  %-16s %lld (replica starts that printed nothing: %lld)\n", "total",
              static_cast<long long>(total), static_cast<long long>(faults.start_failures()));
  std::set<std::int64_t> terms;
  for (const Effect& e : effects) terms.insert(e.term);
  std::printf("replica incarnations: %zu\n", replicas.incarnations().size());
  std::printf("failovers started:");
  for (const auto& [kind, n] : figures.started)
    std::printf(" %s %lld", kind.c_str(), static_cast<long long>(n));
  std::printf("\nfailovers ended:");
  for (const auto& [phase, n] : figures.ended)
    std::printf(" %s %lld", phase.c_str(), static_cast<long long>(n));
  std::string active;
  if (!figures.active.empty()) {
    auto f = record->GetFailover(figures.active);
    active = "; still active: " + figures.active;
    if (f.ok() && f->has_value())
      active +=
          std::string(" in ") + FailoverPhaseName((*f)->phase) + " (" + (*f)->last_reason + ")";
  }
  std::printf("%s\n", active.c_str());
  std::printf("failovers that ended under another leader term than they began in: %lld\n",
              static_cast<long long>(figures.across_terms));
  std::printf(
      "approvals %lld (again after a refused promotion: %lld), fencing confirmed by the operator "
      "%lld, aborted by the driver %lld, proposals refused %lld\n",
      static_cast<long long>(figures.approvals), static_cast<long long>(figures.reapprovals),
      static_cast<long long>(figures.operator_confirmations),
      static_cast<long long>(figures.aborts), static_cast<long long>(figures.refused_proposals));
  for (const auto& [why, n] : figures.refusals)
    std::printf("  refused %lldx: %s\n", static_cast<long long>(n), why.c_str());
  std::printf("effects landed at the sink: %zu; reads of the record: %lld\n", effects.size(),
              static_cast<long long>(reads.load()));
  std::printf("\ninvariants:                        checks  violations\n");
  const auto tallies = invariants.Tallies();
  for (const std::string& name : InvariantNames()) {
    auto it = tallies.find(name);
    const Tally t = it == tallies.end() ? Tally{} : it->second;
    std::printf("  %-32s %7lld  %10lld\n", name.c_str(), static_cast<long long>(t.checks),
                static_cast<long long>(t.violations));
    for (const std::string& e : t.examples) std::printf("      %s\n", e.c_str());
  }
  const std::int64_t violations = invariants.Violations();
  std::printf("%s\n", violations == 0 ? "no invariant was violated"
                                      : "INVARIANTS VIOLATED (files kept for the post-mortem)");
  if (violations == 0 && !flags.keep) std::filesystem::remove_all(dir);
  return violations == 0 ? 0 : 1;
}

}  // namespace
}  // namespace icewarden::chaos

int main(int argc, char** argv) {
  icewarden::chaos::Flags flags;
  if (!icewarden::chaos::Parse(argc, argv, flags)) {
    std::fprintf(stderr,
                 "usage: etcd_chaos [--duration 120s] [--seed N] [--replicas 3] [--ttl 2] "
                 "[--min-gap 2] [--max-gap 6] [--keep]\n");
    return 2;
  }
  return icewarden::chaos::Run(flags);
}
