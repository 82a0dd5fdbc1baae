// HttpTransport: the one way code in health/ (and the actions that reuse the catalog client)
// talks HTTP. It is part of the environment that is handed in, like the Clock: nothing opens
// a socket on its own, so tests swap in tests/fakes/fake_transport.h and fault tests wrap a
// real transport.
//
// The interface is asynchronous and free of Boost: callers see plain structs. The real
// implementation (health/beast_transport.h) runs on one io_context; every completion and
// every RunAfter callback runs on that io_context's thread.
// Thread-safety: an implementation may be called only from its own executor's thread (the
// thread running its io_context); HttpRequest, HttpResponse and HttpHeaders are plain values.
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "state/status.h"

namespace icewarden {

// An ordered list of header fields; names compare case-insensitively (RFC 9110 5.1).
class HttpHeaders {
 public:
  HttpHeaders() = default;
  HttpHeaders(std::initializer_list<std::pair<std::string, std::string>> fields);

  // Replaces every field named `name` with one field.
  void Set(std::string name, std::string value);
  // Appends a field, keeping any earlier one of the same name.
  void Add(std::string name, std::string value);
  void Remove(std::string_view name);
  // The first field named `name`, or nullopt.
  std::optional<std::string> Get(std::string_view name) const;
  bool Has(std::string_view name) const { return Get(name).has_value(); }

  const std::vector<std::pair<std::string, std::string>>& fields() const { return fields_; }

 private:
  std::vector<std::pair<std::string, std::string>> fields_;
};

bool EqualsIgnoreCase(std::string_view a, std::string_view b);

struct HttpRequest {
  std::string method = "GET";  // "GET", "POST", ...
  std::string url;             // absolute: "https://catalog.example.com:8443/v1/config?warehouse=w"
  HttpHeaders headers;         // Host, Content-Length and User-Agent are added by the transport
  std::string body;
};

struct HttpResponse {
  int status = 0;  // 200, 304, 409, ...
  HttpHeaders headers;
  std::string body;
};

class HttpTransport {
 public:
  virtual ~HttpTransport() = default;

  // Sends one request and calls `done` exactly once, on the transport's executor, never
  // from inside Send itself unless the implementation documents it (the fake may).
  //
  // `deadline` bounds the whole exchange: name resolution, connect, TLS handshake, writing
  // the request and reading the full response. Any HTTP status (including 4xx and 5xx) is
  // a successful Result; only a failure to complete the exchange is an error, always
  // StatusCode::kUnavailable, with a message that starts with the phase that failed:
  //   "resolve catalog.example.com: Host not found"
  //   "connect 127.0.0.1:18181: Connection refused"
  //   "tls 127.0.0.1:18181: certificate verify failed"
  //   "write 127.0.0.1:18181: ..."   "read 127.0.0.1:18181: deadline of 5000ms exceeded"
  //   "url ...: unsupported scheme" (kInvalidArgument: a bad URL is the caller's error)
  // RequestMayHaveBeenDelivered() below reads that phase. The error's Status::reply() says
  // what the server did: kSilent when nothing came back (resolve or connect failed, the
  // exchange timed out or the connection closed before any byte of a response), kAnswered
  // when some of a response arrived, kUnparsed when the bytes were not readable HTTP (or
  // the body was over the size limit), kUnknown when it cannot be told (a local error).
  virtual void Send(HttpRequest request, std::chrono::milliseconds deadline,
                    std::function<void(Result<HttpResponse>)> done) = 0;

  // Runs `fn` on the transport's executor after `delay` (a timer, never a sleep). Used for
  // Retry-After waits so that every callback of a client stays on one thread.
  virtual void RunAfter(std::chrono::milliseconds delay, std::function<void()> fn) = 0;
};

// False only when the transport error proves the request never reached the server
// (resolve, connect or TLS handshake failed, or the URL was rejected). A commit whose
// request may have been delivered has an unknown outcome.
bool RequestMayHaveBeenDelivered(const Status& transport_error);

}  // namespace icewarden
