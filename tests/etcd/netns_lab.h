// NetnsLab: a private network of Linux network namespaces, for partition tests with real
// processes (issue 12, item 5). Loopback cannot be partitioned; namespaces can, and each
// process sees a network of its own exactly as it would on separate machines.
//
//          hub namespace: bridge br0 (no address: nobody lives in the hub)
//          |  port v-n1       |  port v-n2       |  port v-op ...
//   host n1: eth0 10.77.0.2   host n2: eth0 10.77.0.3   host op: eth0 10.77.0.4
//
// Every host is a namespace with one veth pair into the hub's bridge, `lo` up, and one or more
// addresses on 10.77.0.0/24. The subnet is the same in every lab: nothing of it touches the
// root namespace, so labs of concurrent test processes never meet. Inside a host any port is
// free, so processes listen on fixed ports.
//
// Two ways to partition, because this machine has neither tc netem nor iptables:
//   - Isolate(host): the host's port on the bridge goes down. The host's eth0 loses carrier
//     and packets either way are dropped without a word: peers see timeouts, never a refusal,
//     which is the nasty case of a real partition (a cable pulled, a switch dead).
//   - Cut(host, address): a blackhole route to one address in the host's namespace. Nothing
//     the host sends reaches it, replies included, so no TCP connection between the two gets
//     up in either direction, while the host's other peers (another address of the same
//     host, say) are untouched. A local sender gets EINVAL at once (the kernel's answer for a
//     blackhole), so a probe fails fast; that is still "no answer at all".
// Heal() undoes either.
//
// Start processes in a host with Argv(host, argv) (`ip netns exec NS argv...`, which execs
// argv, so the pid is the program's); run the test's own clients there with InHost(host, fn)
// (a thread that setns()es into the host's namespace; sockets it opens live there).
//
// Names are "iwnet-<pid>-<host>", unique per test process. The destructor kills what still
// runs in the lab's namespaces and deletes them; the constructor first does the same for labs
// of test processes that died (SIGKILL, a crash) without cleaning up.
//
// Thread-safety: one test thread builds, cuts and heals; InHost may run on any thread.
#pragma once

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>
#include <functional>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/fakes/subprocess.h"

namespace icewarden::testing {

inline constexpr const char* kIpBinary = "/usr/sbin/ip";
inline constexpr const char* kNetnsPrefix = "iwnet-";

class NetnsLab {
 public:
  NetnsLab() : prefix_(std::string(kNetnsPrefix) + std::to_string(::getpid()) + "-") {
    RemoveStale();
  }
  ~NetnsLab() { Remove(); }
  NetnsLab(const NetnsLab&) = delete;
  NetnsLab& operator=(const NetnsLab&) = delete;

  // Why this machine cannot run namespace tests ("" when it can): not root, no `ip`, or
  // `ip netns add` refused. Creates the hub.
  std::string Up() {
    if (::geteuid() != 0) return "network-namespace tests need root (ip netns add)";
    if (!std::filesystem::exists(kIpBinary))
      return std::string(kIpBinary) + " is missing (scripts/setup.sh installs iproute2)";
    hub_ = prefix_ + "hub";
    if (std::string e = Ip({"netns", "add", hub_}); !e.empty()) {
      hub_.clear();
      return "ip netns add failed: " + e;
    }
    namespaces_.push_back(hub_);
    // No STP and no forwarding delay: a port that comes back up forwards at once.
    for (const auto& step :
         std::vector<std::vector<std::string>>{{"-n", hub_, "link", "add", "br0", "type", "bridge",
                                                "stp_state", "0", "forward_delay", "0"},
                                               {"-n", hub_, "link", "set", "br0", "up"}})
      if (std::string e = Ip(step); !e.empty()) return e;
    return "";
  }

  // A host with `addresses` addresses on the lab's subnet; "" or what failed. The first
  // address is address(name).
  std::string AddHost(const std::string& name, int addresses = 1) {
    const std::string ns = Namespace(name);
    if (std::string e = Ip({"netns", "add", ns}); !e.empty()) return e;
    namespaces_.push_back(ns);
    const std::string port = "v-" + name;  // in the hub's namespace: at most 15 characters
    std::vector<std::vector<std::string>> steps{
        {"-n", hub_, "link", "add", port, "type", "veth", "peer", "name", "eth0", "netns", ns},
        {"-n", hub_, "link", "set", port, "master", "br0", "up"},
        {"-n", ns, "link", "set", "lo", "up"},
        {"-n", ns, "link", "set", "eth0", "up"}};
    for (int i = 0; i < addresses; ++i) {
      const std::string a = "10.77.0." + std::to_string(next_octet_++);
      addresses_[name].push_back(a);
      steps.push_back({"-n", ns, "addr", "add", a + "/24", "dev", "eth0"});
    }
    for (const auto& step : steps)
      if (std::string e = Ip(step); !e.empty()) return e;
    return "";
  }

  const std::string& address(const std::string& host, int i = 0) const {
    return addresses_.at(host).at(static_cast<std::size_t>(i));
  }
  std::string Namespace(const std::string& host) const { return prefix_ + host; }

  // `argv` run in `host`'s namespace.
  std::vector<std::string> Argv(const std::string& host, std::vector<std::string> argv) const {
    argv.insert(argv.begin(), {kIpBinary, "netns", "exec", Namespace(host)});
    return argv;
  }

  // Runs `fn` on a thread inside `host`'s namespace and waits for it. A namespace that cannot
  // be entered is a broken lab: it throws.
  void InHost(const std::string& host, const std::function<void()>& fn) const {
    std::exception_ptr failed;
    const std::string path = "/run/netns/" + Namespace(host);
    std::thread inside([&] {
      try {
        const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
        if (fd < 0 || ::setns(fd, CLONE_NEWNET) != 0)
          throw std::runtime_error("cannot enter " + path + ": " + std::strerror(errno));
        ::close(fd);
        fn();
      } catch (...) {
        failed = std::current_exception();
      }
    });
    inside.join();
    if (failed) std::rethrow_exception(failed);
  }

  // The whole host off the network, silently (see the header comment); "" or what failed.
  std::string Isolate(const std::string& host) {
    return Ip({"-n", hub_, "link", "set", "v-" + host, "down"});
  }
  // `host` and `address` no longer talk (see the header comment).
  std::string Cut(const std::string& host, const std::string& address) {
    std::string e = Ip({"-n", Namespace(host), "route", "add", "blackhole", address + "/32"});
    if (e.empty()) cuts_[host].push_back(address);
    return e;
  }
  // Undoes Isolate(host) and every Cut(host, ...).
  std::string Heal(const std::string& host) {
    std::string e = Ip({"-n", hub_, "link", "set", "v-" + host, "up"});
    for (const std::string& address : cuts_[host])
      e += Ip({"-n", Namespace(host), "route", "del", "blackhole", address + "/32"});
    cuts_[host].clear();
    return e;
  }

 private:
  // `ip ARGS...`; "" or the command and what it said.
  static std::string Ip(const std::vector<std::string>& args) {
    std::vector<std::string> argv{kIpBinary};
    argv.insert(argv.end(), args.begin(), args.end());
    CommandResult r = RunCommand(argv, {}, std::chrono::seconds(10));
    if (r.exit_code == 0) return "";
    std::ostringstream what;
    for (const auto& a : argv) what << a << ' ';
    what << "exited " << r.exit_code << ": " << r.err;
    return what.str();
  }

  // Kills what runs in `ns` (processes this lab's tests started) and deletes it.
  static void Delete(const std::string& ns) {
    CommandResult pids = RunCommand({kIpBinary, "netns", "pids", ns}, {}, std::chrono::seconds(10));
    std::istringstream in(pids.out);
    for (long pid; in >> pid;)
      if (pid > 1) ::kill(static_cast<pid_t>(pid), SIGKILL);
    RunCommand({kIpBinary, "netns", "del", ns}, {}, std::chrono::seconds(10));
  }

  void Remove() {
    // Hosts first: deleting a host's namespace deletes its veth pair.
    for (auto it = namespaces_.rbegin(); it != namespaces_.rend(); ++it) Delete(*it);
    namespaces_.clear();
  }

  // Labs left by test processes that are gone: "iwnet-<pid>-..." whose pid does not run.
  static void RemoveStale() {
    std::error_code ec;
    std::vector<std::string> stale;  // collected first: Delete changes the folder
    for (const auto& entry : std::filesystem::directory_iterator("/run/netns", ec)) {
      const std::string name = entry.path().filename().string();
      if (name.rfind(kNetnsPrefix, 0) != 0) continue;
      const long pid = std::strtol(name.c_str() + std::strlen(kNetnsPrefix), nullptr, 10);
      if (pid > 0 && ::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH)
        stale.push_back(name);
    }
    for (const std::string& name : stale) Delete(name);
  }

  std::string prefix_;
  std::string hub_;
  std::vector<std::string> namespaces_;  // in creation order
  std::map<std::string, std::vector<std::string>> addresses_;
  std::map<std::string, std::vector<std::string>> cuts_;  // host -> addresses cut from it
  int next_octet_ = 2;
};

// The test's reaction to a machine that cannot run namespace tests: a skip that says why, or
// a failure in CI (CI=true), where these tests must run.
inline bool NetnsRequiredHere() {
  const char* ci = std::getenv("CI");
  return ci != nullptr && std::string(ci) == "true";
}

}  // namespace icewarden::testing
