#include "health/plain_http_client.h"

#include <utility>  // before Asio (Boost 1.74)

#include <sys/socket.h>

#include <algorithm>
#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/string_body.hpp>
#include <cerrno>
#include <optional>

#include "health/beast_transport.h"
#include "health/http_url.h"
#include "health/idle_pool.h"

namespace icewarden {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
using boost::system::error_code;
using Steady = std::chrono::steady_clock;

// Enough for a LoadTableResult of a small table in one recv; larger bodies grow the buffer.
constexpr std::size_t kReadChunk = 16 * 1024;

struct Connection {
  explicit Connection(asio::io_context& io) : socket(io), timer(io) {}
  ~Connection() { Close(); }
  void Close() {
    error_code ec;
    if (socket.is_open()) {
      socket.shutdown(tcp::socket::shutdown_both, ec);
      socket.close(ec);
    }
  }
  tcp::socket socket;
  asio::steady_timer timer;   // the current exchange's deadline
  beast::flat_buffer buffer;  // bytes read and not yet parsed; empty between exchanges
};

// The server has neither closed the idle connection nor sent anything on it.
bool LooksAlive(const std::unique_ptr<Connection>& conn) {
  if (!conn->socket.is_open()) return false;
  char c;
  ssize_t n = ::recv(conn->socket.native_handle(), &c, 1, MSG_PEEK | MSG_DONTWAIT);
  return n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
}

bool Skipped(std::string_view name) {
  // The client writes these itself.
  for (std::string_view own : {"Host", "Content-Length", "Connection", "Transfer-Encoding"}) {
    if (EqualsIgnoreCase(name, own)) return true;
  }
  return false;
}

// "METHOD target HTTP/1.1", the caller's fields, Host, User-Agent, Content-Length, body.
// `request` has passed CheckRequest.
std::string Serialize(const ParsedUrl& url, const HttpRequest& request, bool pooling) {
  std::string out;
  out.reserve(256 + request.body.size());
  out.append(request.method).append(" ").append(url.target).append(" HTTP/1.1\r\n");
  bool user_agent = false;
  for (const auto& [name, value] : request.headers.fields()) {
    if (Skipped(name)) continue;
    user_agent = user_agent || EqualsIgnoreCase(name, "User-Agent");
    out.append(name).append(": ").append(value).append("\r\n");
  }
  out.append("Host: ").append(url.host_header).append("\r\n");
  if (!user_agent) out.append("User-Agent: icewarden\r\n");
  if (!pooling) out.append("Connection: close\r\n");  // HTTP/1.1 is keep-alive by default
  const bool has_body = !request.body.empty() || request.method == "POST" ||
                        request.method == "PUT" || request.method == "PATCH";
  if (has_body)
    out.append("Content-Length: ").append(std::to_string(request.body.size())).append("\r\n");
  out.append("\r\n").append(request.body);
  return out;
}

}  // namespace

struct PlainHttpClient::Impl {
  Impl(asio::io_context& io_context, const PoolOptions& pool) : io(io_context), idle(pool) {}

  asio::io_context& io;
  IdlePool<std::unique_ptr<Connection>> idle;
};

namespace {

// One request and its response, from the first byte written to `done`.
class Exchange : public std::enable_shared_from_this<Exchange> {
 public:
  Exchange(PlainHttpClient::Impl& client, ParsedUrl url, std::string wire, bool idempotent,
           bool head, std::chrono::milliseconds deadline,
           std::function<void(Result<HttpResponse>)> done)
      : client_(client),
        url_(std::move(url)),
        where_(Where(url_)),
        key_("http://" + where_),
        wire_(std::move(wire)),
        idempotent_(idempotent),
        head_(head),
        deadline_(deadline),
        expiry_(Steady::now() + deadline),
        done_(std::move(done)) {}

  void Start() {
    conn_ = client_.idle.enabled() ? client_.idle.Take(key_, LooksAlive) : nullptr;
    reused_ = conn_ != nullptr;
    starting_ = true;
    if (!conn_) {
      Open();
    } else {
      ArmTimer();
      Write();
    }
    starting_ = false;
  }

 private:
  void ArmTimer() {
    conn_->timer.expires_at(expiry_);
    conn_->timer.async_wait([self = shared_from_this()](error_code ec) { self->OnTimer(ec); });
  }

  // A timer that fired: whatever is pending is cancelled and fails as timed out. A timer
  // cancelled by the end of the exchange (or of its connection) does nothing.
  void OnTimer(error_code ec) {
    if (ec || finished_) return;
    timed_out_ = true;
    if (resolver_) resolver_->cancel();
    if (conn_) {
      error_code ignored;
      conn_->socket.cancel(ignored);
    }
  }

  void Open() {
    conn_ = std::make_unique<Connection>(client_.io);
    ArmTimer();
    if (endpoints_) {
      Connect();
      return;
    }
    resolver_.emplace(client_.io);
    resolver_->async_resolve(
        url_.host, url_.port,
        [self = shared_from_this()](error_code ec, tcp::resolver::results_type found) {
          self->resolver_.reset();
          if (ec) return self->Fail("resolve", ec, PeerReply::kSilent);
          self->endpoints_ = std::move(found);
          self->Connect();
        });
  }

  void Connect() {
    if (timed_out_) return Fail("connect", asio::error::operation_aborted, PeerReply::kSilent);
    asio::async_connect(conn_->socket, *endpoints_,
                        [self = shared_from_this()](error_code ec, const tcp::endpoint&) {
                          if (ec) return self->Fail("connect", ec, PeerReply::kSilent);
                          error_code ignored;
                          self->conn_->socket.set_option(tcp::no_delay(true), ignored);
                          self->Write();
                        });
  }

  void Write() {
    const int fd = conn_->socket.native_handle();
    while (written_ < wire_.size()) {
      ssize_t n =
          ::send(fd, wire_.data() + written_, wire_.size() - written_, MSG_NOSIGNAL | MSG_DONTWAIT);
      if (n > 0) {
        written_ += static_cast<std::size_t>(n);
        continue;
      }
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
        conn_->socket.async_wait(tcp::socket::wait_write,
                                 [self = shared_from_this()](error_code ec) {
                                   if (ec) return self->FailIo("write", ec);
                                   self->Write();
                                 });
        return;
      }
      return FailIo("write", error_code(errno, boost::system::system_category()));
    }
    parser_.emplace();
    parser_->eager(true);
    parser_->body_limit(kMaxResponseBodyBytes);
    parser_->header_limit(64 * 1024);
    if (head_) parser_->skip(true);
    WaitReadable();
  }

  // The socket's reactor is edge-triggered: wait only after recv(2) found nothing more.
  void WaitReadable() {
    conn_->socket.async_wait(tcp::socket::wait_read, [self = shared_from_this()](error_code ec) {
      if (ec) return self->FailIo("read", ec);
      self->Read();
    });
  }

  void Read() {
    const int fd = conn_->socket.native_handle();
    while (true) {
      auto& buffer = conn_->buffer;
      auto space = buffer.prepare(std::max(kReadChunk, buffer.capacity() - buffer.size()));
      ssize_t n = ::recv(fd, space.data(), space.size(), MSG_DONTWAIT);
      if (n > 0) {
        received_ = true;
        buffer.commit(static_cast<std::size_t>(n));
        if (Parse()) return;  // done, or failed
        continue;
      }
      if (n == 0) return OnEof();
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) return WaitReadable();
      return FailIo("read", error_code(errno, boost::system::system_category()));
    }
  }

  // Feeds the buffer to the parser; true when the exchange has ended.
  bool Parse() {
    auto& buffer = conn_->buffer;
    while (buffer.size() > 0) {
      error_code ec;
      const std::size_t used = parser_->put(buffer.data(), ec);
      buffer.consume(used);
      if (ec == http::error::need_more) return false;
      if (ec) {
        Fail("read", ec, PeerReply::kUnparsed);
        return true;
      }
      if (parser_->is_done()) {
        Complete();
        return true;
      }
      if (used == 0) return false;
    }
    return false;
  }

  void OnEof() {
    if (!received_) return FailIo("read", http::error::end_of_stream);
    error_code ec;
    parser_->put_eof(ec);
    if (!ec && parser_->is_done()) return Complete();
    // A body cut short is an answer; bytes that never became a response header too.
    Fail("read", ec ? ec : http::error::partial_message, PeerReply::kAnswered);
  }

  // An error of the socket (or end of stream before any byte): what the server did depends
  // on whether any of a response came back. A reused connection that failed before any
  // byte may have been closed by the server just as we sent: a GET or HEAD is sent again,
  // once, on a fresh connection.
  void FailIo(const char* phase, error_code ec) {
    if (reused_ && idempotent_ && attempt_ == 0 && !timed_out_ && !received_) {
      ++attempt_;
      reused_ = false;
      written_ = 0;
      parser_.reset();
      conn_.reset();
      Open();
      return;
    }
    Fail(phase, ec, received_ ? PeerReply::kAnswered : PeerReply::kSilent);
  }

  // Only what the deadline cancelled (operation_aborted) reads as a timeout: bytes that
  // failed to parse are that, whenever they came.
  void Fail(const char* phase, error_code ec, PeerReply reply) {
    if (finished_) return;
    const bool timeout = timed_out_ && ec == asio::error::operation_aborted;
    std::string why =
        timeout ? "deadline of " + std::to_string(deadline_.count()) + "ms exceeded" : ec.message();
    Status s = Status::Unavailable(std::string(phase) + " " + where_ + ": " + why);
    if (reused_ && !timeout) s = s.WithMessage(s.message() + " (on a reused connection)");
    Finish(s.WithReply(reply), /*keep=*/false);
  }

  void Complete() {
    auto& res = parser_->get();
    HttpResponse out;
    out.status = static_cast<int>(res.result_int());
    std::optional<std::chrono::seconds> hint;
    for (const auto& field : res) {
      std::string_view value(field.value().data(), field.value().size());
      if (field.name() == http::field::keep_alive) hint = KeepAliveTimeout(value);
      out.headers.Add(std::string(field.name_string()), std::string(value));
    }
    out.body = std::move(res.body());
    const bool keep = client_.idle.enabled() && res.keep_alive() && !parser_->need_eof() &&
                      conn_->buffer.size() == 0;
    Finish(std::move(out), keep, hint);
  }

  // Gives the connection back to the pool (or closes it) before `done` runs, so that a
  // request `done` sends may take it.
  void Finish(Result<HttpResponse> result, bool keep,
              std::optional<std::chrono::seconds> server_timeout = std::nullopt) {
    if (finished_) return;
    finished_ = true;
    if (conn_) {
      conn_->timer.cancel();
      if (keep) {
        client_.idle.Put(key_, std::move(conn_), server_timeout);
      } else {
        conn_.reset();
      }
    }
    // Never inside Send: a write that fails at once on a pooled connection ends here.
    if (starting_) {
      asio::post(client_.io, [done = std::move(done_), r = std::move(result)]() mutable {
        done(std::move(r));
      });
      return;
    }
    auto done = std::move(done_);
    done(std::move(result));
  }

  PlainHttpClient::Impl& client_;
  const ParsedUrl url_;
  const std::string where_;
  const std::string key_;
  const std::string wire_;
  const bool idempotent_;
  const bool head_;
  const std::chrono::milliseconds deadline_;
  const Steady::time_point expiry_;
  std::function<void(Result<HttpResponse>)> done_;

  std::unique_ptr<Connection> conn_;
  std::optional<tcp::resolver> resolver_;
  std::optional<tcp::resolver::results_type> endpoints_;
  std::optional<http::response_parser<http::string_body>> parser_;
  std::size_t written_ = 0;
  int attempt_ = 0;
  bool reused_ = false;
  bool received_ = false;
  bool timed_out_ = false;
  bool finished_ = false;
  bool starting_ = false;
};

}  // namespace

PlainHttpClient::PlainHttpClient(asio::io_context& io, const PoolOptions& pool)
    : impl_(std::make_unique<Impl>(io, pool)) {}

PlainHttpClient::~PlainHttpClient() = default;

void PlainHttpClient::Send(ParsedUrl url, HttpRequest request, std::chrono::milliseconds deadline,
                           std::function<void(Result<HttpResponse>)> done) {
  std::string wire = Serialize(url, request, impl_->idle.enabled());
  const bool idempotent = request.method == "GET" || request.method == "HEAD";
  const bool head = request.method == "HEAD";
  auto exchange = std::make_shared<Exchange>(*impl_, std::move(url), std::move(wire), idempotent,
                                             head, deadline, std::move(done));
  exchange->Start();
}

}  // namespace icewarden
