// A real etcd member for the tests in tests/etcd/: Debian's /usr/bin/etcd on loopback ports
// picked by the kernel, its data in a fresh temporary folder, killed and removed at the end.
#pragma once

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "state/etcd_client.h"
#include "tests/fakes/subprocess.h"

namespace icewarden::testing {

// A port nobody listens on right now (the kernel's choice, then released).
inline int FreePort() {
  int s = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(s, reinterpret_cast<sockaddr*>(&a), sizeof(a));
  socklen_t len = sizeof(a);
  ::getsockname(s, reinterpret_cast<sockaddr*>(&a), &len);
  ::close(s);
  return ntohs(a.sin_port);
}

// One etcd member with its data in a fresh directory.
class EtcdMember {
 public:
  // `extra`: more flags for etcd, e.g. {"--max-txn-ops", "1024"}.
  explicit EtcdMember(std::vector<std::string> extra = {}) {
    dir_ = std::filesystem::temp_directory_path() /
           ("icewarden-etcd-" + std::to_string(::getpid()) + "-" + std::to_string(FreePort()));
    std::filesystem::create_directories(dir_);
    const std::string client = "http://127.0.0.1:" + std::to_string(FreePort());
    const std::string peer = "http://127.0.0.1:" + std::to_string(FreePort());
    url_ = client;
    std::vector<std::string> argv{"/usr/bin/etcd",
                                  "--name",
                                  "m1",
                                  "--data-dir",
                                  (dir_ / "data").string(),
                                  "--listen-client-urls",
                                  client,
                                  "--advertise-client-urls",
                                  client,
                                  "--listen-peer-urls",
                                  peer,
                                  "--initial-advertise-peer-urls",
                                  peer,
                                  "--initial-cluster",
                                  "m1=" + peer,
                                  "--log-level",
                                  "error"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    process_ = std::make_unique<Subprocess>(std::move(argv));
  }
  ~EtcdMember() {
    process_.reset();  // SIGKILL and reap
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  const std::string& url() const { return url_; }
  // SIGSTOP makes the member a silent one: connections open, requests never answered.
  void Signal(int sig) { process_->Signal(sig); }
  // True once the member answers a read.
  bool WaitReady() {
    EtcdClient probe({{url_}, std::chrono::milliseconds(500)});
    for (int i = 0; i < 100; ++i) {
      if (probe.Range("ready?").ok()) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return false;
  }

 private:
  std::filesystem::path dir_;
  std::string url_;
  std::unique_ptr<Subprocess> process_;
};

}  // namespace icewarden::testing
