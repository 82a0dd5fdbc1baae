// BeastTransport against real sockets on loopback: a cpp-httplib server in a thread, a port
// nobody listens on, and a listener that accepts connections but never answers.
#include "health/beast_transport.h"

#include <utility>  // before Asio (Boost 1.74 + C++20)

#include <gtest/gtest.h>
#include <httplib.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <optional>
#include <thread>

namespace icewarden {
namespace {

using namespace std::chrono_literals;
namespace asio = boost::asio;

class LoopbackServer {
 public:
  LoopbackServer() {
    server_.set_read_timeout(1, 0);
    server_.Get("/v1/config", [](const httplib::Request& req, httplib::Response& res) {
      res.set_header("ETag", "\"cfg-1\"");
      res.set_content(R"({"warehouse":")" + req.get_param_value("warehouse") + R"("})",
                      "application/json");
    });
    server_.Post("/echo", [](const httplib::Request& req, httplib::Response& res) {
      res.status = 409;
      res.set_content(req.get_header_value("Idempotency-Key") + "|" + req.body, "text/plain");
    });
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
  }
  ~LoopbackServer() {
    server_.stop();
    thread_.join();
  }
  std::string Url(const std::string& path) const {
    return "http://127.0.0.1:" + std::to_string(port_) + path;
  }
  int port() const { return port_; }

 private:
  httplib::Server server_;
  int port_ = 0;
  std::thread thread_;
};

// Sends one request and runs the io_context until the callback has run (or 10 s passed).
Result<HttpResponse> RoundTrip(asio::io_context& io, HttpTransport& transport, HttpRequest req,
                               std::chrono::milliseconds deadline) {
  std::optional<Result<HttpResponse>> out;
  transport.Send(std::move(req), deadline,
                 [&](Result<HttpResponse> r) { out.emplace(std::move(r)); });
  io.run_for(10s);
  io.restart();
  if (!out) return Status::Internal("test: no callback within 10 s");
  return std::move(*out);
}

TEST(BeastTransportTest, GetRoundTrip) {
  LoopbackServer server;
  asio::io_context io;
  auto transport = MakeBeastTransport(io);
  HttpRequest req;
  req.url = server.Url("/v1/config?warehouse=lake%20eu");
  req.headers.Set("Accept", "application/json");
  auto r = RoundTrip(io, *transport, req, 5s);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->body, R"({"warehouse":"lake eu"})");
  EXPECT_EQ(r->headers.Get("etag"), "\"cfg-1\"");
  EXPECT_EQ(r->headers.Get("CONTENT-TYPE"), "application/json");
}

TEST(BeastTransportTest, PostSendsBodyAndHeadersAndReturnsErrorStatusesAsResponses) {
  LoopbackServer server;
  asio::io_context io;
  auto transport = MakeBeastTransport(io);
  HttpRequest req;
  req.method = "POST";
  req.url = server.Url("/echo");
  req.headers.Set("Idempotency-Key", "k-1");
  req.headers.Set("Content-Type", "application/json");
  req.body = R"({"a":1})";
  auto r = RoundTrip(io, *transport, req, 5s);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->status, 409);
  EXPECT_EQ(r->body, R"(k-1|{"a":1})");
}

TEST(BeastTransportTest, ConnectionRefusedIsUnavailable) {
  int port = 0;
  {
    asio::io_context probe;
    asio::ip::tcp::acceptor a(probe, {asio::ip::make_address("127.0.0.1"), 0});
    port = a.local_endpoint().port();
  }  // closed: nothing listens there now
  asio::io_context io;
  auto transport = MakeBeastTransport(io);
  HttpRequest req;
  req.url = "http://127.0.0.1:" + std::to_string(port) + "/v1/config";
  auto r = RoundTrip(io, *transport, req, 5s);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kUnavailable);
  EXPECT_EQ(r.status().message(),
            "connect 127.0.0.1:" + std::to_string(port) + ": Connection refused");
  EXPECT_FALSE(RequestMayHaveBeenDelivered(r.status()));
}

TEST(BeastTransportTest, ServerThatNeverAnswersHitsTheDeadline) {
  asio::io_context io;
  // Listening, so the kernel completes the handshake, but nobody ever accepts or answers.
  asio::ip::tcp::acceptor silent(io, {asio::ip::make_address("127.0.0.1"), 0});
  auto transport = MakeBeastTransport(io);
  HttpRequest req;
  req.url = "http://127.0.0.1:" + std::to_string(silent.local_endpoint().port()) + "/v1/config";
  auto r = RoundTrip(io, *transport, req, 300ms);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kUnavailable);
  EXPECT_TRUE(r.status().message().starts_with("read 127.0.0.1:")) << r.status().message();
  EXPECT_NE(r.status().message().find("deadline of 300ms exceeded"), std::string::npos)
      << r.status().message();
  EXPECT_TRUE(RequestMayHaveBeenDelivered(r.status()));
}

TEST(BeastTransportTest, TlsToAPlainHttpServerFailsInTheTlsPhase) {
  LoopbackServer server;
  asio::io_context io;
  auto transport = MakeBeastTransport(io);
  HttpRequest req;
  req.url = "https://127.0.0.1:" + std::to_string(server.port()) + "/v1/config";
  auto r = RoundTrip(io, *transport, req, 3s);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kUnavailable);
  EXPECT_TRUE(r.status().message().starts_with("tls 127.0.0.1:")) << r.status().message();
}

TEST(BeastTransportTest, BadUrlsAreTheCallersError) {
  asio::io_context io;
  auto transport = MakeBeastTransport(io);
  HttpRequest req;
  req.url = "ftp://127.0.0.1/x";
  auto r = RoundTrip(io, *transport, req, 1s);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
}

TEST(BeastTransportTest, RunAfterFiresOnTheIoContext) {
  asio::io_context io;
  auto transport = MakeBeastTransport(io);
  bool fired = false;
  transport->RunAfter(10ms, [&] { fired = true; });
  EXPECT_FALSE(fired);
  io.run_for(5s);
  EXPECT_TRUE(fired);
}

}  // namespace
}  // namespace icewarden
