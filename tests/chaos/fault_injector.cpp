#include "tests/chaos/fault_injector.h"

#include <httplib.h>
#include <signal.h>

#include <nlohmann/json.hpp>
#include <thread>

#include "state/etcd_client.h"
#include "tests/chaos/chaos_setup.h"

namespace icewarden::chaos {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;

}  // namespace

FaultInjector::FaultInjector(FaultOptions options, ReplicaSet& replicas, Invariants& invariants)
    : options_(std::move(options)),
      replicas_(replicas),
      invariants_(invariants),
      rng_(options_.seed * 7919 + 1) {}

void FaultInjector::StartAgain(std::size_t i) {
  if (replicas_.Start(i).empty()) ++start_failures_;
}

void FaultInjector::Heal() {
  for (std::size_t i = 0; i < replicas_.size(); ++i)
    if (!replicas_.running(i)) StartAgain(i);
}

std::optional<std::size_t> FaultInjector::Leader(std::string* api) {
  EtcdClient etcd(EtcdClientOptions{options_.etcd_endpoints, 2000ms});
  const auto stop = std::chrono::steady_clock::now() + 15s;
  while (std::chrono::steady_clock::now() < stop) {
    auto key = etcd.Range(options_.leader_key);
    if (key.ok() && !key->kvs.empty()) {
      json v = json::parse(key->kvs[0].value, nullptr, false);
      if (v.is_object()) {
        auto i = replicas_.Find(v.value("replica", ""));
        if (i && replicas_.running(*i)) {
          if (api) *api = v.value("api", "");
          return i;
        }
      }
    }
    std::this_thread::sleep_for(100ms);
  }
  return std::nullopt;
}

std::string FaultInjector::KillLeader() {
  auto i = Leader(nullptr);
  if (!i) return "kill-leader: no running leader to kill";
  ++injected_["kill-leader"];
  replicas_.Stop(*i, SIGKILL, 5s);
  std::this_thread::sleep_for(1s);  // RestartSec
  StartAgain(*i);
  return "kill-leader: SIGKILLed " + replicas_.name(*i) + " and started it again";
}

std::string FaultInjector::PauseLeader() {
  std::string api;
  auto i = Leader(&api);
  if (!i) return "pause-leader: no running leader to pause";
  ++injected_["pause-leader"];
  replicas_.Signal(*i, SIGSTOP);
  // A write sent while it is paused waits in its socket and is read when it runs again.
  const std::string reason =
      "chaos: sent to a deposed leader #" + std::to_string(deposed_writes_.size() + 1);
  deposed_writes_.push_back(reason);
  std::thread write([api, reason] {
    httplib::Client c(api);
    c.set_connection_timeout(2, 0);
    c.set_read_timeout(15, 0);
    c.Post("/api/v1/regions/eu-central-1/fence",
           {{"Authorization", "Bearer " + std::string(kAdminToken)}},
           json{{"reason", reason}}.dump(), "application/json");
  });
  std::this_thread::sleep_for(std::chrono::seconds(options_.ttl_seconds) + 1500ms);
  replicas_.Signal(*i, SIGCONT);
  auto status = replicas_.WaitExit(*i, 15s);
  invariants_.Count("a deposed leader stops", status.has_value() && *status == 1,
                    replicas_.name(*i) + " paused past its lease " +
                        (status ? "exited with " + std::to_string(*status)
                                : "still runs 15 s after it ran again"));
  write.join();
  if (replicas_.running(*i)) replicas_.Stop(*i, SIGKILL, 5s);
  StartAgain(*i);
  return "pause-leader: SIGSTOPped " + replicas_.name(*i) + " past its lease, then SIGCONT";
}

std::string FaultInjector::RestartStandby() {
  auto leader = Leader(nullptr);
  std::vector<std::size_t> standbys;
  for (std::size_t i = 0; i < replicas_.size(); ++i)
    if (replicas_.running(i) && (!leader || i != *leader)) standbys.push_back(i);
  if (standbys.empty()) return "restart-standby: no standby";
  const std::size_t i = standbys[rng_() % standbys.size()];
  ++injected_["restart-standby"];
  replicas_.Stop(i, SIGTERM, 20s);
  StartAgain(i);
  return "restart-standby: restarted " + replicas_.name(i);
}

std::string FaultInjector::Skew() {
  for (std::size_t i = 0; i < replicas_.size(); ++i) {
    if (replicas_.skew(i).empty()) continue;
    ++injected_["unskew"];
    replicas_.set_skew(i, "");
    replicas_.Stop(i, SIGTERM, 20s);
    StartAgain(i);
    return "skew: restarted " + replicas_.name(i) + " with a true clock";
  }
  const std::size_t i = rng_() % replicas_.size();
  const std::string offset = rng_() % 2 ? "+30s" : "-30s";
  ++injected_["skew " + offset];
  replicas_.set_skew(i, offset);
  replicas_.Stop(i, SIGTERM, 20s);
  StartAgain(i);
  return "skew: restarted " + replicas_.name(i) + " with its clock " + offset;
}

std::string FaultInjector::InjectOne() {
  Heal();
  // The first four go through every kind once, so that even a short run injects each.
  const int first[] = {10, 40, 90, 60};
  const int pick = injections_ < 4 ? first[injections_] : static_cast<int>(rng_() % 100);
  ++injections_;
  if (pick < 30) return KillLeader();
  if (pick < 55) return PauseLeader();
  if (pick < 75) return RestartStandby();
  return Skew();
}

}  // namespace icewarden::chaos
