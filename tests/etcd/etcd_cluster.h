// Three etcd members forming one cluster (Debian's /usr/bin/etcd, --max-txn-ops 1024), each its
// own process with its own loopback ports and data folder under `dir`; killed with the object.
// Used where one member is not the point: tests/bench/etcd_ha_bench and tests/chaos/.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "state/etcd_client.h"
#include "tests/etcd/etcd_member.h"
#include "tests/fakes/subprocess.h"

namespace icewarden::testing {

class EtcdCluster {
 public:
  explicit EtcdCluster(const std::string& dir) {
    std::string initial;
    std::vector<std::pair<std::string, std::string>> urls;  // client, peer
    for (int i = 0; i < 3; ++i) {
      urls.emplace_back("http://127.0.0.1:" + std::to_string(FreePort()),
                        "http://127.0.0.1:" + std::to_string(FreePort()));
      initial += (i ? "," : "") + std::string("m") + std::to_string(i) + "=" + urls[i].second;
    }
    for (int i = 0; i < 3; ++i) {
      const std::string name = "m" + std::to_string(i);
      endpoints_.push_back(urls[i].first);
      members_.push_back(
          std::make_unique<Subprocess>(std::vector<std::string>{"/usr/bin/etcd",
                                                                "--name",
                                                                name,
                                                                "--data-dir",
                                                                dir + "/" + name,
                                                                "--listen-client-urls",
                                                                urls[i].first,
                                                                "--advertise-client-urls",
                                                                urls[i].first,
                                                                "--listen-peer-urls",
                                                                urls[i].second,
                                                                "--initial-advertise-peer-urls",
                                                                urls[i].second,
                                                                "--initial-cluster",
                                                                initial,
                                                                "--initial-cluster-state",
                                                                "new",
                                                                "--max-txn-ops",
                                                                "1024",
                                                                "--log-level",
                                                                "error"}));
    }
  }
  // True once the cluster takes a write (it has a raft leader).
  bool WaitReady() {
    EtcdClient probe({endpoints_, std::chrono::milliseconds(500)});
    for (int i = 0; i < 200; ++i) {
      if (probe.Put("/cluster/ready", "1").ok()) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return false;
  }
  const std::vector<std::string>& endpoints() const { return endpoints_; }
  // SIGSTOP silences member i (its connections stay open); SIGCONT brings it back.
  void Signal(std::size_t i, int sig) { members_.at(i)->Signal(sig); }

 private:
  std::vector<std::string> endpoints_;
  std::vector<std::unique_ptr<Subprocess>> members_;
};

}  // namespace icewarden::testing
