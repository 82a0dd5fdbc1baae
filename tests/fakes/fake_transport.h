// FakeTransport: a scripted HttpTransport. A test queues the exchanges it expects, in
// order (method + exact URL -> canned response or transport error); every request is
// recorded. Send completes synchronously, before it returns, unless HoldCompletions() was
// called: then completions queue up until DeliverHeld(), which is how a test makes calls
// overlap. RunAfter records the delay and runs its function at once, so Retry-After waits
// cost no time.
// A request that does not match the next expectation fails the test and gets kInternal.
// Thread-safety: none; one test thread.
#pragma once

#include <chrono>
#include <deque>
#include <string>
#include <vector>

#include "health/http_transport.h"

namespace icewarden::testing {

class FakeTransport final : public HttpTransport {
 public:
  FakeTransport& Expect(std::string method, std::string url, HttpResponse response);
  FakeTransport& ExpectError(std::string method, std::string url, Status error);

  void Send(HttpRequest request, std::chrono::milliseconds deadline,
            std::function<void(Result<HttpResponse>)> done) override;
  void RunAfter(std::chrono::milliseconds delay, std::function<void()> fn) override;

  void HoldCompletions() { hold_ = true; }
  // Delivers queued completions (and any they cause) until none is left; stops holding.
  void DeliverHeld();

  const std::vector<HttpRequest>& requests() const { return requests_; }
  const std::vector<std::chrono::milliseconds>& deadlines() const { return deadlines_; }
  const std::vector<std::chrono::milliseconds>& waits() const { return waits_; }
  // Expectations not consumed yet.
  size_t pending() const { return script_.size(); }

 private:
  struct Exchange {
    std::string method;
    std::string url;
    Result<HttpResponse> outcome;
  };
  void Complete(std::function<void()> completion);

  std::deque<Exchange> script_;
  bool hold_ = false;
  std::deque<std::function<void()>> held_;
  std::vector<HttpRequest> requests_;
  std::vector<std::chrono::milliseconds> deadlines_;
  std::vector<std::chrono::milliseconds> waits_;
};

// A JSON response: Content-Type application/json plus `headers`.
HttpResponse JsonResponse(int status, std::string body, HttpHeaders headers = {});

}  // namespace icewarden::testing
