// BindServer: BIND 9 (`named`) on 127.0.0.1:<free port>, serving one primary zone (lab.test
// unless told otherwise) from a temporary folder, open to RFC 2136 updates signed with any of
// its TSIG keys (by default two: hmac-sha256 and hmac-sha512). Started and stopped by the
// test that owns it.
#pragma once

#include <gtest/gtest.h>

#include <csignal>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/fakes/subprocess.h"
#include "tests/fakes/test_paths.h"
#include "tests/integration/actions/loopback_ports.h"

namespace icewarden::testing {

inline constexpr const char* kNamedBinary = "/usr/sbin/named";
inline constexpr const char* kDigBinary = "/usr/bin/dig";

struct BindKey {
  std::string name, algorithm, secret;
};
inline const BindKey kKey256{"icewarden-256", "hmac-sha256",
                             "aWNld2FyZGVuLXRlc3Qta2V5LTAxMjM0NTY3ODlhYmM="};
inline const BindKey kKey512{
    "icewarden-512", "hmac-sha512",
    "aWNld2FyZGVuLXRlc3Qta2V5LTUxMi0wMTIzNDU2Nzg5YWJjZGVmZ2hpamtsbW5vcHFyc3R1dnd4eXowMTIzNA=="};

struct BindZone {
  std::string name = "lab.test";  // without the trailing dot
  std::string records;            // appended to the zone file after the SOA and NS records
  std::vector<BindKey> keys = {kKey256, kKey512};  // each may update the zone
};

class BindServer {
 public:
  // `zone_records` are appended to lab.test's zone file after the SOA and NS records.
  explicit BindServer(const std::string& zone_records)
      : BindServer(BindZone{"lab.test", zone_records}) {}

  explicit BindServer(const BindZone& zone) : zone_(zone.name) {
    dir_ = MakeTempDir("icewarden-bind");
    port_ = FreeTcpUdpPort();
    const std::string file = dir_ + "/" + zone_ + ".zone";
    std::ofstream(file) << "$TTL 60\n"
                        << "@  IN SOA ns." << zone_ << ". admin." << zone_ << ". 1 60 60 600 60\n"
                        << "@  IN NS  ns." << zone_ << ".\n"
                        << "ns IN A   127.0.0.1\n"
                        << zone.records;
    std::ofstream conf(dir_ + "/named.conf");
    std::string updaters;
    for (const BindKey& k : zone.keys) {
      conf << "key \"" << k.name << "\" { algorithm " << k.algorithm << "; secret \"" << k.secret
           << "\"; };\n";
      updaters += "key \"" + k.name + "\"; ";
    }
    conf << "options {\n"
         << "  directory \"" << dir_ << "\";\n"
         << "  pid-file \"" << dir_ << "/named.pid\";\n"
         << "  session-keyfile \"" << dir_ << "/session.key\";\n"
         << "  managed-keys-directory \"" << dir_ << "\";\n"
         << "  listen-on port " << port_ << " { 127.0.0.1; };\n"
         << "  listen-on-v6 { none; };\n"
         << "  recursion no;\n"
         << "  allow-query { any; };\n"
         << "  dnssec-validation no;\n"
         << "};\n"
         << "controls { };\n"
         << "zone \"" << zone_ << "\" {\n"
         << "  type primary;\n"
         << "  file \"" << file << "\";\n"
         << "  journal \"" << file << ".jnl\";\n"
         << "  allow-update { " << updaters << "};\n"
         << "};\n";
    conf.close();
    process_.emplace(
        std::vector<std::string>{kNamedBinary, "-g", "-n", "1", "-c", dir_ + "/named.conf"});
  }

  ~BindServer() {
    using namespace std::chrono_literals;
    if (process_) {
      process_->Signal(SIGTERM);
      if (!process_->Wait(5s)) process_->Signal(SIGKILL);
    }
  }

  // Polls with dig until the zone's SOA answers.
  bool WaitUntilServing(std::chrono::milliseconds limit) {
    using namespace std::chrono_literals;
    const auto stop = std::chrono::steady_clock::now() + limit;
    while (std::chrono::steady_clock::now() < stop) {
      auto r = RunCommand({kDigBinary, "@127.0.0.1", "-p", std::to_string(port_), zone_, "SOA",
                           "+short", "+time=1", "+tries=1"},
                          {}, 3s);
      if (r.exit_code == 0 && r.out.find("ns." + zone_ + ".") != std::string::npos) return true;
      std::this_thread::sleep_for(100ms);
    }
    return false;
  }

  // What `dig +short NAME TYPE` answers, one value a line (e.g. a CNAME's target with its
  // trailing dot); empty when there is no such record or named did not answer.
  // The answer's values, one a line. dig's own ";;" lines are not values: a stray datagram
  // on its ephemeral port (";; Warning: query response not set", seen with tests running in
  // parallel) spoils that query, so it is asked again, up to three times.
  std::vector<std::string> Dig(const std::string& name, const std::string& type) const {
    using namespace std::chrono_literals;
    std::vector<std::string> values;
    for (int attempt = 0; attempt < 3; ++attempt) {
      auto r = RunCommand({kDigBinary, "@127.0.0.1", "-p", std::to_string(port_), name, type,
                           "+short", "+time=1", "+tries=2"},
                          {}, 5s);
      values.clear();
      if (r.exit_code != 0) return values;
      bool spoiled = false;
      std::istringstream lines(r.out);
      for (std::string line; std::getline(lines, line);) {
        if (line.rfind(";;", 0) == 0) {
          spoiled = true;
        } else if (!line.empty()) {
          values.push_back(line);
        }
      }
      if (!spoiled || !values.empty()) return values;
    }
    return values;
  }

  uint16_t port() const { return port_; }
  std::string server() const { return "127.0.0.1:" + std::to_string(port_); }
  const std::string& dir() const { return dir_; }

 private:
  std::string zone_;
  std::string dir_;
  uint16_t port_ = 0;
  std::optional<Subprocess> process_;
};

}  // namespace icewarden::testing
