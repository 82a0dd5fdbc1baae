#include "health/beast_transport.h"

// <utility> before Asio: boost/asio/awaitable.hpp in 1.74 uses std::exchange without it.
#include <utility>

#include <openssl/ssl.h>
#include <openssl/x509_vfy.h>
#include <openssl/x509v3.h>
#include <sys/socket.h>

#include <cerrno>

#include <algorithm>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <functional>
#include <optional>

#include "health/http_url.h"
#include "health/idle_pool.h"
#include "health/plain_http_client.h"

namespace icewarden {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
using boost::system::error_code;

// One TLS connection (plain http is PlainHttpClient's), or none.
struct Conn {
  Conn() = default;
  Conn(Conn&&) = default;
  Conn& operator=(Conn&&) = default;
  ~Conn() { Close(); }

  std::unique_ptr<beast::ssl_stream<beast::tcp_stream>> tls;

  explicit operator bool() const { return tls != nullptr; }
  beast::tcp_stream& lowest() { return beast::get_lowest_layer(*tls); }
  void Close() {
    if (!*this) return;
    error_code ec;
    lowest().socket().shutdown(tcp::socket::shutdown_both, ec);
    lowest().socket().close(ec);
    tls.reset();
  }
};

// True when an idle connection may still be used: the server has not closed it. Pending
// bytes may be a TLS 1.3 session ticket, so only EOF or an error rule it out.
bool LooksAlive(Conn& conn) {
  auto& socket = conn.lowest().socket();
  if (!socket.is_open()) return false;
  char c;
  ssize_t n = ::recv(socket.native_handle(), &c, 1, MSG_PEEK | MSG_DONTWAIT);
  if (n < 0) return errno == EAGAIN || errno == EWOULDBLOCK;
  return n > 0;  // 0: EOF, the server closed it
}

bool TimedOut(const error_code& ec) {
  return ec == beast::error::timeout || ec == asio::error::operation_aborted;
}

// What the server did in a handshake that failed. Closed or timed out before a byte:
// silence. Anything else (a certificate that does not verify, bytes that are not TLS)
// means the server sent something. A certificate that fails verification (wrong CA in
// our config, wrong name, expired) fails the exchange, so a probe fails and the region
// is not healthy; but it is not silence: a server that sent a certificate is up and may be
// taking writes from clients that trust it, and a wrong ca_file must never become fencing
// evidence (DESIGN.md rule 7).
PeerReply HandshakeReply(const error_code& ec) {
  if (TimedOut(ec) || ec == asio::error::eof || ec == asio::error::connection_reset ||
      ec == asio::ssl::error::stream_truncated)
    return PeerReply::kSilent;
  return PeerReply::kAnswered;
}

// What the server did in a write and read that failed. Beast's parser errors mean bytes
// arrived that are not a readable HTTP response, except end_of_stream: the connection
// closed before the first byte of one. TLS errors mean the server sent a TLS record.
PeerReply ExchangeReply(const error_code& ec, const beast::flat_buffer& buffer,
                        const http::response_parser<http::string_body>& parser) {
  const bool got_bytes = buffer.size() > 0 || parser.got_some();
  // An OpenSSL error after the handshake is about a TLS record the server sent: an alert
  // (TLS 1.3 servers refuse a missing client certificate only after the handshake, with
  // "certificate required" on our first read) or a record that does not decrypt. The server
  // is up. Regression: such a refusal read as silence.
  if (ec.category() == asio::error::get_ssl_category()) return PeerReply::kAnswered;
  if (ec.category() == http::make_error_code(http::error::end_of_stream).category() &&
      ec != http::error::end_of_stream && ec != http::error::partial_message)
    return PeerReply::kUnparsed;
  return got_bytes || ec == http::error::partial_message ? PeerReply::kAnswered
                                                         : PeerReply::kSilent;
}

// Makes OpenSSL check `name` (a DNS name, or an IP literal) against the server's
// certificate during the handshake, so that a mismatch fails the handshake with
// X509_V_ERR_HOSTNAME_MISMATCH or X509_V_ERR_IP_ADDRESS_MISMATCH. False when OpenSSL
// refuses the name.
bool VerifyName(SSL* ssl, const std::string& name) {
  X509_VERIFY_PARAM* param = SSL_get0_param(ssl);
  error_code ec;
  asio::ip::make_address(name, ec);
  if (!ec) return X509_VERIFY_PARAM_set1_ip_asc(param, name.c_str()) == 1;
  X509_VERIFY_PARAM_set_hostflags(param, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
  return SSL_set1_host(ssl, name.c_str()) == 1;
}

class BeastTransport final : public HttpTransport {
 public:
  BeastTransport(asio::io_context& io, TlsOptions tls, PoolOptions pool)
      : io_(io), tls_options_(std::move(tls)), idle_(pool), plain_(io, pool) {}

  void Send(HttpRequest request, std::chrono::milliseconds deadline,
            std::function<void(Result<HttpResponse>)> done) override {
    auto url = ParseUrl(request.url);
    Status checked = url.ok() ? CheckRequest(*url, request) : url.status();
    if (!checked.ok()) {
      asio::post(io_, [done = std::move(done), s = std::move(checked)] { done(s); });
      return;
    }
    // Plain http takes the lean path (health/plain_http_client.h); https keeps Beast's
    // streams, whose TLS handshake and records the lean path does not speak.
    if (!url->https) {
      plain_.Send(std::move(*url), std::move(request), deadline, std::move(done));
      return;
    }
    asio::co_spawn(
        io_,
        [this, url = std::move(*url), request = std::move(request), deadline,
         done = std::move(done)]() mutable -> asio::awaitable<void> {
          Result<HttpResponse> r = Status::Internal("unset");
          try {
            r = co_await Exchange(url, std::move(request), deadline);
          } catch (const std::exception& e) {
            // Where it failed is unknown, so it is not silence (PeerReply::kUnknown).
            r = Status::Unavailable(std::string("http exchange: ") + e.what());
          }
          done(std::move(r));
        },
        asio::detached);
  }

  void RunAfter(std::chrono::milliseconds delay, std::function<void()> fn) override {
    auto timer = std::make_shared<asio::steady_timer>(io_, delay);
    timer->async_wait([timer, fn = std::move(fn)](error_code) { fn(); });
  }

 private:
  // Writes the request and reads the response on `stream`; `phase` names the step that
  // failed.
  asio::awaitable<error_code> WriteRead(beast::ssl_stream<beast::tcp_stream>& stream,
                                        beast::tcp_stream& lowest,
                                        http::request<http::string_body>& req,
                                        beast::flat_buffer& buffer,
                                        http::response_parser<http::string_body>& parser,
                                        std::chrono::steady_clock::time_point expiry,
                                        const char*& phase) {
    error_code ec;
    phase = "write";
    lowest.expires_at(expiry);
    co_await http::async_write(stream, req, asio::redirect_error(asio::use_awaitable, ec));
    // A TLS server that refuses us after the handshake (TLS 1.3: a client certificate it
    // wants) sends an alert and closes, and our write can lose the race to that close
    // (EPIPE). The alert may still be waiting: it says why, and that the server answered.
    if (ec && !TimedOut(ec)) {
      error_code alert;
      char byte = 0;
      co_await stream.async_read_some(asio::buffer(&byte, 1),
                                      asio::redirect_error(asio::use_awaitable, alert));
      if (alert.category() == asio::error::get_ssl_category()) {
        phase = "read";
        co_return alert;
      }
    }
    if (ec) co_return ec;
    phase = "read";
    lowest.expires_at(expiry);
    co_await http::async_read(stream, buffer, parser,
                              asio::redirect_error(asio::use_awaitable, ec));
    co_return ec;
  }

  // Resolves (once per exchange) and opens a new TLS connection; nullopt status on success.
  asio::awaitable<std::optional<Status>> Open(
      const ParsedUrl& url, std::optional<tcp::resolver::results_type>& endpoints,
      std::chrono::steady_clock::time_point expiry, Conn& conn,
      const std::function<Status(const char*, const error_code&, PeerReply)>& fail) {
    const std::string where = Where(url);
    error_code ec;
    if (!endpoints) {
      // Resolution has no stream to time out, so a timer cancels it.
      tcp::resolver resolver(io_);
      asio::steady_timer resolve_timer(io_, expiry);
      resolve_timer.async_wait([&resolver](error_code e) {
        if (!e) resolver.cancel();
      });
      auto found = co_await resolver.async_resolve(url.host, url.port,
                                                   asio::redirect_error(asio::use_awaitable, ec));
      resolve_timer.cancel();
      if (ec) co_return fail("resolve", ec, PeerReply::kSilent);
      endpoints = std::move(found);
    }
    // Local TLS setup errors never reach the server: PeerReply::kUnknown, not silence.
    asio::ssl::context& ssl = Ssl();
    if (!tls_setup_error_.empty())
      co_return Status::Unavailable("tls " + where + ": " + tls_setup_error_);
    conn.tls = std::make_unique<beast::ssl_stream<beast::tcp_stream>>(io_, ssl);
    // SNI; host name verification applies only when verify_peer is on. server_name, when
    // set, stands for the URL's host in both.
    const std::string& name =
        tls_options_.server_name.empty() ? url.host : tls_options_.server_name;
    SSL* native = conn.tls->native_handle();
    if (!SSL_set_tlsext_host_name(native, name.c_str())) {
      co_return Status::Unavailable("tls " + where + ": cannot set SNI host name");
    }
    if (tls_options_.verify_peer && !VerifyName(native, name)) {
      co_return Status::Unavailable("tls " + where + ": cannot verify against name " + name);
    }
    auto& lowest = conn.lowest();
    lowest.expires_at(expiry);
    co_await lowest.async_connect(*endpoints, asio::redirect_error(asio::use_awaitable, ec));
    if (ec) co_return fail("connect", ec, PeerReply::kSilent);
    lowest.socket().set_option(tcp::no_delay(true), ec);  // best effort
    lowest.expires_at(expiry);
    co_await conn.tls->async_handshake(asio::ssl::stream_base::client,
                                       asio::redirect_error(asio::use_awaitable, ec));
    if (ec) {
      Status failed = fail("tls", ec, HandshakeReply(ec));
      const long verify = SSL_get_verify_result(native);
      if (verify != X509_V_OK) {
        failed =
            failed.WithMessage(failed.message() + ": " + X509_verify_cert_error_string(verify) +
                               " (verifying " + name + ")");
      }
      co_return failed;
    }
    co_return std::nullopt;
  }

  asio::awaitable<Result<HttpResponse>> Exchange(const ParsedUrl& url, HttpRequest request,
                                                 std::chrono::milliseconds deadline) {
    const auto expiry = std::chrono::steady_clock::now() + deadline;
    const std::string where = Where(url);
    const std::string timeout_text =
        "deadline of " + std::to_string(deadline.count()) + "ms exceeded";
    std::function<Status(const char*, const error_code&, PeerReply)> fail =
        [&](const char* phase, const error_code& ec, PeerReply reply) {
          std::string why = TimedOut(ec) ? timeout_text : ec.message();
          return Status::Unavailable(std::string(phase) + " " + where + ": " + why)
              .WithReply(reply);
        };
    const bool pooling = idle_.enabled();
    const std::string key = "https://" + where;
    const auto verb = http::string_to_verb(request.method);
    const bool idempotent = verb == http::verb::get || verb == http::verb::head;

    http::request<http::string_body> req{verb, url.target, 11};
    for (const auto& [name, value] : request.headers.fields()) req.set(name, value);
    req.set(http::field::host, url.host_header);
    if (!request.headers.Has("User-Agent")) req.set(http::field::user_agent, "icewarden");
    if (pooling) {
      req.erase(http::field::connection);  // HTTP/1.1 is keep-alive by default
    } else {
      req.set(http::field::connection, "close");
    }
    req.body() = std::move(request.body);
    req.prepare_payload();

    std::optional<tcp::resolver::results_type> endpoints;
    for (int attempt = 0;; ++attempt) {
      Conn conn = pooling ? idle_.Take(key, LooksAlive) : Conn{};
      const bool reused = static_cast<bool>(conn);
      if (!reused) {
        if (auto failed = co_await Open(url, endpoints, expiry, conn, fail)) co_return *failed;
      }

      beast::flat_buffer buffer;
      http::response_parser<http::string_body> parser;
      parser.body_limit(kMaxResponseBodyBytes);
      parser.header_limit(64 * 1024);
      if (verb == http::verb::head) parser.skip(true);

      const char* phase = "write";
      error_code ec =
          co_await WriteRead(*conn.tls, conn.lowest(), req, buffer, parser, expiry, phase);
      if (ec) {
        conn.Close();
        const bool timed_out = TimedOut(ec);
        // The server may have closed the idle connection just as we sent: nothing of the
        // response arrived. Only a GET or HEAD may be sent again.
        if (reused && idempotent && attempt == 0 && !timed_out && buffer.size() == 0 &&
            !parser.got_some()) {
          continue;
        }
        Status s = fail(phase, ec, ExchangeReply(ec, buffer, parser));
        if (reused && !timed_out) s = s.WithMessage(s.message() + " (on a reused connection)");
        co_return s;
      }

      auto& res = parser.get();
      HttpResponse out;
      out.status = static_cast<int>(res.result_int());
      std::optional<std::chrono::seconds> hint;
      for (const auto& field : res) {
        out.headers.Add(std::string(field.name_string()), std::string(field.value()));
        if (field.name() == http::field::keep_alive)
          hint = KeepAliveTimeout(std::string_view(field.value().data(), field.value().size()));
      }
      out.body = std::move(res.body());

      if (pooling && res.keep_alive() && !parser.need_eof() && buffer.size() == 0) {
        conn.lowest().expires_never();
        idle_.Put(key, std::move(conn), hint);
      } else {
        // No TLS close_notify exchange: the whole response is in; waiting for the server's
        // close_notify would only add latency.
        conn.Close();
      }
      co_return out;
    }
  }

  asio::io_context& io_;
  // Made on the first https request: loading the system CA store costs ~40 ms, which a
  // transport that only ever speaks http (a step's catalog session, the lab) never needs.
  asio::ssl::context& Ssl() {
    if (ssl_) return *ssl_;
    ssl_.emplace(asio::ssl::context::tls_client);
    ssl_->set_options(asio::ssl::context::default_workarounds | asio::ssl::context::no_sslv2 |
                      asio::ssl::context::no_sslv3 | asio::ssl::context::no_tlsv1 |
                      asio::ssl::context::no_tlsv1_1);
    if (tls_options_.verify_peer) {
      error_code ec;
      ssl_->set_default_verify_paths(ec);
      if (!tls_options_.ca_file.empty()) {
        ssl_->load_verify_file(tls_options_.ca_file, ec);
        if (ec)
          tls_setup_error_ = "cannot load CA file " + tls_options_.ca_file + ": " + ec.message();
      }
      ssl_->set_verify_mode(asio::ssl::verify_peer);
    } else {
      ssl_->set_verify_mode(asio::ssl::verify_none);
    }
    if (!tls_options_.cert_file.empty() && tls_setup_error_.empty()) {
      error_code ec;
      ssl_->use_certificate_chain_file(tls_options_.cert_file, ec);
      if (ec) {
        tls_setup_error_ =
            "cannot load client certificate " + tls_options_.cert_file + ": " + ec.message();
      } else {
        ssl_->use_private_key(asio::buffer(tls_options_.key_pem), asio::ssl::context::pem, ec);
        // The key is a secret: its text never goes into the message.
        if (ec) tls_setup_error_ = "cannot use the client private key: " + ec.message();
      }
    }
    return *ssl_;
  }
  std::optional<asio::ssl::context> ssl_;
  TlsOptions tls_options_;
  std::string tls_setup_error_;
  IdlePool<Conn> idle_;
  PlainHttpClient plain_;
};

}  // namespace

std::unique_ptr<HttpTransport> MakeBeastTransport(boost::asio::io_context& io, TlsOptions tls,
                                                  PoolOptions pool) {
  return std::make_unique<BeastTransport>(io, std::move(tls), pool);
}

}  // namespace icewarden
