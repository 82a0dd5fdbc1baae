// EtcdConnection: one connection from EtcdClient (etcd_client.h) to one etcd member, plain TCP
// or TLS, every step bounded by the request's deadline. Internal to the etcd client; split
// out so that the protocol (JSON, retries, auth) and the bytes on the wire can be read apart.
//
// Why not Asio's ssl::stream: the client is synchronous and every call has one deadline
// (connect, handshake, write, read). Asio's synchronous operations have no deadline, and its
// asynchronous ones need an io_context run per call; a non-blocking socket polled until the
// deadline, with OpenSSL driven over the same descriptor, keeps the one deadline exact (a
// member behind the wrong CA fails at once, a silent one at the deadline, never a hang).
//
// TLS: the member's certificate must chain to the configured CA file (and only to it: a
// public CA that vouches for the name is no authority over the state record), and must name
// the endpoint's host (a DNS SAN, or an IP SAN for an address such as 127.0.0.1). With a
// client certificate, it is presented to members run with --client-cert-auth.
// Thread-safety: none; EtcdClient locks around every use.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <string_view>

#include "state/status.h"

namespace icewarden {

struct EtcdTlsOptions;

// "http://HOST:PORT" or "https://HOST:PORT" (a trailing path is ignored).
struct EtcdEndpoint {
  std::string host, port, authority;
  bool tls = false;
};
Result<EtcdEndpoint> ParseEtcdEndpoint(const std::string& url);

// The TLS settings every connection of one client shares (an OpenSSL SSL_CTX), built once.
class EtcdTlsContext {
 public:
  // kInvalidArgument naming the file that OpenSSL cannot use; never the key's text.
  static Result<std::shared_ptr<EtcdTlsContext>> Make(const EtcdTlsOptions& options);
  ~EtcdTlsContext();
  struct Native;
  Native& native() const { return *native_; }

 private:
  explicit EtcdTlsContext(std::unique_ptr<Native> native);
  std::unique_ptr<Native> native_;
};

class EtcdConnection {
 public:
  using Deadline = std::chrono::steady_clock::time_point;

  EtcdConnection();
  ~EtcdConnection();
  EtcdConnection(const EtcdConnection&) = delete;
  EtcdConnection& operator=(const EtcdConnection&) = delete;

  bool open() const;
  // An idle connection the member has not closed, with nothing unread on it.
  bool StillOpen();
  void Close();

  // Connects (and with `tls`, shakes hands). kUnavailable names the endpoint and why; a
  // failure here means no request reached the member.
  Status Open(const EtcdEndpoint& e, const EtcdTlsContext* tls, Deadline deadline);
  // Writes all of `bytes`; `sent` becomes true once any of them may have left.
  Status Write(std::string_view bytes, Deadline deadline, bool& sent);
  // Reads what has arrived (waiting for something): the byte count, 0 once the member closed
  // the connection. `refused` becomes true when the member's TLS layer rejected this client
  // (its certificate) before its HTTP server read anything: the request was not delivered.
  Result<std::size_t> ReadSome(char* buffer, std::size_t size, Deadline deadline, bool& refused);

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace icewarden
