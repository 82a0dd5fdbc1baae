// Processes the benchmarks start so that their CPU is not the benchmark's own: the lab
// (build/examples/lab/icewarden-lab) and BIND 9 (/usr/sbin/named), each on 127.0.0.1 with
// ephemeral ports, in a folder of the caller's. Each is stopped (SIGTERM, then reaped) by its
// destructor. CPU of a child is utime + stime from /proc/PID/stat.
// Thread-safety: one thread per object.
#pragma once

#include <fcntl.h>
#include <httplib.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "actions/dns_client.h"
#include "tests/integration/actions/loopback_ports.h"

#ifndef ICEWARDEN_LAB_BINARY
#define ICEWARDEN_LAB_BINARY "build/examples/lab/icewarden-lab"
#endif

namespace icewarden::bench {

// User + system CPU seconds of this process, all its threads (system only: the kernel's part).
inline double SelfCpuSeconds(bool system_only = false) {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  auto s = [](const timeval& t) { return t.tv_sec + t.tv_usec / 1e6; };
  return system_only ? s(u.ru_stime) : s(u.ru_utime) + s(u.ru_stime);
}

// utime + stime of a live process (all its threads), in seconds; -1 when unreadable.
inline double ProcessCpuSeconds(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto close_paren = stat.rfind(')');
  if (close_paren == std::string::npos) return -1;
  std::istringstream fields(stat.substr(close_paren + 1));
  std::vector<std::string> f;
  for (std::string s; fields >> s;) f.push_back(s);
  if (f.size() < 13) return -1;
  return (std::stod(f[11]) + std::stod(f[12])) / static_cast<double>(sysconf(_SC_CLK_TCK));
}

// A child process: stdout on a pipe (read line by line), stderr to a file.
class ChildProcess {
 public:
  ChildProcess() = default;
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;
  ~ChildProcess() { Stop(); }

  bool Start(const std::vector<std::string>& args, const std::string& stderr_path) {
    int out[2];
    if (pipe2(out, O_CLOEXEC) != 0) return false;
    pid_ = fork();
    if (pid_ < 0) return false;
    if (pid_ == 0) {
      dup2(out[1], STDOUT_FILENO);
      int err = open(stderr_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      if (err >= 0) dup2(err, STDERR_FILENO);
      int null = open("/dev/null", O_RDONLY);
      if (null >= 0) dup2(null, STDIN_FILENO);
      std::vector<char*> argv;
      for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
      argv.push_back(nullptr);
      execv(argv[0], argv.data());
      std::fprintf(stderr, "cannot run %s\n", argv[0]);
      _exit(127);
    }
    close(out[1]);
    out_ = out[0];
    return true;
  }

  // The next stdout line without its newline; nullopt at end of file or after `timeout`.
  std::optional<std::string> ReadLine(std::chrono::milliseconds timeout) {
    const auto stop = std::chrono::steady_clock::now() + timeout;
    for (;;) {
      if (auto nl = buffer_.find('\n'); nl != std::string::npos) {
        std::string line = buffer_.substr(0, nl);
        buffer_.erase(0, nl + 1);
        return line;
      }
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          stop - std::chrono::steady_clock::now());
      if (left.count() <= 0 || out_ < 0) return std::nullopt;
      pollfd p{out_, POLLIN, 0};
      if (poll(&p, 1, static_cast<int>(std::min<long long>(left.count(), 1000))) <= 0) continue;
      char buf[4096];
      ssize_t got = read(out_, buf, sizeof buf);
      if (got <= 0) return std::nullopt;
      buffer_.append(buf, static_cast<size_t>(got));
    }
  }

  pid_t pid() const { return pid_; }
  double CpuSeconds() const { return pid_ > 0 ? ProcessCpuSeconds(pid_) : -1; }

  void Stop() {
    if (pid_ <= 0) return;
    kill(pid_, SIGTERM);
    int status = 0;
    for (int i = 0; i < 100; ++i) {
      if (waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, &status, 0);
      pid_ = -1;
    }
    if (out_ >= 0) close(out_);
    out_ = -1;
  }

 private:
  pid_t pid_ = -1;
  int out_ = -1;
  std::string buffer_;
};

// The two-region lab as its own process: us-east-1 owns every table, eu-central-1 holds
// replicas, no workload, replication without lag.
class LabProcess {
 public:
  struct Options {
    std::string binary = ICEWARDEN_LAB_BINARY;
    std::string dir;      // DIR/catalogs holds the regions' databases; DIR/lab.log
    int seed_tables = 0;  // in addition to the six workload tables
    int server_threads = 16;
    int replication_lag_ms = 0;
    int workload_interval_ms = 0;  // 0: no workload; else the lab's workload at this interval
  };

  // Empty on success, else why it did not start.
  std::string Start(const Options& o) {
    std::vector<std::string> args = {o.binary,
                                     "--data",
                                     o.dir + "/catalogs",
                                     "--admin",
                                     "127.0.0.1:0",
                                     "--region",
                                     "us-east-1=127.0.0.1:0",
                                     "--region",
                                     "eu-central-1=127.0.0.1:0",
                                     "--default-owner",
                                     "us-east-1",
                                     "--replication-lag-ms",
                                     std::to_string(o.replication_lag_ms),
                                     "--seed-tables",
                                     std::to_string(o.seed_tables),
                                     "--server-threads",
                                     std::to_string(o.server_threads)};
    if (o.workload_interval_ms > 0) {
      args.push_back("--workload-interval-ms");
      args.push_back(std::to_string(o.workload_interval_ms));
    } else {
      args.push_back("--no-workload");
    }
    if (!child_.Start(args, o.dir + "/lab.log")) return "cannot start " + o.binary;
    for (;;) {
      auto line = child_.ReadLine(std::chrono::minutes(30));
      if (!line) return "the lab exited or did not get ready; see " + o.dir + "/lab.log";
      std::istringstream words(*line);
      std::string lab, what, a, b;
      words >> lab >> what >> a >> b;
      if (what == "region") urls_[a] = b;
      if (what == "admin") admin_ = a;
      if (what == "ready") break;
    }
    return "";
  }

  std::string region_url(const std::string& region) const {
    auto it = urls_.find(region);
    return it == urls_.end() ? "" : it->second;
  }
  const std::string& admin_url() const { return admin_; }
  pid_t pid() const { return child_.pid(); }
  double CpuSeconds() const { return child_.CpuSeconds(); }

  // The admin API: the status (0 when it did not answer) and the parsed body.
  std::pair<int, nlohmann::json> Admin(const std::string& method, const std::string& path,
                                       const nlohmann::json& body = nullptr) {
    httplib::Client cli(admin_);
    cli.set_read_timeout(120, 0);
    httplib::Result r = method == "GET" ? cli.Get(path)
                        : method == "DELETE"
                            ? cli.Delete(path)
                            : cli.Post(path, body.is_null() ? "" : body.dump(), "application/json");
    if (!r) return {0, nullptr};
    return {r->status, nlohmann::json::parse(r->body, nullptr, false)};
  }
  nlohmann::json State() { return Admin("GET", "/lab/state").second; }

  void Stop() { child_.Stop(); }

 private:
  ChildProcess child_;
  std::map<std::string, std::string> urls_;
  std::string admin_;
};

// BIND 9 serving the primary zone `zone` from DIR, open to RFC 2136 updates signed with one
// hmac-sha256 TSIG key.
class BindProcess {
 public:
  static constexpr const char* kNamed = "/usr/sbin/named";
  static constexpr const char* kKeyName = "icewarden-bench";
  static constexpr const char* kKeySecret = "aWNld2FyZGVuLWJlbmNoLWtleS0wMTIzNDU2Nzg5YWI=";

  // Empty on success. `records` are appended to the zone file after SOA and NS.
  std::string Start(const std::string& dir, const std::string& zone, const std::string& records) {
    port_ = testing::FreeTcpUdpPort();
    if (port_ == 0) return "no free port";
    std::ofstream(dir + "/zone.db")
        << "$TTL 60\n"
        << "@  IN SOA ns." << zone << ". admin." << zone << ". 1 60 60 600 60\n"
        << "@  IN NS  ns." << zone << ".\n"
        << "ns IN A   127.0.0.1\n"
        << records;
    std::ofstream(dir + "/named.conf")
        << "key \"" << kKeyName << "\" { algorithm hmac-sha256; secret \"" << kKeySecret
        << "\"; };\n"
        << "options {\n  directory \"" << dir << "\";\n  pid-file \"" << dir
        << "/named.pid\";\n  session-keyfile \"" << dir << "/session.key\";\n"
        << "  managed-keys-directory \"" << dir << "\";\n  listen-on port " << port_
        << " { 127.0.0.1; };\n  listen-on-v6 { none; };\n  recursion no;\n"
        << "  allow-query { any; };\n  dnssec-validation no;\n};\ncontrols { };\n"
        << "zone \"" << zone << "\" {\n  type primary;\n  file \"" << dir << "/zone.db\";\n"
        << "  journal \"" << dir << "/zone.db.jnl\";\n  allow-update { key \"" << kKeyName
        << "\"; };\n};\n";
    if (!child_.Start({kNamed, "-g", "-n", "1", "-c", dir + "/named.conf"}, dir + "/named.log"))
      return "cannot start named";
    auto server = ParseDnsServer(this->server(), nullptr);
    const auto stop = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (std::chrono::steady_clock::now() < stop) {
      DnsLookup got = QueryRRset(*server, "ns." + zone + ".", DnsType::kA, std::chrono::seconds(1));
      if (got.ok && !got.rrset.values.empty()) return "";
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return "named did not answer on " + this->server() + "; see " + dir + "/named.log";
  }

  std::string server() const { return "127.0.0.1:" + std::to_string(port_); }
  double CpuSeconds() const { return child_.CpuSeconds(); }
  void Stop() { child_.Stop(); }

 private:
  ChildProcess child_;
  uint16_t port_ = 0;
};

}  // namespace icewarden::bench
