// dns.rfc2136's readiness preflight against a fake DNS server (a few lines on a loopback UDP
// socket): what it sends is an UPDATE with one prerequisite and an empty update section, and a
// server refusing the key (REFUSED, or NOTAUTH with the TSIG error BADSIG) is a reason naming
// the server, the key and the zone. The same against a real BIND 9 is in
// tests/dns/dns_readiness_test.cpp.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "actions/action_kinds.h"
#include "actions/preflight.h"
#include "tests/unit/actions/action_test_support.h"

namespace icewarden::testing {
namespace {

using namespace std::chrono_literals;
using ::testing::ElementsAre;
using json = nlohmann::json;

// Answers every UPDATE by echoing it with QR set and the chosen RCODE; with `tsig_error`,
// the echoed TSIG record's error field is set too (the request's TSIG has no "other data",
// so its error field is the message's 4th- and 3rd-last bytes). Records the section counts.
class RefusingDnsServer {
 public:
  RefusingDnsServer(int rcode, int tsig_error) : rcode_(rcode), tsig_error_(tsig_error) {
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
  ~RefusingDnsServer() {
    stop_ = true;
    thread_.join();
    close(fd_);
  }
  std::string server() const { return "127.0.0.1:" + std::to_string(port_); }
  int updates() const { return updates_; }
  int prerequisites() const { return prerequisites_; }
  int changes() const { return changes_; }

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
      if (n < 12 || ((buf[2] >> 3) & 0x0f) != 5) continue;  // UPDATEs only
      ++updates_;
      prerequisites_ = buf[6] << 8 | buf[7];  // PRCOUNT
      changes_ = buf[8] << 8 | buf[9];        // UPCOUNT
      buf[2] |= 0x80;
      buf[3] = static_cast<unsigned char>((buf[3] & 0xf0) | rcode_);
      if (tsig_error_ != 0) {
        buf[n - 4] = static_cast<unsigned char>(tsig_error_ >> 8);
        buf[n - 3] = static_cast<unsigned char>(tsig_error_ & 0xff);
      }
      sendto(fd_, buf, static_cast<size_t>(n), 0, reinterpret_cast<sockaddr*>(&from), from_len);
    }
  }

  int rcode_, tsig_error_;
  int fd_ = -1;
  uint16_t port_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<int> updates_{0}, prerequisites_{-1}, changes_{-1};
  std::thread thread_;
};

std::vector<std::string> Preflight(const std::string& server) {
  ActionRegistry registry;
  EXPECT_TRUE(registerDnsActions(registry, TestActionEnv()).ok());
  const ActionPreflight* preflight = PreflightOf(*registry.Find("dns.rfc2136"));
  EXPECT_NE(preflight, nullptr);
  if (preflight == nullptr) return {"no preflight"};
  ActionContext ctx;
  ctx.deadline = std::chrono::steady_clock::now() + 3s;
  json params = {
      {"server", server},
      {"zone", "lab.test"},
      {"tsig_key_name", "icewarden"},
      {"tsig_secret", "aWNld2FyZGVuLXRlc3Qta2V5LTAxMjM0NTY3ODlhYmM="},
      {"records",
       json::array({{{"name", "writer"}, {"type", "CNAME"}, {"value", "catalog-b.lab.test."}}})}};
  return preflight->Preflight(params, ctx);
}

TEST(DnsPreflight, SendsOnlyAPrerequisiteAndNamesARefusedKey) {
  RefusingDnsServer dns(/*REFUSED*/ 5, 0);
  EXPECT_THAT(Preflight(dns.server()),
              ElementsAre("DNS server " + dns.server() +
                          " refuses updates of zone lab.test. signed with TSIG key icewarden: "
                          "REFUSED"));
  EXPECT_EQ(dns.updates(), 1);
  EXPECT_EQ(dns.prerequisites(), 1) << "the zone's apex is in use";
  EXPECT_EQ(dns.changes(), 0) << "nothing to apply, whatever the step's records";
}

TEST(DnsPreflight, ABadSignatureIsTheTsigError) {
  RefusingDnsServer dns(/*NOTAUTH*/ 9, /*BADSIG*/ 16);
  EXPECT_THAT(Preflight(dns.server()),
              ElementsAre("DNS server " + dns.server() +
                          " does not accept TSIG key icewarden (hmac-sha256) for zone lab.test.: "
                          "NOTAUTH (TSIG BADSIG)"));
}

}  // namespace
}  // namespace icewarden::testing
