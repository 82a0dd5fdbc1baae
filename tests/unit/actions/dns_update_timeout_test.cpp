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

#include <algorithm>
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

// Answers every UDP UPDATE with the TC bit set (its answer "did not fit") and counts the
// UPDATEs that then arrive over TCP on the same port, closing those connections unanswered.
class TruncatingDnsServer {
 public:
  TruncatingDnsServer() {
    for (int tries = 0; tries < 20 && tcp_ < 0; ++tries) {
      if (udp_ >= 0) close(udp_);
      udp_ = socket(AF_INET, SOCK_DGRAM, 0);
      sockaddr_in addr{};
      addr.sin_family = AF_INET;
      addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
      socklen_t len = sizeof addr;
      if (bind(udp_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) continue;
      getsockname(udp_, reinterpret_cast<sockaddr*>(&addr), &len);
      int tcp = socket(AF_INET, SOCK_STREAM, 0);
      if (bind(tcp, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 && listen(tcp, 4) == 0) {
        tcp_ = tcp;
        port_ = ntohs(addr.sin_port);
      } else {
        close(tcp);
      }
    }
    EXPECT_GE(tcp_, 0) << "no port free for both UDP and TCP";
    thread_ = std::thread([this] { Serve(); });
  }
  ~TruncatingDnsServer() {
    stop_ = true;
    thread_.join();
    close(udp_);
    close(tcp_);
  }
  uint16_t port() const { return port_; }
  int udp_updates() const { return udp_updates_; }
  int tcp_updates() const { return tcp_updates_; }

 private:
  void Serve() {
    while (!stop_) {
      pollfd p[2] = {{udp_, POLLIN, 0}, {tcp_, POLLIN, 0}};
      if (poll(p, 2, 20) <= 0) continue;
      unsigned char buf[4096];
      if (p[0].revents & POLLIN) {
        sockaddr_in from{};
        socklen_t from_len = sizeof from;
        const ssize_t n =
            recvfrom(udp_, buf, sizeof buf, 0, reinterpret_cast<sockaddr*>(&from), &from_len);
        if (n >= 12 && ((buf[2] >> 3) & 0x0f) == 5) {
          ++udp_updates_;
          buf[2] |= 0x80 | 0x02;            // QR and TC
          std::fill(buf + 4, buf + 12, 0);  // a header alone: every section empty
          sendto(udp_, buf, 12, 0, reinterpret_cast<sockaddr*>(&from), from_len);
        }
      }
      if (p[1].revents & POLLIN) {
        int conn = accept(tcp_, nullptr, nullptr);
        if (conn < 0) continue;
        pollfd c{conn, POLLIN, 0};
        // A 2-byte length, then the message.
        if (poll(&c, 1, 1000) > 0 && recv(conn, buf, sizeof buf, 0) >= 14 &&
            ((buf[4] >> 3) & 0x0f) == 5)
          ++tcp_updates_;
        close(conn);
      }
    }
  }

  int udp_ = -1;
  int tcp_ = -1;
  uint16_t port_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<int> udp_updates_{0};
  std::atomic<int> tcp_updates_{0};
  std::thread thread_;
};

json WwwUpdate(uint16_t port) {
  return {{"server", "127.0.0.1:" + std::to_string(port)},
          {"zone", "lab.test"},
          {"tsig_key_name", "k"},
          {"tsig_secret", "aWNld2FyZGVuLXRlc3Qta2V5LTAxMjM0NTY3ODlhYmM="},
          {"records",
           json::array({{{"name", "www"}, {"type", "CNAME"}, {"value", "catalog-b.lab.test."}}})}};
}

TEST(DnsRfc2136TransportTest, ATruncatedAnswerOverUdpIsAskedAgainOverTcp) {
  ActionRegistry registry;
  ASSERT_TRUE(registerDnsActions(registry, TestActionEnv()).ok());
  TruncatingDnsServer server;
  ActionContext ctx = TestContext(3s);
  ctx.before_json = R"({"previous":[]})";  // no queries: this server only knows UPDATEs
  auto r = registry.FindMutable("dns.rfc2136")->Run(WwwUpdate(server.port()), ctx);
  EXPECT_EQ(server.udp_updates(), 1);
  EXPECT_EQ(server.tcp_updates(), 1);
  EXPECT_EQ(json::parse(r.detail_json)["transport"], "tcp") << r.detail_json;
  // The TCP connection was closed without an answer: sent, fate unknown.
  EXPECT_EQ(r.outcome, ActionResult::Outcome::kUnknown) << r.reason;
  EXPECT_THAT(r.reason, HasSubstr("over tcp"));
}

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
