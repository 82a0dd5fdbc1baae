#include "tests/chaos/chaos_replicas.h"

#include <signal.h>

#include <map>

#include "state/etcd_client.h"
#include "tests/fakes/test_paths.h"

namespace icewarden::chaos {
namespace {

constexpr const char* kLibFaketime = "/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1";

}  // namespace

ReplicaSet::ReplicaSet(ReplicaSetOptions options) : options_(std::move(options)) {
  for (const std::string& n : options_.names) slots_.push_back(Slot{n, "", nullptr});
}

ReplicaSet::~ReplicaSet() {
  for (Slot& s : slots_) s.process.reset();  // SIGKILL and reap
}

std::int64_t ReplicaSet::Revision() const {
  EtcdClient etcd(EtcdClientOptions{options_.etcd_endpoints, std::chrono::milliseconds(2000)});
  for (int i = 0; i < 20; ++i) {
    auto r = etcd.Range(options_.leader_key);
    if (r.ok()) return r->revision;
  }
  return 0;
}

std::string ReplicaSet::Start(std::size_t i) {
  Slot& s = slots_[i];
  Incarnation inc;
  inc.replica = s.name;
  inc.number = 1;
  for (const Incarnation& other : incarnations_)
    if (other.replica == s.name) inc.number = other.number + 1;
  inc.skew = s.skew;
  // Read before the process exists: any term it wins was created after this revision.
  inc.started_after_revision = Revision();
  std::map<std::string, std::string> env{{"ICEWARDEN_CHAOS_INCARNATION", inc.id()}};
  if (!s.skew.empty()) {
    env["LD_PRELOAD"] = kLibFaketime;
    env["FAKETIME"] = s.skew;
    // The wall clock alone, as on a host without NTP: libfaketime's faked CLOCK_MONOTONIC breaks
    // every timed condition-variable wait (tests/etcd/skewed_replica_test.cpp says why).
    env["FAKETIME_DONT_FAKE_MONOTONIC"] = "1";
  }
  const std::string base = options_.dir + "/" + s.name;
  s.process = std::make_unique<testing::Subprocess>(
      std::vector<std::string>{"/bin/sh", "-c", "exec \"$0\" serve --config \"$1\" 2>>\"$2\"",
                               testing::IcewardenBinary(), base + ".yaml", base + ".log"},
      env);
  incarnations_.push_back(inc);
  return s.process->ReadLine(std::chrono::seconds(30)).value_or("");
}

std::optional<int> ReplicaSet::Stop(std::size_t i, int sig, std::chrono::milliseconds limit) {
  Slot& s = slots_[i];
  if (!s.process) return std::nullopt;
  s.process->Signal(sig);
  auto status = s.process->Wait(limit);
  if (!status) {
    s.process->Signal(SIGKILL);
    status = s.process->Wait(std::chrono::seconds(10));
  }
  s.process.reset();
  return status;
}

void ReplicaSet::Signal(std::size_t i, int sig) {
  if (slots_[i].process) slots_[i].process->Signal(sig);
}

std::optional<int> ReplicaSet::WaitExit(std::size_t i, std::chrono::milliseconds limit) {
  Slot& s = slots_[i];
  if (!s.process) return std::nullopt;
  auto status = s.process->Wait(limit);
  if (status) s.process.reset();
  return status;
}

std::optional<std::size_t> ReplicaSet::Find(const std::string& replica) const {
  for (std::size_t i = 0; i < slots_.size(); ++i)
    if (slots_[i].name == replica) return i;
  return std::nullopt;
}

std::string ReplicaSet::Attribute(std::int64_t term, const std::string& holder) const {
  const Incarnation* best = nullptr;
  for (const Incarnation& inc : incarnations_)
    if (inc.replica == holder && inc.started_after_revision < term) best = &inc;
  return best ? best->id() : "";
}

}  // namespace icewarden::chaos
