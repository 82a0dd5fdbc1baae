// BeastTransport against real sockets on loopback: a cpp-httplib server in a thread, a port
// nobody listens on, and a listener that accepts connections but never answers.
#include "health/beast_transport.h"

#include <utility>  // before Asio (Boost 1.74 + C++20)

#include <gtest/gtest.h>
#include <httplib.h>

#include <algorithm>
#include <atomic>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read_until.hpp>
#include <boost/asio/streambuf.hpp>
#include <boost/asio/write.hpp>
#include <functional>
#include <optional>
#include <set>
#include <thread>
#include <vector>

namespace icewarden {
namespace {

using namespace std::chrono_literals;
namespace asio = boost::asio;

class LoopbackServer {
 public:
  explicit LoopbackServer(const std::function<void(httplib::Server&)>& configure = {}) {
    server_.set_read_timeout(1, 0);
    if (configure) configure(server_);
    // The client's port: the same port on two requests means the same connection.
    server_.Get("/port", [](const httplib::Request& req, httplib::Response& res) {
      res.set_content(std::to_string(req.remote_port), "text/plain");
    });
    server_.Get("/slow-port", [](const httplib::Request& req, httplib::Response& res) {
      std::this_thread::sleep_for(100ms);
      res.set_content(std::to_string(req.remote_port), "text/plain");
    });
    server_.Post("/port", [](const httplib::Request& req, httplib::Response& res) {
      res.set_content(std::to_string(req.remote_port), "text/plain");
    });
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

HttpRequest Get(const std::string& url) {
  HttpRequest req;
  req.url = url;
  return req;
}

TEST(BeastTransportPoolTest, SequentialRequestsReuseOneConnection) {
  LoopbackServer server;
  asio::io_context io;
  auto transport = MakeBeastTransport(io);
  auto first = RoundTrip(io, *transport, Get(server.Url("/port")), 5s);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  auto second = RoundTrip(io, *transport, Get(server.Url("/port")), 5s);
  ASSERT_TRUE(second.ok()) << second.status().ToString();
  EXPECT_EQ(first->body, second->body);
  HttpRequest post = Get(server.Url("/port"));
  post.method = "POST";
  post.body = "x";
  auto third = RoundTrip(io, *transport, post, 5s);
  ASSERT_TRUE(third.ok()) << third.status().ToString();
  EXPECT_EQ(first->body, third->body);
}

TEST(BeastTransportPoolTest, ConnectionCloseResponsesAreNotReused) {
  // max count 1: every response says "Connection: close".
  LoopbackServer server([](httplib::Server& s) { s.set_keep_alive_max_count(1); });
  asio::io_context io;
  auto transport = MakeBeastTransport(io);
  auto first = RoundTrip(io, *transport, Get(server.Url("/port")), 5s);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_EQ(first->headers.Get("Connection"), "close");
  auto second = RoundTrip(io, *transport, Get(server.Url("/port")), 5s);
  ASSERT_TRUE(second.ok()) << second.status().ToString();
  EXPECT_NE(first->body, second->body);
}

TEST(BeastTransportPoolTest, ServerClosingIdleConnectionsDoesNotBreakTheNextRequest) {
  // Keep-alive timeout 0: the server closes each connection right after its response.
  LoopbackServer server([](httplib::Server& s) { s.set_keep_alive_timeout(0); });
  asio::io_context io;
  auto transport = MakeBeastTransport(io);
  auto first = RoundTrip(io, *transport, Get(server.Url("/port")), 5s);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  std::this_thread::sleep_for(50ms);
  auto second = RoundTrip(io, *transport, Get(server.Url("/port")), 5s);
  ASSERT_TRUE(second.ok()) << second.status().ToString();
  std::this_thread::sleep_for(50ms);
  HttpRequest post = Get(server.Url("/port"));
  post.method = "POST";
  auto third = RoundTrip(io, *transport, post, 5s);
  ASSERT_TRUE(third.ok()) << third.status().ToString();
}

// A raw HTTP server that answers the first request on its first connection with keep-alive,
// then reads the second request on that connection and closes it without a byte of answer
// (the race of a server timing out an idle connection just as the client reuses it). Later
// connections get one answer each ("fresh") with "Connection: close".
class DroppingServer {
 public:
  DroppingServer() : acceptor_(io_, {asio::ip::make_address("127.0.0.1"), 0}) {
    thread_ = std::thread([this] { Serve(); });
  }
  ~DroppingServer() {
    stop_ = true;
    asio::io_context poke_io;
    asio::ip::tcp::socket poke(poke_io);
    boost::system::error_code ec;
    poke.connect(acceptor_.local_endpoint(), ec);  // unblocks accept()
    thread_.join();
  }
  std::string Url() const {
    return "http://127.0.0.1:" + std::to_string(acceptor_.local_endpoint().port()) + "/x";
  }
  int connections() const { return connections_; }
  int requests() const { return requests_; }

 private:
  bool ReadRequest(asio::ip::tcp::socket& s) {
    boost::system::error_code ec;
    asio::streambuf buf;
    asio::read_until(s, buf, "\r\n\r\n", ec);
    if (ec) return false;
    ++requests_;
    return true;
  }
  void Serve() {
    for (int n = 0;; ++n) {
      asio::ip::tcp::socket s(io_);
      boost::system::error_code ec;
      acceptor_.accept(s, ec);
      if (ec || stop_) return;
      ++connections_;
      if (!ReadRequest(s)) continue;
      if (n == 0) {
        asio::write(
            s, asio::buffer(std::string("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nfirst")), ec);
        ReadRequest(s);
        s.close();
        continue;
      }
      asio::write(s,
                  asio::buffer(std::string(
                      "HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 5\r\n\r\nfresh")),
                  ec);
    }
  }

  asio::io_context io_;
  asio::ip::tcp::acceptor acceptor_;
  std::thread thread_;
  std::atomic<bool> stop_{false};
  std::atomic<int> connections_{0};
  std::atomic<int> requests_{0};
};

TEST(BeastTransportPoolTest, GetOnADeadPooledConnectionIsRetriedOnAFreshOne) {
  DroppingServer server;
  asio::io_context io;
  auto transport = MakeBeastTransport(io);
  auto first = RoundTrip(io, *transport, Get(server.Url()), 5s);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_EQ(first->body, "first");
  auto second = RoundTrip(io, *transport, Get(server.Url()), 5s);
  ASSERT_TRUE(second.ok()) << second.status().ToString();
  EXPECT_EQ(second->body, "fresh");
  EXPECT_EQ(server.connections(), 2);
  EXPECT_EQ(server.requests(), 3);
}

TEST(BeastTransportPoolTest, PostOnADeadPooledConnectionIsReportedNotResent) {
  DroppingServer server;
  asio::io_context io;
  auto transport = MakeBeastTransport(io);
  auto first = RoundTrip(io, *transport, Get(server.Url()), 5s);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  HttpRequest post = Get(server.Url());
  post.method = "POST";
  post.body = "commit";
  auto second = RoundTrip(io, *transport, post, 5s);
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), StatusCode::kUnavailable);
  EXPECT_TRUE(second.status().message().starts_with("read 127.0.0.1:"))
      << second.status().message();
  EXPECT_NE(second.status().message().find("reused connection"), std::string::npos)
      << second.status().message();
  EXPECT_TRUE(RequestMayHaveBeenDelivered(second.status()));
  EXPECT_EQ(server.connections(), 1);  // never resent on a new connection
  EXPECT_EQ(server.requests(), 2);
}

// Sends `n` requests at once and returns the server-side client ports.
std::vector<std::string> Burst(asio::io_context& io, HttpTransport& transport,
                               const std::string& url, int n) {
  std::vector<std::string> ports;
  int done = 0;
  for (int i = 0; i < n; ++i) {
    transport.Send(Get(url), 5s, [&](Result<HttpResponse> r) {
      ++done;
      if (r.ok()) ports.push_back(r->body);
    });
  }
  io.run_for(10s);
  io.restart();
  EXPECT_EQ(done, n);
  return ports;
}

TEST(BeastTransportPoolTest, IdleConnectionsPerHostAreBounded) {
  LoopbackServer server;
  asio::io_context io;
  auto transport = MakeBeastTransport(io, {}, PoolOptions{.max_idle_per_host = 2});
  auto round1 = Burst(io, *transport, server.Url("/slow-port"), 4);
  ASSERT_EQ(round1.size(), 4u);
  EXPECT_EQ(std::set<std::string>(round1.begin(), round1.end()).size(), 4u);
  auto round2 = Burst(io, *transport, server.Url("/slow-port"), 4);
  ASSERT_EQ(round2.size(), 4u);
  int reused = 0;
  for (const auto& p : round2) reused += std::count(round1.begin(), round1.end(), p);
  EXPECT_EQ(reused, 2);  // two were kept, two were closed when the pool was full
}

TEST(BeastTransportPoolTest, PoolingCanBeTurnedOff) {
  LoopbackServer server;
  asio::io_context io;
  auto transport = MakeBeastTransport(io, {}, PoolOptions{.max_idle_per_host = 0});
  auto first = RoundTrip(io, *transport, Get(server.Url("/port")), 5s);
  auto second = RoundTrip(io, *transport, Get(server.Url("/port")), 5s);
  ASSERT_TRUE(first.ok() && second.ok());
  EXPECT_NE(first->body, second->body);
}

}  // namespace
}  // namespace icewarden
