// ProbeResult::answered and ::unparsed for every probe kind, over real sockets on loopback
// (the real BeastTransport, Asio timers and TCP connector): only silence may read as
// silence (DESIGN.md rule 7). Silence: a refused port, a server that accepts and never
// answers, one that closes before a byte. Answers: 401, 503, a body that is not JSON,
// bytes that are not HTTP.
#include <utility>  // before Asio (Boost 1.74 + C++20)

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <boost/asio/io_context.hpp>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "health/asio_timers.h"
#include "health/beast_transport.h"
#include "health/catalog_client.h"
#include "health/probe_kinds.h"
#include "tests/fakes/fake_clock.h"
#include "tests/fakes/recording_http_server.h"

namespace icewarden::testing {
namespace {

using namespace std::chrono_literals;

// A TCP (or UDP) socket on 127.0.0.1:<ephemeral>. TCP: every connection accepted is read
// from and then, by `behaviour`, held open without a word, closed at once, or answered
// with bytes that are not HTTP.
class RawServer {
 public:
  enum class Behaviour { kHoldSilently, kCloseAtOnce, kAnswerGarbage, kUdpNeverAnswer };

  explicit RawServer(Behaviour b) : behaviour_(b) {
    const bool udp = b == Behaviour::kUdpNeverAnswer;
    fd_ = ::socket(AF_INET, udp ? SOCK_DGRAM : SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = 0;
    EXPECT_EQ(::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
    socklen_t len = sizeof addr;
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
    if (udp) return;  // bound, never read: queries go unanswered
    EXPECT_EQ(::listen(fd_, 16), 0);
    thread_ = std::thread([this] { Serve(); });
  }
  ~RawServer() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
    for (int c : held_) ::close(c);
    ::close(fd_);
  }
  std::uint16_t port() const { return port_; }

 private:
  void Serve() {
    while (!stop_) {
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, 20) <= 0) continue;
      int c = ::accept(fd_, nullptr, nullptr);
      if (c < 0) continue;
      switch (behaviour_) {
        case Behaviour::kHoldSilently:
          held_.push_back(c);
          break;
        case Behaviour::kCloseAtOnce:
          ::close(c);
          break;
        case Behaviour::kAnswerGarbage: {
          char buf[4096];
          pollfd r{c, POLLIN, 0};
          if (::poll(&r, 1, 1000) > 0) (void)::recv(c, buf, sizeof buf, 0);
          const std::string junk = "SSH-2.0-OpenSSH_9.2 nothing like HTTP\r\n\r\n";
          (void)::send(c, junk.data(), junk.size(), MSG_NOSIGNAL);
          ::close(c);
          break;
        }
        case Behaviour::kUdpNeverAnswer:
          break;
      }
    }
  }

  Behaviour behaviour_;
  int fd_ = -1;
  std::uint16_t port_ = 0;
  std::atomic<bool> stop_{false};
  std::thread thread_;
  std::vector<int> held_;
};

// A loopback port nobody listens on.
std::uint16_t RefusedPort() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  socklen_t len = sizeof addr;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  ::close(fd);
  return ntohs(addr.sin_port);
}

// One probe of `kind` against the catalog at `port`, with everything real but the clock.
class ProbeOverLoopback {
 public:
  ProbeOverLoopback(const std::string& kind, std::uint16_t port)
      : timers_(MakeAsioTimers(io_)),
        tcp_(MakeAsioTcpConnector(io_)),
        transport_(MakeBeastTransport(io_)),
        catalog_(Options(port), CatalogClientEnv{*transport_, clock_, [] { return 7ULL; }}) {
    EXPECT_TRUE(registerBuiltinProbes(registry_).ok());
    ProbeSpec spec;
    spec.kind = kind;
    spec.region = "us-east-1";
    spec.table = TableIdent{{"ops"}, "canary"};
    spec.allow_writes = true;
    spec.host = "127.0.0.1";
    spec.port = port;
    spec.dns_name = "catalog.us-east-1.lab.";
    spec.dns_server_host = "127.0.0.1";
    spec.dns_server_port = port;
    auto p =
        registry_.Create(spec, ProbeContext{*timers_, clock_, catalog_, *transport_, tcp_.get()});
    EXPECT_TRUE(p.ok()) << p.status().ToString();
    if (p.ok()) probe_ = std::move(p).value();
  }

  ProbeResult Check(std::chrono::milliseconds deadline = 400ms) {
    std::optional<ProbeResult> got;
    probe_->Check(deadline, [&](ProbeResult r) { got = std::move(r); });
    for (auto until = std::chrono::steady_clock::now() + 10s;
         !got && std::chrono::steady_clock::now() < until;) {
      io_.run_for(20ms);
      io_.restart();
    }
    EXPECT_TRUE(got.has_value()) << "no result within 10 s";
    return got.value_or(ProbeResult{});
  }

 private:
  static CatalogClientOptions Options(std::uint16_t port) {
    CatalogClientOptions o;
    o.base_uri = "http://127.0.0.1:" + std::to_string(port);
    o.retry.max_503_retries = 0;
    return o;
  }

  boost::asio::io_context io_;
  FakeClock clock_;
  std::unique_ptr<Timers> timers_;
  std::unique_ptr<TcpConnector> tcp_;
  std::unique_ptr<HttpTransport> transport_;
  CatalogClient catalog_;
  ProbeRegistry registry_;
  std::unique_ptr<Probe> probe_;
};

class CatalogProbeAnsweredTest : public ::testing::TestWithParam<const char*> {};

TEST_P(CatalogProbeAnsweredTest, ARefusedPortIsSilence) {
  ProbeOverLoopback probe(GetParam(), RefusedPort());
  ProbeResult r = probe.Check();
  EXPECT_FALSE(r.ok);
  EXPECT_FALSE(r.answered) << r.detail;
  EXPECT_FALSE(r.unparsed);
  EXPECT_EQ(r.detail, "connection refused");
}

TEST_P(CatalogProbeAnsweredTest, AServerThatAcceptsAndNeverAnswersIsSilence) {
  RawServer server(RawServer::Behaviour::kHoldSilently);
  ProbeOverLoopback probe(GetParam(), server.port());
  ProbeResult r = probe.Check(300ms);
  EXPECT_FALSE(r.ok);
  EXPECT_FALSE(r.answered) << r.detail;
  EXPECT_EQ(r.detail, "deadline 300ms exceeded");
}

TEST_P(CatalogProbeAnsweredTest, AConnectionClosedBeforeAnyByteIsSilence) {
  RawServer server(RawServer::Behaviour::kCloseAtOnce);
  ProbeOverLoopback probe(GetParam(), server.port());
  ProbeResult r = probe.Check();
  EXPECT_FALSE(r.ok);
  EXPECT_FALSE(r.answered) << r.detail;
}

TEST_P(CatalogProbeAnsweredTest, Http401IsAnAnswer) {
  RecordingHttpServer server;
  server.Respond(401, R"({"error":{"message":"Not authorized","type":"NotAuthorizedException",
                 "code":401}})");
  ProbeOverLoopback probe(GetParam(), static_cast<std::uint16_t>(server.port()));
  ProbeResult r = probe.Check();
  EXPECT_FALSE(r.ok);
  EXPECT_TRUE(r.answered) << r.detail;
  EXPECT_FALSE(r.unparsed);
  EXPECT_NE(r.detail.find("401"), std::string::npos) << r.detail;
}

TEST_P(CatalogProbeAnsweredTest, Http503IsAnAnswer) {
  RecordingHttpServer server;
  server.Respond(503, "");
  ProbeOverLoopback probe(GetParam(), static_cast<std::uint16_t>(server.port()));
  ProbeResult r = probe.Check();
  EXPECT_FALSE(r.ok);
  EXPECT_TRUE(r.answered) << r.detail;
  EXPECT_FALSE(r.unparsed);
  EXPECT_NE(r.detail.find("503"), std::string::npos) << r.detail;
}

TEST_P(CatalogProbeAnsweredTest, ABodyThatIsNotJsonIsAnUnparsedAnswer) {
  RecordingHttpServer server;
  server.Respond(200, "<html>catalog maintenance page</html>");
  ProbeOverLoopback probe(GetParam(), static_cast<std::uint16_t>(server.port()));
  ProbeResult r = probe.Check();
  EXPECT_FALSE(r.ok);
  EXPECT_TRUE(r.answered) << r.detail;
  EXPECT_TRUE(r.unparsed) << r.detail;
  EXPECT_NE(r.detail.find("malformed CatalogConfig: not JSON"), std::string::npos) << r.detail;
}

TEST_P(CatalogProbeAnsweredTest, BytesThatAreNotHttpAreAnUnparsedAnswer) {
  RawServer server(RawServer::Behaviour::kAnswerGarbage);
  ProbeOverLoopback probe(GetParam(), server.port());
  ProbeResult r = probe.Check();
  EXPECT_FALSE(r.ok);
  EXPECT_TRUE(r.answered) << r.detail;
  EXPECT_TRUE(r.unparsed) << r.detail;
}

INSTANTIATE_TEST_SUITE_P(EveryCatalogKind, CatalogProbeAnsweredTest,
                         ::testing::Values(kCatalogConfigProbe, kTableLoadProbe,
                                           kCanaryCommitProbe));

TEST(TableProbeAnsweredTest, ATableBodyThatIsNotALoadTableResultIsAnUnparsedAnswer) {
  // "{}" is a valid (empty) CatalogConfig and a malformed LoadTableResult.
  for (const char* kind : {kTableLoadProbe, kCanaryCommitProbe}) {
    RecordingHttpServer server;
    server.Respond(200, "{}");
    ProbeOverLoopback probe(kind, static_cast<std::uint16_t>(server.port()));
    ProbeResult r = probe.Check();
    EXPECT_FALSE(r.ok) << kind;
    EXPECT_TRUE(r.answered) << kind << ": " << r.detail;
    EXPECT_TRUE(r.unparsed) << kind << ": " << r.detail;
    EXPECT_NE(r.detail.find("malformed LoadTableResult"), std::string::npos) << r.detail;
  }
}

// tcp connects and says nothing; a handshake is no word from the catalog either way.
TEST(TcpProbeAnsweredTest, NeverAnsweredPassOrFail) {
  {
    ProbeOverLoopback probe(kTcpProbe, RefusedPort());
    ProbeResult r = probe.Check();
    EXPECT_FALSE(r.ok);
    EXPECT_FALSE(r.answered) << r.detail;
  }
  {
    RawServer server(RawServer::Behaviour::kHoldSilently);
    ProbeOverLoopback probe(kTcpProbe, server.port());
    ProbeResult r = probe.Check();
    EXPECT_TRUE(r.ok) << r.detail;
    EXPECT_FALSE(r.answered);
  }
}

// The DNS server's reply is not the catalog's; no reply at all is "unresolvable".
TEST(DnsProbeAnsweredTest, ADnsServerThatNeverAnswersIsSilence) {
  RawServer server(RawServer::Behaviour::kUdpNeverAnswer);
  ProbeOverLoopback probe(kDnsProbe, server.port());
  ProbeResult r = probe.Check(300ms);
  EXPECT_FALSE(r.ok);
  EXPECT_FALSE(r.answered) << r.detail;
  EXPECT_FALSE(r.unparsed);
}

}  // namespace
}  // namespace icewarden::testing
