// BeastTransport's plain-http path on the wire (health/plain_http_client.h): the exact bytes
// of a request, responses that arrive in pieces, bodies larger than a socket buffer both
// ways, chunked and read-until-close bodies, HEAD, and what a stall or a cut-off response
// reports (DESIGN.md rule 7: only silence may read as silence). The server is a scripted
// raw TCP server on loopback, so every byte and pause is the test's.
#include <utility>  // before Asio (Boost 1.74 + C++20)

#include <gtest/gtest.h>
#include <sys/socket.h>

#include <atomic>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/read_until.hpp>
#include <boost/asio/streambuf.hpp>
#include <boost/asio/write.hpp>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "health/beast_transport.h"

namespace icewarden {
namespace {

using namespace std::chrono_literals;
namespace asio = boost::asio;
using asio::ip::tcp;

// Accepts connections one at a time; on each, reads requests (headers and a Content-Length
// body) and hands each to `reply`, which writes what it likes and returns whether to read
// another request on that connection.
class ScriptedServer {
 public:
  using Reply = std::function<bool(tcp::socket&, const std::string& request)>;

  explicit ScriptedServer(Reply reply)
      : reply_(std::move(reply)), acceptor_(io_, {asio::ip::make_address("127.0.0.1"), 0}) {
    thread_ = std::thread([this] { Serve(); });
  }
  ~ScriptedServer() {
    stop_ = true;
    {
      std::lock_guard lock(mu_);
      if (active_fd_ >= 0) ::shutdown(active_fd_, SHUT_RDWR);  // unblocks a read
    }
    asio::io_context poke_io;
    tcp::socket poke(poke_io);
    boost::system::error_code ec;
    poke.connect(acceptor_.local_endpoint(), ec);  // unblocks accept()
    thread_.join();
  }
  std::string Url(const std::string& path) const {
    return "http://127.0.0.1:" + std::to_string(acceptor_.local_endpoint().port()) + path;
  }
  int connections() const { return connections_; }
  std::vector<std::string> requests() const {
    std::lock_guard lock(mu_);
    return requests_;
  }

 private:
  std::optional<std::string> ReadRequest(tcp::socket& s, asio::streambuf& buf) {
    boost::system::error_code ec;
    std::size_t header_end = asio::read_until(s, buf, "\r\n\r\n", ec);
    if (ec) return std::nullopt;
    std::string head(asio::buffers_begin(buf.data()),
                     asio::buffers_begin(buf.data()) + static_cast<long>(header_end));
    buf.consume(header_end);
    std::size_t length = 0;
    std::string lower = head;
    for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (auto at = lower.find("\r\ncontent-length: "); at != std::string::npos)
      length = std::stoul(lower.substr(at + 18));
    if (buf.size() < length) asio::read(s, buf, asio::transfer_exactly(length - buf.size()), ec);
    if (ec) return std::nullopt;
    std::string body(asio::buffers_begin(buf.data()),
                     asio::buffers_begin(buf.data()) + static_cast<long>(length));
    buf.consume(length);
    return head + body;
  }
  void Serve() {
    while (true) {
      tcp::socket s(io_);
      boost::system::error_code ec;
      acceptor_.accept(s, ec);
      if (ec || stop_) return;
      ++connections_;
      {
        std::lock_guard lock(mu_);
        active_fd_ = s.native_handle();
      }
      asio::streambuf buf;
      while (auto request = ReadRequest(s, buf)) {
        {
          std::lock_guard lock(mu_);
          requests_.push_back(*request);
        }
        if (stop_ || !reply_(s, *request)) break;
      }
      std::lock_guard lock(mu_);
      active_fd_ = -1;
    }
  }

  Reply reply_;
  asio::io_context io_;
  tcp::acceptor acceptor_;
  std::thread thread_;
  std::atomic<bool> stop_{false};
  std::atomic<int> connections_{0};
  mutable std::mutex mu_;
  int active_fd_ = -1;
  std::vector<std::string> requests_;
};

void Write(tcp::socket& s, const std::string& bytes) {
  boost::system::error_code ec;
  asio::write(s, asio::buffer(bytes), ec);
}

std::string Ok(const std::string& body) {
  return "HTTP/1.1 200 OK\r\nContent-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
}

Result<HttpResponse> WireRoundTrip(asio::io_context& io, HttpTransport& transport, HttpRequest req,
                                   std::chrono::milliseconds deadline,
                                   bool* inside_send = nullptr) {
  std::optional<Result<HttpResponse>> out;
  bool sending = true;
  transport.Send(std::move(req), deadline, [&](Result<HttpResponse> r) {
    if (inside_send) *inside_send = sending;
    out.emplace(std::move(r));
  });
  sending = false;
  io.run_for(20s);
  io.restart();
  if (!out) return Status::Internal("test: no callback within 20 s");
  return std::move(*out);
}

HttpRequest WireGet(const std::string& url) {
  HttpRequest req;
  req.url = url;
  return req;
}

TEST(BeastTransportWireTest, RequestBytesAreExactlyWhatTheCallerAsked) {
  ScriptedServer server([](tcp::socket& s, const std::string&) {
    Write(s, Ok("ok"));
    return true;
  });
  asio::io_context io;
  auto transport = MakeBeastTransport(io);
  HttpRequest post;
  post.method = "POST";
  post.url = server.Url("/v1/w/namespaces/a%1Fb/tables/t");
  post.headers.Set("Idempotency-Key", "k-1");
  post.headers.Set("Host", "spoofed.example");  // the URL names the host
  post.headers.Set("Connection", "close");      // the pool decides
  post.headers.Set("Content-Length", "999");    // the body decides
  ASSERT_TRUE(WireRoundTrip(io, *transport, post, 5s).ok());
  HttpRequest empty_post = post;
  empty_post.body.clear();
  post.body = R"({"a":1})";
  ASSERT_TRUE(WireRoundTrip(io, *transport, post, 5s).ok());
  ASSERT_TRUE(
      WireRoundTrip(io, *transport, WireGet(server.Url("/v1/config?warehouse=w")), 5s).ok());

  const std::string host = server.Url("").substr(7);
  auto requests = server.requests();
  ASSERT_EQ(requests.size(), 3u);
  EXPECT_EQ(requests[0],
            "POST /v1/w/namespaces/a%1Fb/tables/t HTTP/1.1\r\nIdempotency-Key: k-1\r\n"
            "Host: " +
                host + "\r\nUser-Agent: icewarden\r\nContent-Length: 0\r\n\r\n");
  EXPECT_EQ(requests[1],
            "POST /v1/w/namespaces/a%1Fb/tables/t HTTP/1.1\r\nIdempotency-Key: k-1\r\n"
            "Host: " +
                host +
                "\r\nUser-Agent: icewarden\r\nContent-Length: 7\r\n\r\n"
                R"({"a":1})");
  EXPECT_EQ(requests[2], "GET /v1/config?warehouse=w HTTP/1.1\r\nHost: " + host +
                             "\r\nUser-Agent: icewarden\r\n\r\n");
  EXPECT_EQ(server.connections(), 1) << "keep-alive: one connection for the three";
}

TEST(BeastTransportWireTest, AHeaderWithALineBreakIsRefusedAndNothingIsSent) {
  ScriptedServer server([](tcp::socket& s, const std::string&) {
    Write(s, Ok("ok"));
    return true;
  });
  asio::io_context io;
  auto transport = MakeBeastTransport(io);
  HttpRequest req = WireGet(server.Url("/x"));
  req.headers.Set("X-Trace", "a\r\nAuthorization: Bearer stolen");
  bool inside_send = true;
  auto r = WireRoundTrip(io, *transport, req, 5s, &inside_send);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_FALSE(inside_send) << "the callback runs on the io_context, never inside Send";
  EXPECT_FALSE(RequestMayHaveBeenDelivered(r.status()));
  EXPECT_EQ(server.connections(), 0);

  // The same check for https, before any handshake, and for the method and the path.
  HttpRequest tls = req;
  tls.url = "https://127.0.0.1:" + server.Url("").substr(17) + "/x";
  auto over_tls = WireRoundTrip(io, *transport, tls, 5s);
  EXPECT_EQ(over_tls.status().code(), StatusCode::kInvalidArgument) << over_tls.status().ToString();
  EXPECT_NE(over_tls.status().message().find("X-Trace"), std::string::npos)
      << over_tls.status().ToString();
  HttpRequest method = WireGet(server.Url("/x"));
  method.method = "GET /y HTTP/1.1\r\nX:";
  EXPECT_EQ(WireRoundTrip(io, *transport, method, 5s).status().code(),
            StatusCode::kInvalidArgument);
  HttpRequest path = WireGet(server.Url("/x y"));
  EXPECT_EQ(WireRoundTrip(io, *transport, path, 5s).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(server.connections(), 0);
}

TEST(BeastTransportWireTest, BodiesLargerThanASocketBufferBothWaysArriveWhole) {
  // Written in three pieces with pauses, so the client reads it over many wakeups.
  std::string big(3 * 1024 * 1024 + 17, '\0');
  for (std::size_t i = 0; i < big.size(); ++i) big[i] = static_cast<char>('a' + i % 26);
  ScriptedServer server([&](tcp::socket& s, const std::string& request) {
    const std::string response = Ok(big);
    const std::size_t third = response.size() / 3;
    Write(s, response.substr(0, 10));  // not even the status line
    std::this_thread::sleep_for(20ms);
    Write(s, response.substr(10, third));
    std::this_thread::sleep_for(20ms);
    Write(s, response.substr(10 + third));
    return request.size() < 100;  // nothing more after the upload
  });
  asio::io_context io;
  auto transport = MakeBeastTransport(io);
  auto r = WireRoundTrip(io, *transport, WireGet(server.Url("/big")), 10s);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->body.size(), big.size());
  EXPECT_TRUE(r->body == big);

  HttpRequest upload;
  upload.method = "PUT";
  upload.url = server.Url("/upload");
  upload.body.assign(8 * 1024 * 1024, 'u');  // far over the kernel's send buffer
  auto up = WireRoundTrip(io, *transport, upload, 10s);
  ASSERT_TRUE(up.ok()) << up.status().ToString();
  auto requests = server.requests();
  ASSERT_EQ(requests.size(), 2u);
  EXPECT_TRUE(requests[1].ends_with("\r\n\r\n" + upload.body));
}

TEST(BeastTransportWireTest, ChunkedAndReadUntilCloseBodies) {
  ScriptedServer server([](tcp::socket& s, const std::string& request) {
    if (request.starts_with("GET /chunked")) {
      Write(s, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n");
      std::this_thread::sleep_for(20ms);
      Write(s, "6\r\n world\r\n0\r\n\r\n");
      return true;
    }
    // No length, no chunks: the body ends when the server closes.
    Write(s, "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nuntil ");
    std::this_thread::sleep_for(20ms);
    Write(s, "close");
    return false;
  });
  asio::io_context io;
  auto transport = MakeBeastTransport(io);
  auto chunked = WireRoundTrip(io, *transport, WireGet(server.Url("/chunked")), 5s);
  ASSERT_TRUE(chunked.ok()) << chunked.status().ToString();
  EXPECT_EQ(chunked->body, "hello world");
  auto eof = WireRoundTrip(io, *transport, WireGet(server.Url("/eof")), 5s);
  ASSERT_TRUE(eof.ok()) << eof.status().ToString();
  EXPECT_EQ(eof->body, "until close");
  auto again = WireRoundTrip(io, *transport, WireGet(server.Url("/chunked")), 5s);
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(server.connections(), 2) << "the chunked one was reused, the closed one was not";
}

TEST(BeastTransportWireTest, HeadReadsNoBodyAndKeepsTheConnection) {
  ScriptedServer server([](tcp::socket& s, const std::string& request) {
    if (request.starts_with("HEAD "))
      Write(s, "HTTP/1.1 200 OK\r\nContent-Length: 1000\r\nETag: \"m-7\"\r\n\r\n");
    else
      Write(s, Ok("body"));
    return true;
  });
  asio::io_context io;
  auto transport = MakeBeastTransport(io);
  HttpRequest head = WireGet(server.Url("/t"));
  head.method = "HEAD";
  auto h = WireRoundTrip(io, *transport, head, 5s);
  ASSERT_TRUE(h.ok()) << h.status().ToString();
  EXPECT_EQ(h->status, 200);
  EXPECT_EQ(h->body, "");
  EXPECT_EQ(h->headers.Get("ETag"), "\"m-7\"");
  auto g = WireRoundTrip(io, *transport, WireGet(server.Url("/t")), 5s);
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  EXPECT_EQ(g->body, "body");
  EXPECT_EQ(server.connections(), 1);
}

TEST(BeastTransportWireTest, AResponseThatStallsMidBodyTimesOutAsAnAnswer) {
  ScriptedServer server([](tcp::socket& s, const std::string&) {
    Write(s, "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc");
    std::this_thread::sleep_for(1s);
    return false;
  });
  asio::io_context io;
  auto transport = MakeBeastTransport(io);
  auto r = WireRoundTrip(io, *transport, WireGet(server.Url("/stall")), 300ms);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(),
            "read " + server.Url("").substr(7) + ": deadline of 300ms exceeded");
  EXPECT_EQ(r.status().reply(), PeerReply::kAnswered) << "a server that sent bytes is alive";
}

TEST(BeastTransportWireTest, ACutOffResponseIsAnAnswerAndNotHttpIsUnparsed) {
  ScriptedServer server([](tcp::socket& s, const std::string& request) {
    if (request.starts_with("GET /cut"))
      Write(s, "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc");
    else
      Write(s, "SSH-2.0-OpenSSH_9.2\r\n\r\n");
    return false;
  });
  asio::io_context io;
  auto transport = MakeBeastTransport(io);
  auto cut = WireRoundTrip(io, *transport, WireGet(server.Url("/cut")), 5s);
  ASSERT_FALSE(cut.ok());
  EXPECT_TRUE(cut.status().message().starts_with("read 127.0.0.1:")) << cut.status().message();
  EXPECT_EQ(cut.status().reply(), PeerReply::kAnswered) << cut.status().ToString();
  auto garbage = WireRoundTrip(io, *transport, WireGet(server.Url("/ssh")), 5s);
  ASSERT_FALSE(garbage.ok());
  EXPECT_EQ(garbage.status().reply(), PeerReply::kUnparsed) << garbage.status().ToString();
}

}  // namespace
}  // namespace icewarden
