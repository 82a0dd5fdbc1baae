// The real HttpTransport: HTTP/1.1 on a caller-owned io_context. https URLs go through Boost.Beast
// streams with TLS through OpenSSL; plain http URLs through PlainHttpClient
// (health/plain_http_client.h), the same rules with fewer moving parts per request.
//
// HTTP/1.1 keep-alive: connections that ended cleanly are kept in a small pool of idle
// connections per scheme://host:port (plain and TLS alike; see PoolOptions) and reused by
// later requests, which skip resolve, connect and the TLS handshake. A bulk action such as
// ownership.transfer (a load and a commit per table, 64 at once) spent most of its time in
// per-request connection setup before the pool existed. Rules:
//  - a connection goes back to the pool only after a complete response that allows reuse
//    (no "Connection: close", HTTP/1.1, no read-until-EOF body) and never after an error;
//  - an idle connection is dropped after PoolOptions::idle_timeout, or earlier when the
//    server announced a shorter "Keep-Alive: timeout=N" (we use 3/4 of N), and is checked
//    with a non-blocking peek before reuse (a server that closed it is seen as EOF);
//  - when a reused connection fails before any byte of the response was read, a GET or
//    HEAD is retried once on a fresh connection within the same deadline; any other
//    method (POST, ...) is never resent: the error is reported and the caller decides
//    (RequestMayHaveBeenDelivered is true for write and read failures).
//
// Every response body is bounded (TlsOptions has nothing to do with that; see
// kMaxResponseBodyBytes); a larger body fails the exchange with kUnavailable.
// TLS (tls_options.h): one set of TlsOptions per transport, so a transport serves one
// region (its catalog and its token endpoint); the daemon makes one per region. A
// handshake that fails verification reports OpenSSL's verify reason ("certificate verify
// failed: unable to get local issuer certificate", "... hostname mismatch").
// Thread-safety: call Send/RunAfter only from the thread running the io_context.
// Lifetime: the io_context must outlive the transport, and the transport must outlive every
// exchange it started (destroy it only after the io_context has stopped running).
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <string>

#include "health/http_transport.h"
#include "health/tls_options.h"

namespace boost::asio {
class io_context;
}  // namespace boost::asio

namespace icewarden {

struct PoolOptions {
  // Idle connections kept per scheme://host:port; a connection that finds the pool full is
  // closed. 0 disables reuse ("Connection: close" on every request).
  std::size_t max_idle_per_host = 64;
  // How long an idle connection may wait for its next request.
  std::chrono::milliseconds idle_timeout = std::chrono::seconds(30);
};

inline constexpr std::size_t kMaxResponseBodyBytes = 64 * 1024 * 1024;

// The returned transport keeps a reference to `io`.
std::unique_ptr<HttpTransport> MakeBeastTransport(boost::asio::io_context& io, TlsOptions tls = {},
                                                  PoolOptions pool = {});

}  // namespace icewarden
