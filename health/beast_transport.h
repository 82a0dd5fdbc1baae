// The real HttpTransport: HTTP/1.1 over Boost.Beast on a caller-owned io_context, with TLS
// through OpenSSL for https URLs.
//
// One new connection per request ("Connection: close"). Catalog probes and commits are a
// few requests per second per region at most, so a pool would save little and would add
// state that a partition test has to reason about; revisit if profiling says otherwise.
//
// Every response body is bounded (TlsOptions has nothing to do with that; see
// kMaxResponseBodyBytes); a larger body fails the exchange with kUnavailable.
// Thread-safety: call Send/RunAfter only from the thread running the io_context.
// Lifetime: the io_context must outlive the transport, and the transport must outlive every
// exchange it started (destroy it only after the io_context has stopped running).
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "health/http_transport.h"

namespace boost::asio {
class io_context;
}  // namespace boost::asio

namespace icewarden {

struct TlsOptions {
  // Verify the server certificate chain and host name (SNI is always sent). Turning this
  // off is for labs with self-signed certificates only.
  bool verify_peer = true;
  // A PEM bundle of trusted CAs, used in addition to the system's default CA paths.
  std::string ca_file;
};

inline constexpr std::size_t kMaxResponseBodyBytes = 64 * 1024 * 1024;

// The returned transport keeps a reference to `io`.
std::unique_ptr<HttpTransport> MakeBeastTransport(boost::asio::io_context& io, TlsOptions tls = {});

}  // namespace icewarden
