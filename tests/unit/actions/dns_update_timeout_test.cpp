// dns.rfc2136 when the server reads the records but never answers the UPDATE: the update
// may have been applied, so the step is unknown, not failed, and it returns by its
// deadline. The server is a few lines on a loopback UDP socket that answers every QUERY
// with NXDOMAIN and drops every UPDATE.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "tests/unit/actions/action_test_support.h"

namespace icewarden::testing {
namespace {

using namespace std::chrono_literals;
using ::testing::HasSubstr;
using json = nlohmann::json;

class UpdateDroppingDnsServer {
 public:
  UpdateDroppingDnsServer() {
    fd_ = socket(AF_INET, SOCK_DGRAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof addr;
    EXPECT_EQ(bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
    getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
    thread_ = std::thread([this] { Serve(); });
  }
  ~UpdateDroppingDnsServer() {
    stop_ = true;
    thread_.join();
    close(fd_);
  }
  uint16_t port() const { return port_; }
  int updates() const { return updates_; }

 private:
  void Serve() {
    while (!stop_) {
      pollfd p{fd_, POLLIN, 0};
      if (poll(&p, 1, 20) <= 0) continue;
      unsigned char buf[4096];
      sockaddr_in from{};
      socklen_t from_len = sizeof from;
      const ssize_t n =
          recvfrom(fd_, buf, sizeof buf, 0, reinterpret_cast<sockaddr*>(&from), &from_len);
      if (n < 12) continue;
      const int opcode = (buf[2] >> 3) & 0x0f;
      if (opcode == 5) {  // UPDATE: say nothing
        ++updates_;
        continue;
      }
      buf[2] |= 0x80;                                            // QR: a response
      buf[3] = static_cast<unsigned char>((buf[3] & 0xf0) | 3);  // NXDOMAIN
      sendto(fd_, buf, static_cast<size_t>(n), 0, reinterpret_cast<sockaddr*>(&from), from_len);
    }
  }

  int fd_ = -1;
  uint16_t port_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<int> updates_{0};
  std::thread thread_;
};

TEST(DnsRfc2136TimeoutTest, NoAnswerToTheUpdateIsUnknownAndReturnsByTheDeadline) {
  ActionRegistry registry;
  ASSERT_TRUE(registerDnsActions(registry, TestActionEnv()).ok());
  UpdateDroppingDnsServer server;
  const json params = {
      {"server", "127.0.0.1:" + std::to_string(server.port())},
      {"zone", "lab.test"},
      {"tsig_key_name", "k"},
      {"tsig_secret", "aWNld2FyZGVuLXRlc3Qta2V5LTAxMjM0NTY3ODlhYmM="},
      {"records",
       json::array({{{"name", "www"}, {"type", "CNAME"}, {"value", "catalog-b.lab.test."}}})}};
  const auto started = std::chrono::steady_clock::now();
  auto r = registry.FindMutable("dns.rfc2136")->Run(params, TestContext(600ms));
  EXPECT_LT(std::chrono::steady_clock::now() - started, 1500ms);
  EXPECT_EQ(r.outcome, ActionResult::Outcome::kUnknown) << r.reason;
  EXPECT_THAT(r.reason, HasSubstr("sent, but no answer from 127.0.0.1:"));
  EXPECT_EQ(server.updates(), 1);
  // The records read before sending are kept, so a person can restore them by hand.
  EXPECT_EQ(json::parse(r.detail_json)["previous"][0]["values"], json::array());
}

}  // namespace
}  // namespace icewarden::testing
