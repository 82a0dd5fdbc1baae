// A real etcd member for the tests in tests/etcd/: Debian's /usr/bin/etcd on loopback ports
// picked by the kernel, its data in a fresh temporary folder, killed and removed at the end.
// With EtcdMemberTls it serves clients on https:// (peers stay on http: one member).
#pragma once

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "state/etcd_client.h"
#include "tests/fakes/free_port.h"
#include "tests/fakes/subprocess.h"
#include "tests/fakes/test_pki.h"

namespace icewarden::testing {

// A port nobody listens on right now (the kernel's choice, then released).
inline int FreePort() { return FreeLoopbackPort(); }

// The member's side of TLS to clients.
struct EtcdMemberTls {
  std::string cert_file, key_file;  // its certificate (IP SAN 127.0.0.1) and key
  // --client-cert-auth: clients must present a certificate this CA signed.
  std::string client_ca_file;
};

// Certificates for a TLS member and its client, in `dir`: a CA; the member's, for IP 127.0.0.1,
// with clientAuth as well as serverAuth (with --client-cert-auth, etcd's JSON gateway dials the
// member's own gRPC port with it); the client's without a CN (once auth is enabled, etcd 3.4's
// gateway refuses a client certificate that has one).
struct EtcdTestPki {
  TestCa ca;
  TestLeaf member, client;
};

// A key or certificate file's text (EtcdTlsOptions takes the key as PEM text).
inline std::string ReadTestFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}
inline bool MakeEtcdTestPki(const std::string& dir, EtcdTestPki* out, std::string* error) {
  return MakeTestCa(dir, "etcd-ca", &out->ca, error) &&
         MakeTestLeaf(dir, "member", out->ca, "IP:127.0.0.1", "serverAuth,clientAuth", &out->member,
                      error) &&
         MakeTestLeaf(dir, "icewarden", out->ca, "DNS:icewarden", "clientAuth", &out->client, error,
                      "/O=icewarden");
}

// One etcd member with its data in a fresh directory.
class EtcdMember {
 public:
  // `extra`: more flags for etcd, e.g. {"--max-txn-ops", "1024"}.
  explicit EtcdMember(std::vector<std::string> extra = {}, const EtcdMemberTls* tls = nullptr) {
    dir_ = std::filesystem::temp_directory_path() /
           ("icewarden-etcd-" + std::to_string(::getpid()) + "-" + std::to_string(FreePort()));
    std::filesystem::create_directories(dir_);
    const std::string client =
        std::string(tls ? "https://127.0.0.1:" : "http://127.0.0.1:") + std::to_string(FreePort());
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
    if (tls) {
      argv.insert(argv.end(), {"--cert-file", tls->cert_file, "--key-file", tls->key_file});
      if (!tls->client_ca_file.empty())
        argv.insert(argv.end(), {"--client-cert-auth", "--trusted-ca-file", tls->client_ca_file});
    }
    argv.insert(argv.end(), extra.begin(), extra.end());
    argv_ = argv;
    process_ = std::make_unique<Subprocess>(std::move(argv));
  }
  ~EtcdMember() {
    process_.reset();  // SIGKILL and reap
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  const std::string& url() const { return url_; }
  // SIGKILL (and reap), then the same member again on its ports and data, as a crash and a
  // restart by its supervisor would.
  void Kill() { process_.reset(); }
  void Restart() {
    process_.reset();
    process_ = std::make_unique<Subprocess>(argv_);
  }
  // SIGSTOP makes the member a silent one: connections open, requests never answered.
  void Signal(int sig) { process_->Signal(sig); }
  // True once the member answers a read (over TLS with `tls`).
  bool WaitReady(const EtcdTlsOptions& tls = {}) {
    EtcdClient probe({{url_}, std::chrono::milliseconds(500), tls});
    for (int i = 0; i < 100; ++i) {
      if (probe.Range("ready?").ok()) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return false;
  }

 private:
  std::filesystem::path dir_;
  std::string url_;
  std::vector<std::string> argv_;
  std::unique_ptr<Subprocess> process_;
};

}  // namespace icewarden::testing
