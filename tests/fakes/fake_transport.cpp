#include "tests/fakes/fake_transport.h"

#include <gtest/gtest.h>

namespace icewarden::testing {

FakeTransport& FakeTransport::Expect(std::string method, std::string url, HttpResponse response) {
  script_.push_back({std::move(method), std::move(url), std::move(response)});
  return *this;
}

FakeTransport& FakeTransport::ExpectError(std::string method, std::string url, Status error) {
  script_.push_back({std::move(method), std::move(url), std::move(error)});
  return *this;
}

void FakeTransport::Send(HttpRequest request, std::chrono::milliseconds deadline,
                         std::function<void(Result<HttpResponse>)> done) {
  requests_.push_back(request);
  deadlines_.push_back(deadline);
  const std::string got = request.method + " " + request.url;
  if (script_.empty()) {
    ADD_FAILURE() << "fake transport: unexpected request " << got;
    Complete([done, got] { done(Status::Internal("fake transport: unexpected request " + got)); });
    return;
  }
  Exchange next = std::move(script_.front());
  script_.pop_front();
  const std::string want = next.method + " " + next.url;
  if (got != want) {
    ADD_FAILURE() << "fake transport: got " << got << "\n  want " << want;
    Complete([done, got, want] {
      done(Status::Internal("fake transport: got " + got + ", want " + want));
    });
    return;
  }
  Complete([done, outcome = std::move(next.outcome)] { done(outcome); });
}

void FakeTransport::Complete(std::function<void()> completion) {
  if (hold_) {
    held_.push_back(std::move(completion));
  } else {
    completion();
  }
}

void FakeTransport::DeliverHeld() {
  hold_ = false;
  while (!held_.empty()) {
    auto next = std::move(held_.front());
    held_.pop_front();
    next();
  }
}

void FakeTransport::RunAfter(std::chrono::milliseconds delay, std::function<void()> fn) {
  waits_.push_back(delay);
  fn();
}

HttpResponse JsonResponse(int status, std::string body, HttpHeaders headers) {
  HttpResponse r;
  r.status = status;
  r.headers = std::move(headers);
  r.headers.Set("Content-Type", "application/json");
  r.body = std::move(body);
  return r;
}

}  // namespace icewarden::testing
