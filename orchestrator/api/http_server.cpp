#include "orchestrator/api/http_server.h"

// <utility> before Asio: Boost 1.74's awaitable.hpp misses it under GCC 12 with C++20.
#include <utility>

#include <algorithm>
#include <atomic>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <cctype>
#include <charconv>
#include <csignal>
#include <future>
#include <limits>
#include <map>
#include <mutex>
#include <optional>
#include <sstream>
#include <thread>
#include <vector>

namespace icewarden {
namespace {

namespace beast = boost::beast;
namespace http = beast::http;
namespace net = boost::asio;
using tcp = net::ip::tcp;

// After an error response to a request whose body was not read, the server reads and drops
// at most this much before closing, so the client sees the response rather than a reset.
constexpr std::size_t kMaxDrainBytes = 8 << 20;
// How often shutdown checks whether the last connection has gone.
constexpr std::chrono::milliseconds kDrainPoll{20};

std::string RemoteOf(const tcp::socket& socket) {
  beast::error_code ec;
  const tcp::endpoint ep = socket.remote_endpoint(ec);
  if (ec) return "unknown";
  const std::string addr = ep.address().to_string();
  const std::string port = std::to_string(ep.port());
  return ep.address().is_v6() ? "[" + addr + "]:" + port : addr + ":" + port;
}

ApiRequest ToApiRequest(http::request<http::string_body>&& req, std::string remote) {
  ApiRequest out;
  out.method = std::string(req.method_string());
  out.target = std::string(req.target());
  for (const auto& field : req) {
    std::string name(field.name_string());
    std::transform(name.begin(), name.end(), name.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    auto [it, inserted] = out.headers.emplace(std::move(name), std::string(field.value()));
    if (!inserted) it->second += ", " + std::string(field.value());  // RFC 9110 list rule
  }
  out.body = std::move(req.body());
  out.remote = std::move(remote);
  return out;
}

http::response<http::string_body> ToBeastResponse(ApiResponse api, unsigned version,
                                                  bool keep_alive) {
  if (api.status < 100 || api.status > 599) {
    api =
        JsonErrorResponse(500, "internal", "handler returned status " + std::to_string(api.status));
  }
  http::response<http::string_body> res;
  res.version(version);
  res.result(static_cast<unsigned>(api.status));
  res.set(http::field::server, "icewarden");
  res.set(http::field::content_type, api.content_type);
  for (auto& [name, value] : api.headers) res.insert(name, value);
  res.keep_alive(keep_alive);
  res.body() = std::move(api.body);
  res.prepare_payload();
  return res;
}

// What the server asks of a connection, whichever stream it runs on.
class SessionBase {
 public:
  virtual ~SessionBase() = default;
  virtual void Shutdown() = 0;
};

// Everything the server shares between its threads and sessions. HttpServer::Impl is this.
class ServerCore {
 public:
  ServerCore(HttpServerOptions o, HttpServer::Handler h)
      : options(std::move(o)),
        handler(std::move(h)),
        ioc(options.loop_per_thread ? 1 : std::max(1, options.threads)),
        strand(net::make_strand(ioc)),
        acceptor(strand),
        retry_timer(strand),
        drain_timer(strand) {}

  Status Listen();
  void Run();
  void BeginShutdown();

  std::size_t Register(const std::shared_ptr<SessionBase>& session);
  // Where a new connection runs: the shared loop, or the next of the loops (on the strand).
  net::io_context& NextLoop();
  void Unregister(std::size_t id);

  // A response written by the server itself.
  void CountLocal(int status) {
    if (options.on_server_response) options.on_server_response(status);
  }
  ApiResponse LocalError(int status, std::string_view code, const std::string& message) const {
    if (options.local_error) return options.local_error(status, code, message);
    return JsonErrorResponse(status, code, message);
  }

  const HttpServerOptions options;
  const HttpServer::Handler handler;
  std::atomic<bool> stopping{false};
  std::atomic<std::size_t> connections{0};
  std::atomic<std::uint16_t> bound_port{0};

 private:
  void Accept();
  void OnAccept(beast::error_code ec, tcp::socket socket);
  template <class S>
  void Serve(const std::shared_ptr<S>& session, std::size_t open);
  Status LoadTls();
  void WaitForSignal();
  void WaitForConnections(std::chrono::steady_clock::time_point deadline);

  // Declared before the io_context: sessions it still owns when it is destroyed
  // unregister themselves here.
  std::mutex sessions_mu_;
  std::map<std::size_t, std::weak_ptr<SessionBase>> sessions_;
  std::size_t next_session_id_ = 0;

 public:
  net::io_context ioc;
  // options.loop_per_thread: the connections' loops, each run by a thread of its own, kept
  // running (by the guards) until shutdown has let every connection finish.
  std::vector<std::unique_ptr<net::io_context>> loops;
  std::vector<net::executor_work_guard<net::io_context::executor_type>> loop_guards;
  std::size_t next_loop = 0;
  // Serialises the acceptor, the signal set, the timers and shutdown.
  net::strand<net::io_context::executor_type> strand;
  tcp::acceptor acceptor;
  std::optional<net::signal_set> signals;
  std::optional<net::ssl::context> tls;  // set by Listen() when options.tls is
  net::steady_timer retry_timer;
  net::steady_timer drain_timer;
  bool listening = false;
  bool shutdown_started = false;  // on the strand
};

// One TCP connection: reads requests one after another (keep-alive), hands each to the
// handler, writes the answer. Every step runs on the connection's own strand. `Stream` is
// beast::tcp_stream, or an ssl_stream over one when the server has TLS: then the handshake
// comes first, within the read timeout. Timeouts, cancellation and closing act on the TCP
// stream underneath. A TLS connection is closed without a close_notify: every answer but a
// stream has a length, and waiting for a client's close_notify would hold shutdown up.
template <class Stream>
class Session final : public SessionBase, public std::enable_shared_from_this<Session<Stream>> {
  static constexpr bool kTls = !std::is_same_v<Stream, beast::tcp_stream>;

 public:
  template <class... Context>
  Session(tcp::socket&& socket, ServerCore& server, Context&... tls)
      : server_(server), stream_(std::move(socket), tls...), remote_(RemoteOf(tcp().socket())) {
    ++server_.connections;
  }

  ~Session() {
    server_.Unregister(id_);
    --server_.connections;
  }

  void Start() {
    id_ = server_.Register(this->shared_from_this());
    net::dispatch(stream_.get_executor(), [self = this->shared_from_this()] {
      self->Handshake([self] { self->ReadRequest(); });
    });
  }

  // Past the connection limit: say so and close.
  void Reject() {
    net::dispatch(stream_.get_executor(), [self = this->shared_from_this()] {
      self->Handshake([self] {
        self->SendLocal(503, "unavailable", "too many connections; retry later", false);
      });
    });
  }

  // Server shutdown: an idle connection closes now; a request being read or answered
  // finishes first (ReadRequest and OnWrite see `stopping`).
  void Shutdown() override {
    net::post(stream_.get_executor(), [self = this->shared_from_this()] {
      const bool idle = self->handshaking_ || (self->reading_ && self->buffer_.size() == 0 &&
                                               self->parser_ && !self->parser_->got_some());
      if (idle) self->tcp().cancel();
      if (self->stream_timer_) self->stream_timer_->cancel();  // a stream ends now
    });
  }

 private:
  beast::tcp_stream& tcp() { return beast::get_lowest_layer(stream_); }

  template <class Next>
  void Handshake(Next next) {
    if constexpr (kTls) {
      tcp().expires_after(server_.options.read_timeout);
      handshaking_ = true;
      stream_.async_handshake(net::ssl::stream_base::server,
                              [self = this->shared_from_this(), next](beast::error_code ec) {
                                self->handshaking_ = false;
                                if (ec) return self->Close();  // not TLS, or not trusted
                                next();
                              });
    } else {
      next();
    }
  }

  void ReadRequest() {
    if (server_.stopping) return Close();
    parser_.emplace();
    // The header is read unbounded in its body: the request's own bound is set once its target
    // is known (OnHeader), before any of the body is read. Not boost::none: Beast 1.74 compares
    // a Content-Length with an empty optional as larger, refusing every body.
    body_limit_ = nullptr;
    parser_->body_limit(std::numeric_limits<std::uint64_t>::max());
    parser_->header_limit(static_cast<std::uint32_t>(
        std::min<std::size_t>(server_.options.header_limit, UINT32_MAX)));
    tcp().expires_after(server_.options.read_timeout);
    reading_ = true;
    http::async_read_header(
        stream_, buffer_, *parser_,
        beast::bind_front_handler(&Session::OnHeader, this->shared_from_this()));
  }

  // The bound of the request's path: the longest matching prefix of body_limits, or null
  // for body_limit.
  const HttpBodyLimit* BodyLimitFor(std::string_view target) const {
    const HttpBodyLimit* found = nullptr;
    for (const HttpBodyLimit& b : server_.options.body_limits)
      if ((found == nullptr || b.prefix.size() > found->prefix.size()) &&
          target.substr(0, b.prefix.size()) == b.prefix)
        found = &b;
    return found;
  }
  std::size_t BodyLimit() const {
    return body_limit_ ? body_limit_->bytes : server_.options.body_limit;
  }

  void OnHeader(beast::error_code ec, std::size_t bytes) {
    if (ec) return OnRead(ec, bytes);
    const auto& header = parser_->get();
    body_limit_ = BodyLimitFor(std::string_view(header.target().data(), header.target().size()));
    if (auto length = parser_->content_length(); length && *length > BodyLimit())
      return OnRead(http::error::body_limit, bytes);
    parser_->body_limit(BodyLimit());  // what is left of the body, chunked or not
    http::async_read(stream_, buffer_, *parser_,
                     beast::bind_front_handler(&Session::OnRead, this->shared_from_this()));
  }

  void OnRead(beast::error_code ec, std::size_t) {
    reading_ = false;
    if (ec == http::error::body_limit) {
      std::string message = "request body exceeds ";
      message.append(std::to_string(BodyLimit())).append(" bytes");
      if (body_limit_ && !body_limit_->advice.empty())
        message.append("; ").append(body_limit_->advice);
      return SendLocal(413, "payload_too_large", message, true);
    }
    if (ec == http::error::header_limit) {
      return SendLocal(431, "request_header_fields_too_large",
                       "request line and headers exceed " +
                           std::to_string(server_.options.header_limit) + " bytes",
                       true);
    }
    if (ec == http::error::end_of_stream || ec == http::error::partial_message) return Close();
    if (ec && ec.category() == http::make_error_code(http::error::bad_method).category()) {
      return SendLocal(400, "bad_request", "malformed HTTP request: " + ec.message(), true);
    }
    if (ec) return Close();  // timeout, reset, cancelled by shutdown

    http::request<http::string_body> req = parser_->release();
    const unsigned version = req.version();
    const bool keep_alive = req.keep_alive();
    ApiResponse answer;
    try {
      answer = server_.handler(ToApiRequest(std::move(req), remote_));
    } catch (const std::exception& e) {
      answer = server_.LocalError(500, "internal", std::string("handler failed: ") + e.what());
    } catch (...) {
      answer = server_.LocalError(500, "internal", "handler failed");
    }
    if (answer.stream && answer.status == 200) return StartStream(std::move(answer), version);
    const bool keep = keep_alive && !server_.stopping;
    Write(ToBeastResponse(std::move(answer), version, keep), keep ? After::kRead : After::kClose);
  }

  // A streamed response: the headers and the first body text, then whatever the stream's
  // Poll() returns every stream_poll, until it ends, a write fails (the client went away)
  // or the server stops. No Content-Length; the connection closes at the end.
  void StartStream(ApiResponse answer, unsigned version) {
    stream_source_ = std::move(answer.stream);
    std::string first = std::move(answer.body);
    answer.body.clear();
    http::response<http::string_body> head = ToBeastResponse(std::move(answer), version, false);
    head.body().clear();
    head.erase(http::field::content_length);
    std::string text;
    {
      std::ostringstream out;
      out << head.base();
      text = out.str();
    }
    text += first;
    StreamWrite(std::move(text));
  }

  void StreamWrite(std::string text) {
    if (text.empty()) return StreamWait();
    stream_text_ = std::move(text);
    tcp().expires_after(server_.options.write_timeout);
    net::async_write(stream_, net::buffer(stream_text_),
                     [self = this->shared_from_this()](beast::error_code ec, std::size_t) {
                       if (ec) return self->Close();
                       self->StreamWait();
                     });
  }

  void StreamWait() {
    if (server_.stopping) return Close();
    if (!stream_timer_) stream_timer_.emplace(stream_.get_executor());
    stream_timer_->expires_after(server_.options.stream_poll);
    stream_timer_->async_wait([self = this->shared_from_this()](beast::error_code ec) {
      if (ec || self->server_.stopping) return self->Close();
      std::optional<std::string> more;
      try {
        more = self->stream_source_->Poll();
      } catch (...) {
        more.reset();
      }
      if (!more) return self->Close();
      self->StreamWrite(std::move(*more));
    });
  }

  enum class After { kRead, kClose, kDrain };

  // `drain`: the request was not read to its end, so drop what the client still sends
  // after the answer instead of resetting the connection under it.
  void SendLocal(int status, std::string_view code, const std::string& message, bool drain) {
    server_.CountLocal(status);
    Write(ToBeastResponse(server_.LocalError(status, code, message), 11, false),
          drain ? After::kDrain : After::kClose);
  }

  void Write(http::response<http::string_body>&& res, After after) {
    response_ = std::move(res);
    tcp().expires_after(server_.options.write_timeout);
    http::async_write(stream_, *response_,
                      [self = this->shared_from_this(), after](beast::error_code ec, std::size_t) {
                        self->OnWrite(ec, after);
                      });
  }

  void OnWrite(beast::error_code ec, After after) {
    response_.reset();
    if (ec) return Close();
    switch (after) {
      case After::kRead:
        return ReadRequest();
      case After::kClose:
        return Close();
      case After::kDrain:
        return Drain();
    }
  }

  void Drain() {
    beast::error_code ignored;
    tcp().socket().shutdown(tcp::socket::shutdown_send, ignored);
    drain_deadline_ = std::chrono::steady_clock::now() + server_.options.read_timeout;
    discard_.resize(16 << 10);
    DrainSome();
  }

  void DrainSome() {
    tcp().expires_at(drain_deadline_);
    // Below TLS too: what is dropped need not be decrypted.
    tcp().async_read_some(net::buffer(discard_),
                          [self = this->shared_from_this()](beast::error_code ec, std::size_t n) {
                            self->drained_ += n;
                            if (ec || self->drained_ > kMaxDrainBytes) return self->Close();
                            self->DrainSome();
                          });
  }

  void Close() {
    beast::error_code ignored;
    tcp().socket().shutdown(tcp::socket::shutdown_send, ignored);
    tcp().close();
  }

  ServerCore& server_;
  Stream stream_;
  const std::string remote_;
  std::size_t id_ = 0;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  std::optional<http::response<http::string_body>> response_;
  std::shared_ptr<ApiStream> stream_source_;  // set while streaming
  std::optional<net::steady_timer> stream_timer_;
  std::string stream_text_;  // being written
  bool reading_ = false;
  const HttpBodyLimit* body_limit_ = nullptr;  // the request's, when not body_limit (OnHeader)
  bool handshaking_ = false;
  std::chrono::steady_clock::time_point drain_deadline_;
  std::size_t drained_ = 0;
  std::string discard_;  // allocated only when draining
};

std::size_t ServerCore::Register(const std::shared_ptr<SessionBase>& session) {
  std::lock_guard lock(sessions_mu_);
  const std::size_t id = ++next_session_id_;
  sessions_.emplace(id, session);
  return id;
}

void ServerCore::Unregister(std::size_t id) {
  std::lock_guard lock(sessions_mu_);
  sessions_.erase(id);
}

Status ServerCore::Listen() {
  const std::string where = options.host + ":" + std::to_string(options.port);
  beast::error_code ec;
  net::ip::address address = net::ip::make_address(options.host, ec);
  if (ec) {
    tcp::resolver resolver(ioc);
    auto results = resolver.resolve(options.host, std::to_string(options.port), ec);
    if (ec || results.empty()) {
      return Status::InvalidArgument("cannot resolve listen host '" + options.host +
                                     "': " + ec.message());
    }
    address = results.begin()->endpoint().address();
  }
  if (Status loaded = LoadTls(); !loaded.ok()) return loaded;
  const tcp::endpoint endpoint(address, options.port);
  acceptor.open(endpoint.protocol(), ec);
  if (!ec) acceptor.set_option(net::socket_base::reuse_address(true), ec);
  if (!ec) acceptor.bind(endpoint, ec);
  if (!ec) acceptor.listen(net::socket_base::max_listen_connections, ec);
  if (ec) {
    beast::error_code ignored;
    acceptor.close(ignored);
    return Status::Unavailable("cannot listen on " + where + ": " + ec.message());
  }
  bound_port = acceptor.local_endpoint(ec).port();
  if (options.handle_signals) {
    signals.emplace(strand, SIGINT, SIGTERM);
    if (options.on_hangup) signals->add(SIGHUP);
    WaitForSignal();
  }
  listening = true;
  return Status::Ok();
}

void ServerCore::WaitForSignal() {
  signals->async_wait([this](beast::error_code e, int signal) {
    if (e) return;
    if (signal != SIGHUP) {
      BeginShutdown();
      return;
    }
    options.on_hangup();
    WaitForSignal();
  });
}

Status ServerCore::LoadTls() {
  if (!options.tls) return Status::Ok();
  const HttpServerTls& t = *options.tls;
  net::ssl::context ctx(net::ssl::context::tls_server);
  ctx.set_options(net::ssl::context::default_workarounds | net::ssl::context::no_sslv2 |
                  net::ssl::context::no_sslv3 | net::ssl::context::no_tlsv1 |
                  net::ssl::context::no_tlsv1_1 | net::ssl::context::single_dh_use);
  beast::error_code ec;
  ctx.use_certificate_chain_file(t.cert_file, ec);
  if (ec) return Status::InvalidArgument("tls cert_file '" + t.cert_file + "': " + ec.message());
  ctx.use_private_key(net::buffer(t.key_pem), net::ssl::context::pem, ec);
  if (ec) return Status::InvalidArgument("tls key for '" + t.cert_file + "': " + ec.message());
  if (!t.client_ca_file.empty()) {
    ctx.load_verify_file(t.client_ca_file, ec);
    if (ec) {
      return Status::InvalidArgument("tls client_ca_file '" + t.client_ca_file +
                                     "': " + ec.message());
    }
    ctx.set_verify_mode(net::ssl::verify_peer | net::ssl::verify_fail_if_no_peer_cert);
  }
  tls.emplace(std::move(ctx));
  return Status::Ok();
}

void ServerCore::Run() {
  if (!listening) return;
  if (options.loop_per_thread) {
    for (int i = 0; i < std::max(1, options.threads); ++i) {
      loops.push_back(std::make_unique<net::io_context>(1));
      loop_guards.push_back(net::make_work_guard(*loops.back()));
    }
  }
  // Work for the listener's loop before any thread runs it: a loop with none returns at once.
  net::dispatch(strand, [this] { Accept(); });
  std::vector<std::thread> extra;
  for (auto& loop : loops) extra.emplace_back([&loop] { loop->run(); });
  if (loops.empty()) {
    for (int i = 1; i < options.threads; ++i) extra.emplace_back([this] { ioc.run(); });
  }
  ioc.run();
  // The listener's loop ends when shutdown has drained the connections (or gave up on them,
  // stopping every loop): the connections' loops have nothing left to wait for.
  loop_guards.clear();
  for (std::thread& t : extra) t.join();
}

net::io_context& ServerCore::NextLoop() {
  if (loops.empty()) return ioc;
  return *loops[next_loop++ % loops.size()];
}

void ServerCore::Accept() {
  if (stopping) return;
  acceptor.async_accept(net::make_strand(NextLoop()),
                        beast::bind_front_handler(&ServerCore::OnAccept, this));
}

void ServerCore::OnAccept(beast::error_code ec, tcp::socket socket) {
  if (stopping || !acceptor.is_open()) return;
  if (ec) {
    // Out of file descriptors and the like: back off rather than spin.
    retry_timer.expires_after(std::chrono::milliseconds(100));
    retry_timer.async_wait([this](beast::error_code e) {
      if (!e) Accept();
    });
    return;
  }
  const std::size_t open = connections.load();
  if (open >= 2 * options.max_connections) {
    beast::error_code ignored;
    socket.close(ignored);  // far past the limit: not even a 503
  } else {
    // Answers go out when written, not after Nagle's wait for the client's delayed ACK.
    beast::error_code ignored;
    socket.set_option(tcp::no_delay(true), ignored);
    if (tls) {
      Serve(std::make_shared<Session<beast::ssl_stream<beast::tcp_stream>>>(std::move(socket),
                                                                            *this, *tls),
            open);
    } else {
      Serve(std::make_shared<Session<beast::tcp_stream>>(std::move(socket), *this), open);
    }
  }
  Accept();
}

template <class S>
void ServerCore::Serve(const std::shared_ptr<S>& session, std::size_t open) {
  if (open >= options.max_connections) {
    session->Reject();
  } else {
    session->Start();
  }
}

void ServerCore::BeginShutdown() {
  if (shutdown_started) return;
  shutdown_started = true;
  stopping = true;
  beast::error_code ignored;
  acceptor.close(ignored);
  retry_timer.cancel();
  if (signals) signals->cancel(ignored);
  std::vector<std::shared_ptr<SessionBase>> live;
  {
    std::lock_guard lock(sessions_mu_);
    for (auto& [id, weak] : sessions_)
      if (auto s = weak.lock()) live.push_back(std::move(s));
  }
  for (auto& s : live) s->Shutdown();
  live.clear();
  WaitForConnections(std::chrono::steady_clock::now() + options.shutdown_grace);
}

void ServerCore::WaitForConnections(std::chrono::steady_clock::time_point deadline) {
  if (connections.load() == 0) return;  // nothing left: Run()'s loop runs out of work
  if (std::chrono::steady_clock::now() >= deadline) {
    ioc.stop();  // stragglers past the grace period are dropped with the io_context
    for (auto& loop : loops) loop->stop();
    return;
  }
  drain_timer.expires_after(kDrainPoll);
  drain_timer.async_wait([this, deadline](beast::error_code e) {
    if (!e) WaitForConnections(deadline);
  });
}

}  // namespace

class HttpServer::Impl : public ServerCore {
 public:
  using ServerCore::ServerCore;
};

HttpServer::HttpServer(HttpServerOptions options, Handler handler)
    : impl_(std::make_unique<Impl>(std::move(options), std::move(handler))) {}

HttpServer::~HttpServer() = default;

Status HttpServer::Listen() { return impl_->Listen(); }

std::uint16_t HttpServer::port() const { return impl_->bound_port.load(); }

void HttpServer::Run() { impl_->Run(); }

void HttpServer::Stop() {
  net::post(impl_->strand, [impl = impl_.get()] { impl->BeginShutdown(); });
}

bool HttpServer::Responsive(std::chrono::milliseconds within) {
  auto answered = std::make_shared<std::promise<void>>();
  std::future<void> done = answered->get_future();
  net::post(impl_->ioc, [answered] { answered->set_value(); });
  return done.wait_for(within) == std::future_status::ready;
}

Result<HttpServerOptions> HttpServerOptionsFor(const ApiConfig& api) {
  const std::string& listen = api.listen;
  const std::size_t colon = listen.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == listen.size()) {
    return Status::InvalidArgument("api.listen '" + listen +
                                   "' must be HOST:PORT, e.g. 127.0.0.1:8480");
  }
  std::string host = listen.substr(0, colon);
  if (host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  const std::string port_text = listen.substr(colon + 1);
  unsigned port = 0;
  const auto [end, err] =
      std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
  if (err != std::errc() || end != port_text.data() + port_text.size() || port > 65535 ||
      host.empty()) {
    return Status::InvalidArgument("api.listen '" + listen +
                                   "' must be HOST:PORT with a port from 0 to 65535");
  }
  HttpServerOptions options;
  options.host = std::move(host);
  options.port = static_cast<std::uint16_t>(port);
  options.read_timeout = api.read_timeout;
  options.write_timeout = api.write_timeout;
  options.body_limit = kApiMaxBodyBytes;
  options.body_limits = {{std::string(kApiWebhookPrefix), kApiMaxWebhookBodyBytes,
                          std::string(kApiWebhookBodyAdvice)}};
  if (api.tls.enabled())
    options.tls = HttpServerTls{api.tls.cert_file, api.tls.key.value(), api.tls.client_ca_file};
  return options;
}

}  // namespace icewarden
