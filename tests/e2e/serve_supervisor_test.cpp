// `icewarden serve` and `icewarden gateway` under a supervisor that speaks systemd's notify
// protocol: a datagram socket of the test's own stands in for systemd's, as $NOTIFY_SOCKET.
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "tests/fakes/subprocess.h"
#include "tests/fakes/test_configs.h"
#include "tests/fakes/test_paths.h"

namespace icewarden {
namespace {

using namespace std::chrono_literals;
using testing::IcewardenBinary;
using testing::Subprocess;

// The supervisor's end: a bound AF_UNIX datagram socket; each datagram is one notification.
class NotifySocket {
 public:
  explicit NotifySocket(const std::string& path) : path_(path) {
    fd_ = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::snprintf(addr.sun_path, sizeof addr.sun_path, "%s", path.c_str());
    bound_ = ::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
  }
  ~NotifySocket() {
    ::close(fd_);
    ::unlink(path_.c_str());
  }
  bool bound() const { return bound_; }

  // The next datagram, or nullopt when none came within `timeout`.
  std::optional<std::string> Next(std::chrono::milliseconds timeout) {
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(timeout.count())) != 1) return std::nullopt;
    char buf[4096];
    const ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
    if (n < 0) return std::nullopt;
    return std::string(buf, static_cast<std::size_t>(n));
  }

  // Reads datagrams until one starts with `prefix`; nullopt when none did within `timeout`.
  std::optional<std::string> WaitFor(const std::string& prefix, std::chrono::milliseconds timeout,
                                     std::vector<std::string>* seen = nullptr) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < deadline) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      auto d = Next(std::max(left, 1ms));
      if (!d) break;
      if (seen != nullptr) seen->push_back(*d);
      if (d->rfind(prefix, 0) == 0) return d;
    }
    return std::nullopt;
  }

 private:
  std::string path_;
  int fd_ = -1;
  bool bound_ = false;
};

class ServeSupervisorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::MakeTempDir("icewarden-notify");
    config_ = dir_ + "/icewarden.yaml";
    std::ofstream(config_) << "api:\n  listen: 127.0.0.1:0\n"
                           << testing::kUnreachableRegionsYaml << R"(gateways:
  - name: gw-east
    listen: 127.0.0.1:0
    region: us-east-1
)";
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string dir_, config_;
};

TEST_F(ServeSupervisorTest, ServeSaysReadyAfterItServesPingsTheWatchdogAndSaysStopping) {
  NotifySocket supervisor(dir_ + "/notify.sock");
  ASSERT_TRUE(supervisor.bound());
  Subprocess serve({IcewardenBinary(), "serve", "--config", config_},
                   {{"NOTIFY_SOCKET", dir_ + "/notify.sock"}, {"WATCHDOG_USEC", "400000"}});
  auto line = serve.ReadLine(30s);
  ASSERT_TRUE(line) << "serve did not start";
  ASSERT_NE(line->find("serving http://"), std::string::npos) << *line;
  // READY=1 comes after the serving line, never before the API answers.
  auto ready = supervisor.WaitFor("READY=1", 10s);
  ASSERT_TRUE(ready) << "no READY=1";
  EXPECT_NE(ready->find("STATUS=serving"), std::string::npos) << *ready;
  // At half of WATCHDOG_USEC: several pings within a second and a half.
  int pings = 0;
  const auto until = std::chrono::steady_clock::now() + 1500ms;
  while (std::chrono::steady_clock::now() < until)
    if (auto d = supervisor.Next(500ms); d && *d == "WATCHDOG=1") ++pings;
  EXPECT_GE(pings, 3);
  serve.Signal(SIGTERM);
  auto stopping = supervisor.WaitFor("STOPPING=1", 10s);
  EXPECT_TRUE(stopping) << "no STOPPING=1 after SIGTERM";
  EXPECT_EQ(serve.Wait(20s), 0);
}

TEST_F(ServeSupervisorTest, AWatchdogMeantForAnotherProcessIsNotPinged) {
  NotifySocket supervisor(dir_ + "/notify.sock");
  ASSERT_TRUE(supervisor.bound());
  // systemd sets WATCHDOG_PID to the main process; a child that inherits the variables (a
  // hook's shell) must not ping in its place.
  Subprocess serve({IcewardenBinary(), "serve", "--config", config_},
                   {{"NOTIFY_SOCKET", dir_ + "/notify.sock"},
                    {"WATCHDOG_USEC", "200000"},
                    {"WATCHDOG_PID", "1"}});
  ASSERT_TRUE(serve.ReadLine(30s));
  ASSERT_TRUE(supervisor.WaitFor("READY=1", 10s));
  std::vector<std::string> seen;
  EXPECT_FALSE(supervisor.WaitFor("WATCHDOG=1", 1s, &seen));
  serve.Signal(SIGTERM);
  EXPECT_EQ(serve.Wait(20s), 0);
}

TEST_F(ServeSupervisorTest, TheGatewaySaysReadyAndStoppingToo) {
  NotifySocket supervisor(dir_ + "/notify.sock");
  ASSERT_TRUE(supervisor.bound());
  // The gateway reads the same store: serve makes it first.
  {
    Subprocess serve({IcewardenBinary(), "serve", "--config", config_});
    ASSERT_TRUE(serve.ReadLine(30s));
    serve.Signal(SIGTERM);
    ASSERT_EQ(serve.Wait(20s), 0);
  }
  Subprocess gateway(
      {IcewardenBinary(), "gateway", "--config", config_, "--state", dir_ + "/state.db"},
      {{"NOTIFY_SOCKET", dir_ + "/notify.sock"}, {"WATCHDOG_USEC", "400000"}});
  auto line = gateway.ReadLine(30s);
  ASSERT_TRUE(line) << "the gateway did not start";
  auto ready = supervisor.WaitFor("READY=1", 10s);
  ASSERT_TRUE(ready);
  EXPECT_NE(ready->find("gateway gw-east"), std::string::npos) << *ready;
  EXPECT_TRUE(supervisor.WaitFor("WATCHDOG=1", 2s));
  gateway.Signal(SIGTERM);
  EXPECT_TRUE(supervisor.WaitFor("STOPPING=1", 10s));
  EXPECT_EQ(gateway.Wait(20s), 0);
}

TEST_F(ServeSupervisorTest, JsonLogsAreOneObjectALineOnStderr) {
  const std::string err_path = dir_ + "/stderr.log";
  // RunCommand keeps stderr; serve stops at once on a state path it cannot open, after
  // logging in the chosen format.
  auto result = testing::RunCommand({IcewardenBinary(), "serve", "--config", config_,
                                     "--log-format", "json", "--state", dir_ + "/no/such/dir/x.db"},
                                    {}, 30s);
  EXPECT_NE(result.exit_code, 0);
  ASSERT_FALSE(result.err.empty());
  std::istringstream lines(result.err);
  std::string l;
  int objects = 0;
  while (std::getline(lines, l)) {
    auto j = nlohmann::json::parse(l, nullptr, false);
    ASSERT_FALSE(j.is_discarded()) << "not JSON: " << l;
    EXPECT_TRUE(j.contains("ts") && j.contains("level") && j.contains("msg")) << l;
    ++objects;
  }
  EXPECT_GE(objects, 1);
  auto bad = testing::RunCommand(
      {IcewardenBinary(), "serve", "--config", config_, "--log-format", "xml"}, {}, 30s);
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("--log-format"), std::string::npos) << bad.err;
}

}  // namespace
}  // namespace icewarden
