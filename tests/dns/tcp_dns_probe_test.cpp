// The tcp and dns probe kinds against real servers on loopback: a listening socket, a
// closed port, and BIND 9 (`named`) serving a static zone, started by the test.
#include <utility>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ip/udp.hpp>

#include <gtest/gtest.h>

#include <csignal>
#include <fstream>
#include <optional>
#include <thread>

#include <unistd.h>

#include "health/asio_timers.h"
#include "health/beast_transport.h"
#include "health/catalog_client.h"
#include "health/probe_kinds.h"
#include "tests/fakes/subprocess.h"
#include "tests/fakes/test_paths.h"

namespace icewarden::testing {
namespace {

namespace asio = boost::asio;
using namespace std::chrono_literals;

constexpr const char* kNamed = "/usr/sbin/named";

// A free port on 127.0.0.1 for both UDP and TCP (DNS needs both), closed again.
std::uint16_t FreeDnsPort() {
  asio::io_context io;
  for (int attempt = 0; attempt < 50; ++attempt) {
    asio::ip::tcp::acceptor tcp(io,
                                asio::ip::tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0));
    const std::uint16_t port = tcp.local_endpoint().port();
    boost::system::error_code ec;
    asio::ip::udp::socket udp(io);
    udp.open(asio::ip::udp::v4(), ec);
    if (!ec) udp.bind(asio::ip::udp::endpoint(asio::ip::make_address("127.0.0.1"), port), ec);
    if (!ec) return port;
  }
  ADD_FAILURE() << "no free UDP+TCP port";
  return 0;
}

// The tcp and dns kinds never call the catalog; the context just needs one.
CatalogClientOptions UnusedCatalog() {
  CatalogClientOptions o;
  o.base_uri = "http://127.0.0.1:1";
  return o;
}

// One probe check on a real io_context; the result, or nullopt if done never ran.
class LoopbackProbes : public ::testing::Test {
 protected:
  LoopbackProbes()
      : timers_(MakeAsioTimers(io_)),
        tcp_(MakeAsioTcpConnector(io_)),
        transport_(MakeBeastTransport(io_)),
        catalog_(UnusedCatalog(),
                 CatalogClientEnv{*transport_, *SystemClock(), SystemRandomBits()}),
        ctx_{*timers_, *SystemClock(), catalog_, *transport_, tcp_.get()} {
    EXPECT_TRUE(registerBuiltinProbes(registry_).ok());
  }

  std::unique_ptr<Probe> Make(const ProbeSpec& spec) {
    auto p = registry_.Create(spec, ctx_);
    EXPECT_TRUE(p.ok()) << p.status().ToString();
    return p.ok() ? std::move(p).value() : nullptr;
  }

  std::optional<ProbeResult> Check(Probe& p, std::chrono::milliseconds deadline = 2s) {
    std::optional<ProbeResult> got;
    int calls = 0;
    p.Check(deadline, [&](ProbeResult r) {
      ++calls;
      got = std::move(r);
    });
    io_.restart();
    const auto stop = std::chrono::steady_clock::now() + deadline + 2s;
    while (!got && std::chrono::steady_clock::now() < stop) io_.run_one_for(100ms);
    io_.restart();
    io_.run_for(50ms);  // anything late would show up as a second call
    EXPECT_LE(calls, 1);
    return got;
  }

  asio::io_context io_;
  std::unique_ptr<Timers> timers_;
  std::unique_ptr<TcpConnector> tcp_;
  std::unique_ptr<HttpTransport> transport_;
  CatalogClient catalog_;
  ProbeContext ctx_;
  ProbeRegistry registry_;
};

ProbeSpec TcpSpec(std::uint16_t port) {
  ProbeSpec s;
  s.kind = "tcp";
  s.region = "lab";
  s.host = "127.0.0.1";
  s.port = port;
  return s;
}

TEST_F(LoopbackProbes, TcpPassesAgainstAListeningSocket) {
  asio::ip::tcp::acceptor listener(io_,
                                   asio::ip::tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0));
  auto p = Make(TcpSpec(listener.local_endpoint().port()));
  auto r = Check(*p);
  ASSERT_TRUE(r);
  EXPECT_TRUE(r->ok) << r->detail;
  EXPECT_EQ(r->kind, "tcp");
  EXPECT_LT(r->latency, 2s);
}

TEST_F(LoopbackProbes, TcpFailsWithConnectionRefusedOnAClosedPort) {
  std::uint16_t port;
  {
    asio::ip::tcp::acceptor gone(io_,
                                 asio::ip::tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0));
    port = gone.local_endpoint().port();
  }
  auto p = Make(TcpSpec(port));
  auto r = Check(*p);
  ASSERT_TRUE(r);
  EXPECT_FALSE(r->ok);
  EXPECT_EQ(r->detail, "connection refused");
}

// BIND 9 on 127.0.0.1:<free port> with the static zone lab.test.
class NamedServer {
 public:
  NamedServer() {
    dir_ = MakeTempDir("icewarden-named");
    port_ = FreeDnsPort();
    std::ofstream(dir_ + "/lab.test.zone") << R"($TTL 60
@        IN SOA ns.lab.test. admin.lab.test. 1 60 60 600 60
@        IN NS  ns.lab.test.
ns       IN A   127.0.0.1
catalog  IN A   10.0.0.7
catalog6 IN AAAA 2001:db8::7
www      IN CNAME catalog.lab.test.
)";
    std::ofstream(dir_ + "/named.conf")
        << "options {\n"
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
        << "zone \"lab.test\" { type primary; file \"" << dir_ << "/lab.test.zone\"; };\n";
    process_.emplace(std::vector<std::string>{kNamed, "-g", "-n", "1", "-c", dir_ + "/named.conf"});
  }

  // Polls with dig until the zone answers.
  bool WaitUntilServing(std::chrono::milliseconds limit) {
    const auto stop = std::chrono::steady_clock::now() + limit;
    while (std::chrono::steady_clock::now() < stop) {
      auto r = RunCommand({"/usr/bin/dig", "@127.0.0.1", "-p", std::to_string(port_),
                           "catalog.lab.test", "A", "+short", "+time=1", "+tries=1"},
                          {}, 3s);
      if (r.exit_code == 0 && r.out.find("10.0.0.7") != std::string::npos) return true;
      std::this_thread::sleep_for(100ms);
    }
    return false;
  }

  ~NamedServer() {
    if (process_) {
      process_->Signal(SIGTERM);
      if (!process_->Wait(5s)) process_->Signal(SIGKILL);
    }
  }

  std::uint16_t port() const { return port_; }

 private:
  std::string dir_;
  std::uint16_t port_ = 0;
  std::optional<Subprocess> process_;
};

class DnsProbeTest : public LoopbackProbes {
 protected:
  static void SetUpTestSuite() {
    if (access(kNamed, X_OK) != 0) return;
    named_ = new NamedServer();
    serving_ = named_->WaitUntilServing(20s);
  }
  static void TearDownTestSuite() {
    delete named_;
    named_ = nullptr;
  }
  void SetUp() override {
    if (!named_) GTEST_SKIP() << kNamed << " is not installed (scripts/setup.sh installs bind9)";
    ASSERT_TRUE(serving_) << "named did not answer on 127.0.0.1:" << named_->port();
  }

  ProbeSpec Spec(const std::string& name, const std::string& expect = "") {
    ProbeSpec s;
    s.kind = "dns";
    s.region = "lab";
    s.dns_name = name;
    s.dns_server_host = "127.0.0.1";
    s.dns_server_port = named_->port();
    s.expect = expect;
    return s;
  }

  static NamedServer* named_;
  static bool serving_;
};
NamedServer* DnsProbeTest::named_ = nullptr;
bool DnsProbeTest::serving_ = false;

TEST_F(DnsProbeTest, ARecordPasses) {
  auto p = Make(Spec("catalog.lab.test", "10.0.0.7"));
  auto r = Check(*p);
  ASSERT_TRUE(r);
  EXPECT_TRUE(r->ok) << r->detail;
  EXPECT_EQ(r->kind, "dns");
  EXPECT_EQ(r->detail, "10.0.0.7");
}

TEST_F(DnsProbeTest, CnameTargetAndTheAddressBehindItBothMatch) {
  auto by_target = Make(Spec("www.lab.test", "catalog.lab.test."));
  auto r = Check(*by_target);
  ASSERT_TRUE(r);
  EXPECT_TRUE(r->ok) << r->detail;
  auto by_address = Make(Spec("www.lab.test", "10.0.0.7"));
  r = Check(*by_address);
  ASSERT_TRUE(r);
  EXPECT_TRUE(r->ok) << r->detail;
}

TEST_F(DnsProbeTest, AaaaRecordPasses) {
  auto p = Make(Spec("catalog6.lab.test", "2001:db8::7"));
  auto r = Check(*p);
  ASSERT_TRUE(r);
  EXPECT_TRUE(r->ok) << r->detail;
}

TEST_F(DnsProbeTest, UnexpectedAnswerFails) {
  auto p = Make(Spec("www.lab.test", "10.9.9.9"));
  auto r = Check(*p);
  ASSERT_TRUE(r);
  EXPECT_FALSE(r->ok);
  EXPECT_EQ(r->detail, "www.lab.test resolves to 10.0.0.7, catalog.lab.test, expected 10.9.9.9");
}

TEST_F(DnsProbeTest, MissingNameFailsWithNxdomain) {
  auto p = Make(Spec("missing.lab.test"));
  auto r = Check(*p);
  ASSERT_TRUE(r);
  EXPECT_FALSE(r->ok);
  EXPECT_EQ(r->detail, "resolve missing.lab.test via 127.0.0.1:" + std::to_string(named_->port()) +
                           ": NXDOMAIN");
}

TEST_F(DnsProbeTest, ADeadServerFailsWithinTheDeadline) {
  auto spec = Spec("catalog.lab.test");
  spec.dns_server_port = FreeDnsPort();
  auto p = Make(spec);
  const auto started = std::chrono::steady_clock::now();
  auto r = Check(*p, 700ms);
  ASSERT_TRUE(r);
  EXPECT_FALSE(r->ok);
  EXPECT_LT(std::chrono::steady_clock::now() - started, 1500ms) << r->detail;
}

}  // namespace
}  // namespace icewarden::testing
