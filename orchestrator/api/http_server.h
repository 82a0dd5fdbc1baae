// HttpServer: the HTTP/1.1 front door of the daemon. It does the socket I/O and nothing
// else: every complete request goes to one Handler (normally Api::Handle) and its answer is
// written back. Built on Boost.Beast; no Boost type appears here.
//
// Bounds: a read timeout covers each request from its first byte (and the idle time between
// keep-alive requests); a write timeout covers each response; bodies over body_limit (or the
// body_limits bound of their path) are answered 413 and headers over header_limit 431 by the server
// itself, without calling the handler; malformed requests get 400; past max_connections a new
// connection gets 503. Those responses use the API's JSON error shape. A response with a stream
// (server-sent events) stays open, written to as the stream yields text, and closes when it ends.
//
// Shutdown: Stop(), SIGINT or SIGTERM (when handle_signals) stop accepting, close idle
// connections, let requests already being read or answered finish (each within its
// timeouts), and give up on stragglers after shutdown_grace. Then Run() returns.
//
// Thread-safety: Listen() and Run() are called once each, in that order, from one thread;
// Stop() and port() may be called from any thread, at any time, any number of times. The
// handler is called from the server's threads (concurrently when threads > 1). Destroy the
// server only when Run() has returned or was never called.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "orchestrator/api/api.h"
#include "orchestrator/config/config.h"
#include "state/status.h"

namespace icewarden {

// TLS on the listener (HTTP/1.1 over TLS 1.2 or later). Read when Listen() is called.
struct HttpServerTls {
  std::string cert_file;       // PEM: the certificate chain, leaf first
  std::string key_pem;         // its private key (PEM text: it may come from a variable)
  std::string client_ca_file;  // PEM: demand client certificates signed by these CAs; empty: none
};

// A body bound for the targets under `prefix`; its 413 ends with `advice` (how to fit).
struct HttpBodyLimit {
  std::string prefix;
  std::size_t bytes = 0;
  std::string advice;
};

struct HttpServerOptions {
  std::string host = "127.0.0.1";  // an IP address or a resolvable name
  std::uint16_t port = 0;          // 0 picks an ephemeral port; see HttpServer::port()
  std::size_t body_limit = 1 << 20;
  // Other bounds for the request targets under a path prefix (the longest matching prefix
  // wins), decided once a request's header is read: the webhooks, whose senders post a whole
  // alert group at once and do not retry a 413.
  std::vector<HttpBodyLimit> body_limits;
  std::size_t header_limit = 16 << 10;  // request line and headers together
  std::size_t max_connections = 256;
  std::chrono::milliseconds read_timeout{10000};
  std::chrono::milliseconds write_timeout{10000};
  std::chrono::milliseconds shutdown_grace{5000};
  // How often a streamed response (ApiResponse::stream) is asked for more: the event
  // stream's delivery latency is at most this plus a write. A poll with nothing new is two
  // indexed store reads (events.cpp), so 20 dashboards cost little at 10 polls a second.
  std::chrono::milliseconds stream_poll{100};
  std::optional<HttpServerTls> tls;  // none: plain HTTP
  int threads = 1;  // threads running the event loop, including the one calling Run()
  // False: the threads share one event loop, and any of them runs any connection's next step.
  // True: each of `threads` threads runs a loop of its own, a connection stays on one (given
  // round-robin as accepted), and the thread calling Run() runs the listener's. For handlers
  // that block for a network exchange (the catalog gateway): with a shared loop each event
  // wakes one thread to hand work to another; with a loop per thread the thread the kernel
  // wakes for a connection's bytes runs its handler. The price: connections past `threads`
  // share a loop, and one's handler holds the others' requests.
  bool loop_per_thread = false;
  bool handle_signals = true;  // SIGINT and SIGTERM begin an orderly shutdown
  // With handle_signals: SIGHUP calls this (on the server's strand, so it must return at
  // once, e.g. by waking a thread of its own) and the server goes on. Unset: SIGHUP keeps
  // its default action.
  std::function<void()> on_hangup;
  // Told the status of every response the server writes itself (413, 431, 400, 503), e.g.
  // to count it with Api::CountResponse. Optional; called from the server's threads.
  std::function<void(int status)> on_server_response;
  // The body of the answers the server writes itself (413, 431, 400, 503, and a handler that
  // threw): the API's JSON error shape unless set (the catalog gateway answers in the Iceberg
  // REST spec's error model).
  std::function<ApiResponse(int status, std::string_view code, const std::string& message)>
      local_error;
};

// Options for serving `api`: host and port from api.listen ("HOST:PORT", "[::1]:PORT"),
// timeouts from the config, everything else default. kInvalidArgument for a malformed
// listen address.
Result<HttpServerOptions> HttpServerOptionsFor(const ApiConfig& api);

class HttpServer {
 public:
  using Handler = std::function<ApiResponse(const ApiRequest&)>;

  HttpServer(HttpServerOptions options, Handler handler);
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Binds and listens; from here on port() is the real port, connections queue in the
  // kernel, and (with handle_signals) SIGINT/SIGTERM are caught. kInvalidArgument for a
  // host that does not resolve or TLS files OpenSSL refuses, kUnavailable when the address
  // cannot be bound.
  Status Listen();
  std::uint16_t port() const;

  // Serves until Stop() or a signal, then shuts down as described above and returns.
  // Returns at once if Listen() did not succeed.
  void Run();

  // Begins an orderly shutdown. Thread-safe; idempotent; may precede Run().
  void Stop();

  // Whether the server's event loop runs a task posted to it within `within`: the liveness a
  // watchdog asks for (a loop wedged by a handler that never returns answers false).
  // Thread-safe; false before Run() and after it returned.
  bool Responsive(std::chrono::milliseconds within);

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace icewarden
