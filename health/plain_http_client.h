// PlainHttpClient: BeastTransport's path for plain http:// URLs. The same contract as
// HttpTransport::Send and the same keep-alive pool rules (health/beast_transport.h), written
// for the request pattern of a bulk action: ownership.transfer sends a load and a commit per
// table, 64 at once, over a few dozen pooled connections to one catalog.
//
// Why not Beast's composed operations there: each request through http::async_write and
// http::async_read on a beast::tcp_stream ran a coroutine frame, copied type-erased
// executors dozens of times, re-armed the stream's timer for every read_some and read the
// response in ~5 recvmsg calls; that was about half of icewarden's CPU per table moved. Here
// an exchange is one object and a handful of plain handlers: the request is written with
// one send(2) (waiting for the socket only when the kernel buffer is full), the response is
// read after the socket is readable, into one buffer, until recv(2) has nothing more, and
// Beast's parser (the same one as before, eager) reads the bytes. One deadline timer per
// exchange bounds resolve, connect, write and read together.
// Internal to health/: only BeastTransport makes one.
// Thread-safety: call Send only from the thread running the io_context; every completion
// runs there, never inside Send.
// Lifetime: outlives every exchange it started (its owner is destroyed after the
// io_context stopped running).
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>

#include "health/http_transport.h"

namespace boost::asio {
class io_context;
}  // namespace boost::asio

namespace icewarden {

struct ParsedUrl;
struct PoolOptions;

class PlainHttpClient {
 public:
  PlainHttpClient(boost::asio::io_context& io, const PoolOptions& pool);
  ~PlainHttpClient();
  PlainHttpClient(const PlainHttpClient&) = delete;
  PlainHttpClient& operator=(const PlainHttpClient&) = delete;

  // `url` is `request.url` parsed (and not https); `request` has passed CheckRequest.
  void Send(ParsedUrl url, HttpRequest request, std::chrono::milliseconds deadline,
            std::function<void(Result<HttpResponse>)> done);

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace icewarden
