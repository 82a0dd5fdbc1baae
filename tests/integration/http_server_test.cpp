// HttpServer over real loopback sockets: cpp-httplib as a well-behaved client, raw sockets
// for the badly behaved ones.
#include "orchestrator/api/http_server.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <condition_variable>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <future>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>
#include <vector>

#include "orchestrator/api/api.h"
#include "tests/fakes/fake_clock.h"
#include "tests/fakes/fake_store.h"
#include "tests/fakes/test_paths.h"
#include "tests/fakes/test_pki.h"

namespace icewarden {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;

// Echoes what the server told it, so tests can see the request as the handler does.
ApiResponse Echo(const ApiRequest& req) {
  auto header = req.headers.find("x-test");
  ApiResponse res;
  res.body = json{{"method", req.method},
                  {"target", req.target},
                  {"remote", req.remote},
                  {"body_bytes", req.body.size()},
                  {"x_test", header == req.headers.end() ? "" : header->second}}
                 .dump();
  return res;
}

HttpServerOptions TestOptions() {
  HttpServerOptions o;
  o.host = "127.0.0.1";
  o.port = 0;
  o.read_timeout = 2000ms;
  o.write_timeout = 2000ms;
  o.shutdown_grace = 2000ms;
  o.handle_signals = false;
  return o;
}

// A server running Run() on its own thread; stopped and joined on destruction.
class RunningServer {
 public:
  RunningServer(HttpServerOptions options, HttpServer::Handler handler)
      : server_(std::move(options), std::move(handler)) {
    Status s = server_.Listen();
    EXPECT_TRUE(s.ok()) << s.ToString();
    EXPECT_NE(server_.port(), 0);
    returned_ = std::async(std::launch::async, [this] { server_.Run(); });
  }
  ~RunningServer() {
    server_.Stop();
    returned_.wait();
  }

  HttpServer& server() { return server_; }
  int port() { return server_.port(); }
  // True when Run() returns within `timeout`.
  bool RunReturnsWithin(std::chrono::milliseconds timeout) {
    return returned_.wait_for(timeout) == std::future_status::ready;
  }

 private:
  HttpServer server_;
  std::future<void> returned_;
};

// A raw loopback TCP connection for clients httplib will not imitate.
class RawConnection {
 public:
  explicit RawConnection(int port) : fd_(socket(AF_INET, SOCK_STREAM, 0)) {
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<std::uint16_t>(port));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    connected_ = connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
  }
  ~RawConnection() { close(fd_); }
  bool connected() const { return connected_; }

  bool Send(std::string_view data) {
    return ::send(fd_, data.data(), data.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(data.size());
  }

  // Reads until the peer closes (true) or `timeout` passes with the connection open (false).
  bool ReadUntilClosed(std::chrono::milliseconds timeout, std::string* received) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    for (;;) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      if (left <= 0ms) return false;
      pollfd p{fd_, POLLIN, 0};
      if (poll(&p, 1, static_cast<int>(left.count())) <= 0) continue;
      char buf[4096];
      const ssize_t n = recv(fd_, buf, sizeof buf, 0);
      if (n <= 0) return true;  // EOF or reset: closed either way
      received->append(buf, static_cast<std::size_t>(n));
    }
  }

 private:
  int fd_;
  bool connected_ = false;
};

TEST(HttpServerTest, ServesAGetAndTellsTheHandlerWhoAsked) {
  RunningServer s(TestOptions(), Echo);
  httplib::Client cli("127.0.0.1", s.port());
  auto res = cli.Get("/api/v1/regions?x=1", {{"X-Test", "hello"}});
  ASSERT_TRUE(res) << httplib::to_string(res.error());
  EXPECT_EQ(res->status, 200);
  EXPECT_EQ(res->get_header_value("Content-Type"), "application/json");
  json body = json::parse(res->body);
  EXPECT_EQ(body["method"], "GET");
  EXPECT_EQ(body["target"], "/api/v1/regions?x=1");
  EXPECT_EQ(body["x_test"], "hello");
  EXPECT_EQ(body["remote"].get<std::string>().rfind("127.0.0.1:", 0), 0u) << body["remote"];
}

TEST(HttpServerTest, ServesTheApi) {
  testing::FakeClock clock;
  testing::FakeStore store(clock);
  ApiConfig config;
  Api api(config, store, clock, [] { return true; });
  RunningServer s(TestOptions(), [&api](const ApiRequest& r) { return api.Handle(r); });
  httplib::Client cli("127.0.0.1", s.port());
  auto health = cli.Get("/healthz");
  ASSERT_TRUE(health);
  EXPECT_EQ(health->status, 200);
  EXPECT_EQ(json::parse(health->body), json({{"status", "ok"}}));
  auto regions = cli.Get("/api/v1/regions");
  ASSERT_TRUE(regions);
  EXPECT_EQ(regions->status, 401);
  EXPECT_EQ(regions->get_header_value("WWW-Authenticate"), "Bearer realm=\"icewarden\"");
}

TEST(HttpServerTest, OversizedBodyGets413JsonWithoutCallingTheHandler) {
  std::atomic<int> calls{0};
  std::atomic<int> local_413{0};
  HttpServerOptions options = TestOptions();
  options.on_server_response = [&](int status) { local_413 += status == 413; };
  RunningServer s(options, [&](const ApiRequest& r) {
    ++calls;
    return Echo(r);
  });
  httplib::Client cli("127.0.0.1", s.port());
  cli.set_read_timeout(5, 0);
  cli.set_write_timeout(5, 0);
  auto res = cli.Post("/api/v1/anything", std::string(2 << 20, 'x'), "application/octet-stream");
  ASSERT_TRUE(res) << httplib::to_string(res.error());
  EXPECT_EQ(res->status, 413);
  EXPECT_EQ(res->get_header_value("Content-Type"), "application/json");
  EXPECT_EQ(json::parse(res->body)["error"]["code"], "payload_too_large");
  EXPECT_EQ(calls.load(), 0);
  EXPECT_EQ(local_413.load(), 1);
  // The server is still fine afterwards.
  httplib::Client again("127.0.0.1", s.port());
  auto ok = again.Post("/small", std::string(1000, 'x'), "text/plain");
  ASSERT_TRUE(ok);
  EXPECT_EQ(json::parse(ok->body)["body_bytes"], 1000);
}

TEST(HttpServerTest, APathWithItsOwnBodyLimitIsBoundByItAndTheOthersByTheDefault) {
  std::atomic<int> calls{0};
  HttpServerOptions options = TestOptions();
  options.body_limit = 1 << 20;
  options.body_limits = {{"/hooks/", 4 << 20, "send less at once"}};
  RunningServer s(options, [&](const ApiRequest& r) {
    ++calls;
    return Echo(r);
  });
  auto post = [&](const std::string& path, std::size_t bytes, bool chunked = false) {
    httplib::Client cli("127.0.0.1", s.port());
    cli.set_read_timeout(5, 0);
    cli.set_write_timeout(5, 0);
    const std::string body(bytes, 'x');
    if (!chunked) return cli.Post(path, body, "application/octet-stream");
    // No Content-Length: the bound is found while the chunks arrive.
    return cli.Post(
        path,
        [&](std::size_t offset, httplib::DataSink& sink) {
          const std::size_t n = std::min<std::size_t>(64 << 10, body.size() - offset);
          sink.write(body.data() + offset, n);
          if (offset + n == body.size()) sink.done();
          return true;
        },
        "application/octet-stream");
  };
  auto under = post("/hooks/alertmanager", 3 << 20);
  ASSERT_TRUE(under) << httplib::to_string(under.error());
  EXPECT_EQ(under->status, 200);
  EXPECT_EQ(json::parse(under->body)["body_bytes"], 3 << 20);
  auto chunked_under = post("/hooks/alertmanager", 3 << 20, true);
  ASSERT_TRUE(chunked_under);
  EXPECT_EQ(chunked_under->status, 200);

  auto over = post("/hooks/alertmanager", (4 << 20) + 1);
  ASSERT_TRUE(over);
  EXPECT_EQ(over->status, 413);
  const std::string says = json::parse(over->body)["error"]["message"];
  EXPECT_NE(says.find("exceeds 4194304 bytes; send less at once"), std::string::npos) << says;
  auto chunked_over = post("/hooks/alertmanager", 5 << 20, true);
  ASSERT_TRUE(chunked_over);
  EXPECT_EQ(chunked_over->status, 413);

  // Elsewhere the default still holds, and its refusal carries no other path's advice.
  auto elsewhere = post("/api/v1/failovers", 3 << 20);
  ASSERT_TRUE(elsewhere);
  EXPECT_EQ(elsewhere->status, 413);
  const std::string default_says = json::parse(elsewhere->body)["error"]["message"];
  EXPECT_EQ(default_says, "request body exceeds 1048576 bytes");
  EXPECT_EQ(calls.load(), 2);
}

TEST(HttpServerTest, ServeOptionsGiveTheWebhooksTheirOwnBound) {
  ApiConfig api;
  api.listen = "127.0.0.1:0";
  auto options = HttpServerOptionsFor(api);
  ASSERT_TRUE(options.ok());
  EXPECT_EQ(options->body_limit, kApiMaxBodyBytes);
  ASSERT_EQ(options->body_limits.size(), 1u);
  EXPECT_EQ(options->body_limits[0].prefix, "/api/v1/webhooks/");
  EXPECT_EQ(options->body_limits[0].bytes, kApiMaxWebhookBodyBytes);
  EXPECT_EQ(ApiMaxBodyBytes("/api/v1/webhooks/alertmanager"), kApiMaxWebhookBodyBytes);
  EXPECT_EQ(ApiMaxBodyBytes("/api/v1/failovers"), kApiMaxBodyBytes);
}

TEST(HttpServerTest, SlowClientIsDisconnectedAfterTheReadTimeout) {
  HttpServerOptions options = TestOptions();
  options.read_timeout = 200ms;
  std::atomic<int> calls{0};
  RunningServer s(options, [&](const ApiRequest& r) {
    ++calls;
    return Echo(r);
  });
  RawConnection conn(s.port());
  ASSERT_TRUE(conn.connected());
  ASSERT_TRUE(conn.Send("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Half: "));
  std::string received;
  // Generous bound: the assertion is that the server closes, not how fast.
  EXPECT_TRUE(conn.ReadUntilClosed(10s, &received)) << "connection still open";
  EXPECT_EQ(received, "");
  EXPECT_EQ(calls.load(), 0);
}

TEST(HttpServerTest, MalformedRequestGets400Json) {
  RunningServer s(TestOptions(), Echo);
  RawConnection conn(s.port());
  ASSERT_TRUE(conn.connected());
  ASSERT_TRUE(conn.Send("GET /healthz HTTP/1.1\r\nBad Header Without Colon\r\n\r\n"));
  std::string received;
  EXPECT_TRUE(conn.ReadUntilClosed(10s, &received));
  EXPECT_EQ(received.rfind("HTTP/1.1 400", 0), 0u) << received;
  EXPECT_NE(received.find("\"bad_request\""), std::string::npos) << received;
}

TEST(HttpServerTest, OversizedHeadersGet431Json) {
  HttpServerOptions options = TestOptions();
  options.header_limit = 4096;
  RunningServer s(options, Echo);
  httplib::Client cli("127.0.0.1", s.port());
  auto res = cli.Get("/big", {{"X-Test", std::string(8192, 'h')}});
  ASSERT_TRUE(res) << httplib::to_string(res.error());
  EXPECT_EQ(res->status, 431);
  EXPECT_EQ(json::parse(res->body)["error"]["code"], "request_header_fields_too_large");
}

TEST(HttpServerTest, SeveralThreadsServeConcurrentClients) {
  HttpServerOptions options = TestOptions();
  options.threads = 2;
  std::atomic<int> calls{0};
  RunningServer s(options, [&](const ApiRequest& r) {
    ++calls;
    return Echo(r);
  });
  std::vector<std::future<int>> clients;
  for (int c = 0; c < 8; ++c) {
    clients.push_back(std::async(std::launch::async, [&s] {
      httplib::Client cli("127.0.0.1", s.port());
      cli.set_keep_alive(true);
      int ok = 0;
      for (int i = 0; i < 25; ++i) {
        auto res = cli.Get("/n");
        ok += res && res->status == 200;
      }
      return ok;
    }));
  }
  int ok = 0;
  for (auto& c : clients) ok += c.get();
  EXPECT_EQ(ok, 200);
  EXPECT_EQ(calls.load(), 200);
  s.server().Stop();
  EXPECT_TRUE(s.RunReturnsWithin(10s));
}

// A loop per thread (the gateway's mode): connections on different loops are answered at
// once even when each handler blocks, and shutdown still lets a request in flight finish.
TEST(HttpServerTest, ALoopPerThreadRunsBlockingHandlersOfTwoConnectionsAtOnce) {
  HttpServerOptions options = TestOptions();
  options.threads = 2;
  options.loop_per_thread = true;
  std::mutex mu;
  std::condition_variable cv;
  int inside = 0;
  RunningServer s(options, [&](const ApiRequest& r) {
    std::unique_lock lock(mu);
    ++inside;
    cv.notify_all();
    // Each handler waits for the other to be inside: two loops sharing one thread would hold
    // the second request until the first timed out.
    const bool both = cv.wait_for(lock, 10s, [&] { return inside >= 2; });
    ApiResponse res = Echo(r);
    if (!both) res.status = 504;
    return res;
  });
  auto get = [&s](const std::string& path) {
    return std::async(std::launch::async, [&s, path] {
      httplib::Client cli("127.0.0.1", s.port());
      cli.set_read_timeout(20, 0);
      auto res = cli.Get(path);
      return res ? res->status : -1;
    });
  };
  auto a = get("/a");
  auto b = get("/b");
  EXPECT_EQ(a.get(), 200);
  EXPECT_EQ(b.get(), 200);
  s.server().Stop();
  EXPECT_TRUE(s.RunReturnsWithin(10s));
}

TEST(HttpServerTest, ALoopPerThreadServesKeepAliveClientsAndStops) {
  HttpServerOptions options = TestOptions();
  options.threads = 3;
  options.loop_per_thread = true;
  std::atomic<int> calls{0};
  std::promise<void> entered;
  std::atomic<bool> release{false};
  RunningServer s(options, [&](const ApiRequest& r) {
    if (r.target == "/slow") {
      entered.set_value();
      while (!release) std::this_thread::sleep_for(5ms);
    }
    ++calls;
    return Echo(r);
  });
  std::vector<std::future<int>> clients;
  for (int c = 0; c < 5; ++c) {
    clients.push_back(std::async(std::launch::async, [&s] {
      httplib::Client cli("127.0.0.1", s.port());
      cli.set_keep_alive(true);
      int ok = 0;
      for (int i = 0; i < 20; ++i) {
        auto res = cli.Get("/n");
        ok += res && res->status == 200;
      }
      return ok;
    }));
  }
  int ok = 0;
  for (auto& c : clients) ok += c.get();
  EXPECT_EQ(ok, 100);
  auto slow = std::async(std::launch::async, [&] {
    httplib::Client cli("127.0.0.1", s.port());
    cli.set_read_timeout(10, 0);
    auto res = cli.Get("/slow");
    return res ? res->status : -1;
  });
  entered.get_future().wait();
  s.server().Stop();
  release = true;
  EXPECT_EQ(slow.get(), 200) << "a request in flight at Stop finishes";
  EXPECT_TRUE(s.RunReturnsWithin(10s));
  EXPECT_EQ(calls.load(), 101);
}

TEST(HttpServerTest, KeepAliveServesTwoRequestsOnOneConnection) {
  RunningServer s(TestOptions(), Echo);
  httplib::Client cli("127.0.0.1", s.port());
  cli.set_keep_alive(true);
  auto first = cli.Get("/one");
  auto second = cli.Get("/two");
  ASSERT_TRUE(first);
  ASSERT_TRUE(second);
  EXPECT_EQ(json::parse(second->body)["target"], "/two");
  // Same client port: the same TCP connection.
  EXPECT_EQ(json::parse(first->body)["remote"], json::parse(second->body)["remote"]);
}

TEST(HttpServerTest, StopMakesRunReturnEvenWithAnIdleKeepAliveConnection) {
  RunningServer s(TestOptions(), Echo);
  httplib::Client cli("127.0.0.1", s.port());
  cli.set_keep_alive(true);
  ASSERT_TRUE(cli.Get("/warm"));
  s.server().Stop();
  EXPECT_TRUE(s.RunReturnsWithin(10s));
  s.server().Stop();  // idempotent
}

TEST(HttpServerTest, StopLetsAnInFlightRequestFinish) {
  std::promise<void> entered;
  std::atomic<bool> release{false};
  RunningServer s(TestOptions(), [&](const ApiRequest& r) {
    entered.set_value();
    while (!release) std::this_thread::sleep_for(5ms);
    return Echo(r);
  });
  auto reply = std::async(std::launch::async, [&] {
    httplib::Client cli("127.0.0.1", s.port());
    cli.set_read_timeout(10, 0);
    return cli.Get("/slow");
  });
  entered.get_future().wait();
  s.server().Stop();
  release = true;
  auto res = reply.get();
  ASSERT_TRUE(res) << httplib::to_string(res.error());
  EXPECT_EQ(res->status, 200);
  EXPECT_EQ(res->get_header_value("Connection"), "close");
  EXPECT_TRUE(s.RunReturnsWithin(10s));
}

TEST(HttpServerTest, StopBeforeRunReturnsAtOnce) {
  HttpServer server(TestOptions(), Echo);
  ASSERT_TRUE(server.Listen().ok());
  server.Stop();
  auto done = std::async(std::launch::async, [&] { server.Run(); });
  EXPECT_EQ(done.wait_for(10s), std::future_status::ready);
}

TEST(HttpServerTest, SigtermStopsTheServer) {
  HttpServerOptions options = TestOptions();
  options.handle_signals = true;
  HttpServer server(options, Echo);
  ASSERT_TRUE(server.Listen().ok());  // signals are caught from here on
  auto done = std::async(std::launch::async, [&] { server.Run(); });
  httplib::Client cli("127.0.0.1", server.port());
  ASSERT_TRUE(cli.Get("/before"));
  std::raise(SIGTERM);
  EXPECT_EQ(done.wait_for(10s), std::future_status::ready);
}

// What the watchdog asks: the event loop answers while it runs, not before Run(), not while a
// handler holds its only thread, and not after it returned.
TEST(HttpServerTest, ResponsiveSaysWhetherTheEventLoopRunsAPostedTask) {
  std::promise<void> entered;
  std::atomic<bool> release{false};
  HttpServer server(TestOptions(), [&](const ApiRequest& r) {
    entered.set_value();
    while (!release) std::this_thread::sleep_for(5ms);
    return Echo(r);
  });
  ASSERT_TRUE(server.Listen().ok());
  EXPECT_FALSE(server.Responsive(100ms)) << "nothing runs the loop before Run()";
  auto done = std::async(std::launch::async, [&] { server.Run(); });
  EXPECT_TRUE(server.Responsive(5000ms));
  auto reply = std::async(std::launch::async, [&] {
    httplib::Client cli("127.0.0.1", server.port());
    cli.set_read_timeout(10, 0);
    return cli.Get("/wedged");
  });
  entered.get_future().wait();
  EXPECT_FALSE(server.Responsive(200ms)) << "a handler holds the loop's one thread";
  release = true;
  ASSERT_TRUE(reply.get());
  EXPECT_TRUE(server.Responsive(5000ms));
  server.Stop();
  ASSERT_EQ(done.wait_for(10s), std::future_status::ready);
  EXPECT_FALSE(server.Responsive(100ms));
}

// SIGHUP with on_hangup set: the hook runs and the server goes on serving.
TEST(HttpServerTest, SighupCallsTheHangupHookAndKeepsServing) {
  HttpServerOptions options = TestOptions();
  options.handle_signals = true;
  std::promise<void> hung_up;
  options.on_hangup = [&] { hung_up.set_value(); };
  HttpServer server(options, Echo);
  ASSERT_TRUE(server.Listen().ok());
  auto done = std::async(std::launch::async, [&] { server.Run(); });
  std::raise(SIGHUP);
  EXPECT_EQ(hung_up.get_future().wait_for(10s), std::future_status::ready);
  httplib::Client cli("127.0.0.1", server.port());
  auto res = cli.Get("/after");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  EXPECT_NE(done.wait_for(100ms), std::future_status::ready);
  server.Stop();
  EXPECT_EQ(done.wait_for(10s), std::future_status::ready);
}

TEST(HttpServerTest, ConnectionsPastTheLimitGet503) {
  HttpServerOptions options = TestOptions();
  options.max_connections = 1;
  RunningServer s(options, Echo);
  httplib::Client first("127.0.0.1", s.port());
  first.set_keep_alive(true);
  ASSERT_TRUE(first.Get("/hold"));  // stays open, idle
  httplib::Client second("127.0.0.1", s.port());
  auto res = second.Get("/refused");
  ASSERT_TRUE(res) << httplib::to_string(res.error());
  EXPECT_EQ(res->status, 503);
  EXPECT_EQ(json::parse(res->body)["error"]["code"], "unavailable");
}

TEST(HttpServerTest, ListenFailsWithAMessageWhenThePortIsTaken) {
  RunningServer s(TestOptions(), Echo);
  HttpServerOptions options = TestOptions();
  options.port = static_cast<std::uint16_t>(s.port());
  HttpServer clash(options, Echo);
  Status st = clash.Listen();
  EXPECT_EQ(st.code(), StatusCode::kUnavailable);
  EXPECT_NE(st.message().find("cannot listen on 127.0.0.1:"), std::string::npos) << st.message();
  clash.Run();  // returns at once: never listened
}

TEST(HttpServerOptionsForTest, ParsesListenAndTimeouts) {
  ApiConfig api;
  api.listen = "[::1]:8480";
  api.read_timeout = 1500ms;
  auto o = HttpServerOptionsFor(api);
  ASSERT_TRUE(o.ok());
  EXPECT_EQ(o->host, "::1");
  EXPECT_EQ(o->port, 8480);
  EXPECT_EQ(o->read_timeout, 1500ms);
  for (const char* bad : {"8480", ":8480", "host:", "host:99999", "host:80x"}) {
    api.listen = bad;
    EXPECT_FALSE(HttpServerOptionsFor(api).ok()) << bad;
  }
}

}  // namespace
}  // namespace icewarden

namespace icewarden {
namespace {

// Yields `parts` one per poll, then ends (or, with `endless`, keeps yielding nothing).
class PartsStream final : public ApiStream {
 public:
  PartsStream(std::vector<std::string> parts, bool endless)
      : parts_(std::move(parts)), endless_(endless) {}
  std::optional<std::string> Poll() override {
    if (next_ < parts_.size()) return parts_[next_++];
    if (endless_) return std::string();
    return std::nullopt;
  }

 private:
  std::vector<std::string> parts_;
  std::size_t next_ = 0;
  bool endless_;
};

HttpServer::Handler Streaming(std::vector<std::string> parts, bool endless) {
  return [parts, endless](const ApiRequest&) {
    ApiResponse res;
    res.content_type = "text/event-stream";
    res.body = "first\n";
    res.stream = std::make_shared<PartsStream>(parts, endless);
    return res;
  };
}

// A stream's text arrives as it is yielded, after the headers and the body, with no
// Content-Length; the connection closes when the stream ends.
TEST(HttpServerStreamTest, WritesWhatTheStreamYieldsUntilItEnds) {
  HttpServerOptions o = TestOptions();
  o.stream_poll = 10ms;
  RunningServer server(o, Streaming({"a\n", "", "b\n"}, false));
  httplib::Client client("127.0.0.1", server.port());
  std::string received;
  auto res = client.Get("/api/v1/events", [&](const char* data, size_t n) {
    received.append(data, n);
    return true;
  });
  ASSERT_TRUE(res) << httplib::to_string(res.error());
  EXPECT_EQ(res->status, 200);
  EXPECT_EQ(res->get_header_value("Content-Type"), "text/event-stream");
  EXPECT_FALSE(res->has_header("Content-Length"));
  EXPECT_EQ(received, "first\na\nb\n");
}

// Stopping the server ends a stream that would go on forever, and Run() returns.
TEST(HttpServerStreamTest, StopEndsAnEndlessStream) {
  HttpServerOptions o = TestOptions();
  o.stream_poll = 10ms;
  RunningServer server(o, Streaming({"tick\n"}, true));
  std::promise<void> got_first;
  std::atomic<bool> once{false};
  auto reader = std::async(std::launch::async, [&] {
    httplib::Client client("127.0.0.1", server.port());
    client.set_read_timeout(10, 0);
    return client.Get("/api/v1/events", [&](const char*, size_t) {
      if (!once.exchange(true)) got_first.set_value();
      return true;
    });
  });
  ASSERT_EQ(got_first.get_future().wait_for(5s), std::future_status::ready);
  server.server().Stop();
  EXPECT_TRUE(server.RunReturnsWithin(3s));
  EXPECT_EQ(reader.wait_for(3s), std::future_status::ready) << "the stream was not closed";
}

// TLS on the listener, with certificates the openssl CLI makes for the suite.
class HttpServerTlsTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (!testing::HaveOpenSslCli()) return;
    dir_ = testing::MakeTempDir("http-server-tls");
    std::string error;
    ASSERT_TRUE(testing::MakeTestCa(dir_, "ca", &ca_, &error)) << error;
    ASSERT_TRUE(
        testing::MakeTestLeaf(dir_, "server", ca_, "IP:127.0.0.1", "serverAuth", &server_, &error))
        << error;
    ASSERT_TRUE(
        testing::MakeTestLeaf(dir_, "client", ca_, "DNS:client", "clientAuth", &client_, &error))
        << error;
  }
  static void TearDownTestSuite() {
    if (!dir_.empty()) std::filesystem::remove_all(dir_);
  }
  void SetUp() override {
    if (!testing::HaveOpenSslCli()) GTEST_SKIP() << "openssl CLI is not installed";
  }
  static HttpServerOptions TlsOptions(const std::string& client_ca = "") {
    HttpServerOptions o = TestOptions();
    std::ifstream key(server_.key);
    o.tls = HttpServerTls{server_.cert, std::string(std::istreambuf_iterator<char>(key), {}),
                          client_ca};
    return o;
  }
  static std::unique_ptr<httplib::Client> Trusting(int port) {
    auto c = std::make_unique<httplib::Client>("https://127.0.0.1:" + std::to_string(port));
    c->set_ca_cert_path(ca_.cert);
    c->set_connection_timeout(2);
    c->set_read_timeout(2);
    return c;
  }

  static std::string dir_;
  static testing::TestCa ca_;
  static testing::TestLeaf server_, client_;
};

std::string HttpServerTlsTest::dir_;
testing::TestCa HttpServerTlsTest::ca_;
testing::TestLeaf HttpServerTlsTest::server_, HttpServerTlsTest::client_;

TEST_F(HttpServerTlsTest, ServesHttpsToAClientThatTrustsTheCaAndNothingInCleartext) {
  RunningServer running(TlsOptions(), Echo);
  auto r = Trusting(running.port())->Get("/v1/hello");
  ASSERT_TRUE(r) << httplib::to_string(r.error());
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(json::parse(r->body)["target"], "/v1/hello");

  httplib::Client plain("127.0.0.1", running.port());
  plain.set_read_timeout(2);
  EXPECT_FALSE(plain.Get("/v1/hello")) << "a cleartext request is not answered";

  auto keep = Trusting(running.port());
  keep->set_keep_alive(true);
  EXPECT_EQ(keep->Get("/one")->status, 200);
  EXPECT_EQ(keep->Get("/two")->status, 200);
}

TEST_F(HttpServerTlsTest, StopClosesAConnectionThatNeverFinishedItsHandshake) {
  RunningServer running(TlsOptions(), Echo);
  RawConnection idle(running.port());
  ASSERT_TRUE(idle.connected());
  running.server().Stop();
  EXPECT_TRUE(running.RunReturnsWithin(1500ms)) << "shutdown waited on the handshake";
}

TEST_F(HttpServerTlsTest, AClientCaDemandsACertificateItSigned) {
  RunningServer running(TlsOptions(ca_.cert), Echo);
  auto anonymous = Trusting(running.port())->Get("/v1/hello");
  EXPECT_FALSE(anonymous) << "answered " << anonymous->status << " without a client certificate";

  httplib::Client known("https://127.0.0.1:" + std::to_string(running.port()), client_.cert,
                        client_.key);
  known.set_ca_cert_path(ca_.cert);
  known.set_connection_timeout(2);
  auto r = known.Get("/v1/hello");
  ASSERT_TRUE(r) << httplib::to_string(r.error());
  EXPECT_EQ(r->status, 200);
}

TEST_F(HttpServerTlsTest, AKeyThatIsNotTheCertificatesFailsListenNamingTheFile) {
  HttpServerOptions o = TlsOptions();
  std::ifstream other(client_.key);
  o.tls->key_pem = std::string(std::istreambuf_iterator<char>(other), {});
  HttpServer server(o, Echo);
  Status s = server.Listen();
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s.ToString();
  EXPECT_NE(s.message().find(server_.cert), std::string::npos) << s.message();
}

}  // namespace
}  // namespace icewarden
