// TLS through OpenSSL, end to end on loopback: a cpp-httplib HTTPS server with a
// certificate made by `openssl req` for this test, and the Beast transport verifying it
// (or refusing it when it does not chain to a trusted CA or names another host).
#include <utility>  // before Asio (Boost 1.74 + C++20)

#include <gtest/gtest.h>
#include <httplib.h>

#include <boost/asio/io_context.hpp>
#include <filesystem>
#include <optional>
#include <thread>

#include "health/beast_transport.h"
#include "tests/fakes/subprocess.h"
#include "tests/fakes/test_paths.h"

namespace icewarden {
namespace {

using namespace std::chrono_literals;

// A self-signed certificate for CN=localhost with subjectAltName IP:127.0.0.1 (and, for
// the wrong-name case, one for another host).
bool MakeCert(const std::string& dir, const std::string& name, const std::string& san) {
  auto r = testing::RunCommand({"/usr/bin/openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes",
                                "-keyout", dir + "/" + name + ".key", "-out",
                                dir + "/" + name + ".crt", "-days", "1", "-subj",
                                "/CN=icewarden-test", "-addext", "subjectAltName=" + san});
  return r.exit_code == 0;
}

class TlsServer {
 public:
  TlsServer(const std::string& cert, const std::string& key) : server_(cert.c_str(), key.c_str()) {
    server_.Get("/v1/config", [](const httplib::Request&, httplib::Response& res) {
      res.set_content(R"({"defaults":{},"overrides":{}})", "application/json");
    });
    // The client's port: the same port on two requests means the same connection.
    server_.Get("/port", [](const httplib::Request& req, httplib::Response& res) {
      res.set_content(std::to_string(req.remote_port), "text/plain");
    });
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
  }
  ~TlsServer() {
    server_.stop();
    thread_.join();
  }
  bool valid() const { return server_.is_valid(); }
  std::string Url(const std::string& path = "/v1/config") const {
    return "https://127.0.0.1:" + std::to_string(port_) + path;
  }

 private:
  httplib::SSLServer server_;
  int port_ = 0;
  std::thread thread_;
};

// Verifying, with `ca_file` (may be empty) besides the system's CAs.
TlsOptions Trusting(std::string ca_file) {
  TlsOptions tls;
  tls.ca_file = std::move(ca_file);
  return tls;
}
TlsOptions Unverified() {
  TlsOptions tls;
  tls.verify_peer = false;
  return tls;
}

Result<HttpResponse> Get(boost::asio::io_context& io, HttpTransport& transport,
                         const std::string& url) {
  std::optional<Result<HttpResponse>> out;
  HttpRequest req;
  req.method = "GET";
  req.url = url;
  transport.Send(std::move(req), 5s, [&](Result<HttpResponse> r) { out.emplace(std::move(r)); });
  io.run_for(10s);
  io.restart();
  if (!out) return Status::Internal("test: no callback within 10 s");
  return std::move(*out);
}

Result<HttpResponse> Get(const std::string& url, TlsOptions tls) {
  boost::asio::io_context io;
  auto transport = MakeBeastTransport(io, tls);
  return Get(io, *transport, url);
}

class BeastTlsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!std::filesystem::exists("/usr/bin/openssl"))
      GTEST_SKIP() << "openssl CLI is not installed";
    dir_ = testing::MakeTempDir("icewarden-tls");
    ASSERT_TRUE(MakeCert(dir_, "good", "IP:127.0.0.1,DNS:localhost"));
    ASSERT_TRUE(MakeCert(dir_, "other", "DNS:catalog.example.com"));
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string dir_;
};

TEST_F(BeastTlsTest, AVerifiedCertificateCompletesTheRequest) {
  TlsServer server(dir_ + "/good.crt", dir_ + "/good.key");
  ASSERT_TRUE(server.valid());
  auto res = Get(server.Url(), Trusting(dir_ + "/good.crt"));
  ASSERT_TRUE(res.ok()) << res.status().ToString();
  EXPECT_EQ(res->status, 200);
  EXPECT_NE(res->body.find("overrides"), std::string::npos);
}

TEST_F(BeastTlsTest, AnUntrustedCertificateIsRefused) {
  TlsServer server(dir_ + "/good.crt", dir_ + "/good.key");
  auto res = Get(server.Url(), Trusting(""));  // system CAs only
  ASSERT_FALSE(res.ok());
  EXPECT_EQ(res.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(res.status().message().find("tls"), std::string::npos) << res.status().message();
}

TEST_F(BeastTlsTest, ACertificateForAnotherHostIsRefused) {
  TlsServer server(dir_ + "/other.crt", dir_ + "/other.key");
  auto res = Get(server.Url(), Trusting(dir_ + "/other.crt"));
  ASSERT_FALSE(res.ok()) << "a certificate for catalog.example.com must not pass for 127.0.0.1";
  EXPECT_NE(res.status().message().find("tls"), std::string::npos) << res.status().message();
}

TEST_F(BeastTlsTest, SkippingVerificationIsAnExplicitChoice) {
  TlsServer server(dir_ + "/other.crt", dir_ + "/other.key");
  auto res = Get(server.Url(), Unverified());
  ASSERT_TRUE(res.ok()) << res.status().ToString();
  EXPECT_EQ(res->status, 200);
}

TEST_F(BeastTlsTest, SequentialRequestsReuseOneVerifiedConnection) {
  TlsServer server(dir_ + "/good.crt", dir_ + "/good.key");
  boost::asio::io_context io;
  auto transport = MakeBeastTransport(io, Trusting(dir_ + "/good.crt"));
  auto first = Get(io, *transport, server.Url("/port"));
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  auto second = Get(io, *transport, server.Url("/port"));
  ASSERT_TRUE(second.ok()) << second.status().ToString();
  EXPECT_EQ(first->body, second->body) << "the second request had to handshake again";

  PoolOptions off;
  off.max_idle_per_host = 0;
  auto closing = MakeBeastTransport(io, Trusting(dir_ + "/good.crt"), off);
  auto a = Get(io, *closing, server.Url("/port"));
  auto b = Get(io, *closing, server.Url("/port"));
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_NE(a->body, b->body) << "with reuse off, every request has its own connection";
}

}  // namespace
}  // namespace icewarden
