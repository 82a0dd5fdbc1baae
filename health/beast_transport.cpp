#include "health/beast_transport.h"

// <utility> before Asio: boost/asio/awaitable.hpp in 1.74 uses std::exchange without it.
#include <utility>

#include <openssl/ssl.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <charconv>
#include <optional>

namespace icewarden {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
using boost::system::error_code;

struct ParsedUrl {
  bool https = false;
  std::string host;  // without brackets for IPv6 literals
  std::string port;
  std::string target;  // "/v1/config?warehouse=w"
  std::string host_header;
};

Result<ParsedUrl> ParseUrl(const std::string& url) {
  ParsedUrl u;
  std::string_view rest = url;
  if (rest.starts_with("http://")) {
    rest.remove_prefix(7);
  } else if (rest.starts_with("https://")) {
    u.https = true;
    rest.remove_prefix(8);
  } else {
    return Status::InvalidArgument("url " + url + ": unsupported scheme (want http or https)");
  }
  size_t slash = rest.find_first_of("/?");
  std::string_view authority = rest.substr(0, slash);
  u.target = slash == std::string_view::npos ? "/" : std::string(rest.substr(slash));
  if (u.target.front() == '?') u.target.insert(0, "/");
  if (authority.find('@') != std::string_view::npos) {
    return Status::InvalidArgument("url: credentials in URLs are not supported");
  }
  std::string_view host = authority;
  std::string_view port;
  if (authority.starts_with("[")) {
    size_t close = authority.find(']');
    if (close == std::string_view::npos)
      return Status::InvalidArgument("url " + url + ": bad host");
    host = authority.substr(1, close - 1);
    if (close + 1 < authority.size() && authority[close + 1] == ':') {
      port = authority.substr(close + 2);
    }
  } else if (size_t colon = authority.rfind(':'); colon != std::string_view::npos) {
    host = authority.substr(0, colon);
    port = authority.substr(colon + 1);
  }
  if (host.empty()) return Status::InvalidArgument("url " + url + ": missing host");
  u.host = std::string(host);
  u.port = port.empty() ? (u.https ? "443" : "80") : std::string(port);
  u.host_header = std::string(authority);
  return u;
}

std::string Where(const ParsedUrl& u) {
  return u.host.find(':') != std::string::npos ? "[" + u.host + "]:" + u.port
                                               : u.host + ":" + u.port;
}

class BeastTransport final : public HttpTransport {
 public:
  BeastTransport(asio::io_context& io, TlsOptions tls)
      : io_(io), ssl_(asio::ssl::context::tls_client), tls_options_(std::move(tls)) {
    ssl_.set_options(asio::ssl::context::default_workarounds | asio::ssl::context::no_sslv2 |
                     asio::ssl::context::no_sslv3 | asio::ssl::context::no_tlsv1 |
                     asio::ssl::context::no_tlsv1_1);
    if (tls_options_.verify_peer) {
      error_code ec;
      ssl_.set_default_verify_paths(ec);
      if (!tls_options_.ca_file.empty()) {
        ssl_.load_verify_file(tls_options_.ca_file, ec);
        if (ec)
          tls_setup_error_ = "cannot load CA file " + tls_options_.ca_file + ": " + ec.message();
      }
      ssl_.set_verify_mode(asio::ssl::verify_peer);
    } else {
      ssl_.set_verify_mode(asio::ssl::verify_none);
    }
  }

  void Send(HttpRequest request, std::chrono::milliseconds deadline,
            std::function<void(Result<HttpResponse>)> done) override {
    asio::co_spawn(
        io_,
        [this, request = std::move(request), deadline,
         done = std::move(done)]() mutable -> asio::awaitable<void> {
          Result<HttpResponse> r = Status::Internal("unset");
          try {
            r = co_await Exchange(std::move(request), deadline);
          } catch (const std::exception& e) {
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
  asio::awaitable<Result<HttpResponse>> Exchange(HttpRequest request,
                                                 std::chrono::milliseconds deadline) {
    auto url = ParseUrl(request.url);
    if (!url.ok()) co_return url.status();
    const auto expiry = std::chrono::steady_clock::now() + deadline;
    const std::string where = Where(*url);
    const std::string timeout_text =
        "deadline of " + std::to_string(deadline.count()) + "ms exceeded";
    auto fail = [&](const char* phase, const error_code& ec) {
      std::string why = ec == beast::error::timeout || ec == asio::error::operation_aborted
                            ? timeout_text
                            : ec.message();
      return Status::Unavailable(std::string(phase) + " " + where + ": " + why);
    };
    error_code ec;

    // Resolution has no stream to time out, so a timer cancels it.
    tcp::resolver resolver(io_);
    asio::steady_timer resolve_timer(io_, expiry);
    resolve_timer.async_wait([&resolver](error_code e) {
      if (!e) resolver.cancel();
    });
    auto endpoints = co_await resolver.async_resolve(url->host, url->port,
                                                     asio::redirect_error(asio::use_awaitable, ec));
    resolve_timer.cancel();
    if (ec) co_return fail("resolve", ec);

    http::request<http::string_body> req{http::string_to_verb(request.method), url->target, 11};
    for (const auto& [name, value] : request.headers.fields()) req.set(name, value);
    req.set(http::field::host, url->host_header);
    if (!request.headers.Has("User-Agent")) req.set(http::field::user_agent, "icewarden");
    req.set(http::field::connection, "close");
    req.body() = std::move(request.body);
    req.prepare_payload();

    beast::flat_buffer buffer;
    http::response_parser<http::string_body> parser;
    parser.body_limit(kMaxResponseBodyBytes);
    parser.header_limit(64 * 1024);

    if (!url->https) {
      beast::tcp_stream stream(io_);
      stream.expires_at(expiry);
      co_await stream.async_connect(endpoints, asio::redirect_error(asio::use_awaitable, ec));
      if (ec) co_return fail("connect", ec);
      stream.expires_at(expiry);
      co_await http::async_write(stream, req, asio::redirect_error(asio::use_awaitable, ec));
      if (ec) co_return fail("write", ec);
      stream.expires_at(expiry);
      co_await http::async_read(stream, buffer, parser,
                                asio::redirect_error(asio::use_awaitable, ec));
      if (ec) co_return fail("read", ec);
      stream.socket().shutdown(tcp::socket::shutdown_both, ec);
    } else {
      if (!tls_setup_error_.empty())
        co_return Status::Unavailable("tls " + where + ": " + tls_setup_error_);
      beast::ssl_stream<beast::tcp_stream> stream(io_, ssl_);
      // SNI; host name verification applies only when verify_peer is on.
      if (!SSL_set_tlsext_host_name(stream.native_handle(), url->host.c_str())) {
        co_return Status::Unavailable("tls " + where + ": cannot set SNI host name");
      }
      if (tls_options_.verify_peer) {
        stream.set_verify_callback(asio::ssl::host_name_verification(url->host));
      }
      auto& lowest = beast::get_lowest_layer(stream);
      lowest.expires_at(expiry);
      co_await lowest.async_connect(endpoints, asio::redirect_error(asio::use_awaitable, ec));
      if (ec) co_return fail("connect", ec);
      lowest.expires_at(expiry);
      co_await stream.async_handshake(asio::ssl::stream_base::client,
                                      asio::redirect_error(asio::use_awaitable, ec));
      if (ec) co_return fail("tls", ec);
      lowest.expires_at(expiry);
      co_await http::async_write(stream, req, asio::redirect_error(asio::use_awaitable, ec));
      if (ec) co_return fail("write", ec);
      lowest.expires_at(expiry);
      co_await http::async_read(stream, buffer, parser,
                                asio::redirect_error(asio::use_awaitable, ec));
      if (ec) co_return fail("read", ec);
      // No TLS close_notify exchange: the whole response is in, and "Connection: close"
      // means the server closes; waiting for its close_notify would only add latency.
    }

    auto& res = parser.get();
    HttpResponse out;
    out.status = static_cast<int>(res.result_int());
    for (const auto& field : res) {
      out.headers.Add(std::string(field.name_string()), std::string(field.value()));
    }
    out.body = std::move(res.body());
    co_return out;
  }

  asio::io_context& io_;
  asio::ssl::context ssl_;
  TlsOptions tls_options_;
  std::string tls_setup_error_;
};

}  // namespace

std::unique_ptr<HttpTransport> MakeBeastTransport(boost::asio::io_context& io, TlsOptions tls) {
  return std::make_unique<BeastTransport>(io, std::move(tls));
}

}  // namespace icewarden
