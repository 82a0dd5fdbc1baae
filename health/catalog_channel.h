// CatalogChannel: the authenticated, retrying request path to one Iceberg REST catalog.
// Internal to the catalog client (health/catalog_client.h); separate so that the retry
// and re-authentication rules can be read in one place.
//
// Rules, in the order they apply to every request:
//   1. Authorization: none, the static bearer token, or an OAuth2 token from the cache.
//   2. 401 or 419 with OAuth2: drop the token, fetch a new one, resend once.
//   3. 503 with a Retry-After of at most max_retry_after: wait on a transport timer and
//      resend, at most max_503_retries times. Without Retry-After, never (the spec: a
//      non-idempotent request is retried only when Retry-After is present).
//   4. 409 whose error type says an earlier request with the same Idempotency-Key is still
//      being processed (health/idempotency_in_progress.h): wait Retry-After (at most
//      max_retry_after) or a short growing pause, and resend, at most 5 times.
//   Nothing else is retried here: any other 409, or a 5xx on a commit, is the caller's
//   decision.
// The request (headers included, so an Idempotency-Key too) is resent unchanged.
// Thread-safety: the transport's executor thread only.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include "health/catalog_auth.h"
#include "health/http_transport.h"
#include "state/clock.h"

namespace icewarden {

struct RetryPolicy {
  int max_503_retries = 2;
  std::chrono::milliseconds max_retry_after{10'000};
};

class CatalogChannel : public std::enable_shared_from_this<CatalogChannel> {
 public:
  CatalogChannel(CatalogAuth auth, std::string base_uri, RetryPolicy retry,
                 HttpTransport& transport, const Clock& clock);

  // Calls `done` once with the final response (any HTTP status) or with a transport or
  // token error. `deadline` applies to each attempt and to each token request. An error's
  // Status::reply() is kAnswered when any attempt of the call got an HTTP response, and
  // kUnknown for a token endpoint that is not on the catalog's origin.
  void Send(HttpRequest request, std::chrono::milliseconds deadline,
            std::function<void(Result<HttpResponse>)> done);

  // As Send; on an error `may_have_been_delivered` also says whether the last attempt may
  // have reached the server. It is false when no OAuth2 token could be had (the request was
  // not sent again; any earlier attempt had a definite 401/419/503 answer) or the transport
  // proved the request never arrived (RequestMayHaveBeenDelivered). Commits need this: a
  // token failure's message does not start with a transport phase.
  void SendTracked(HttpRequest request, std::chrono::milliseconds deadline,
                   std::function<void(Result<HttpResponse>, bool may_have_been_delivered)> done);

  OAuthTokenSource& tokens() { return *tokens_; }
  // `status` with every secret replaced by "***".
  Status Redact(const Status& status) const;

 private:
  struct Attempt;
  void Authorize(std::shared_ptr<Attempt> a);
  void Transmit(std::shared_ptr<Attempt> a);

  std::string base_uri_;
  CatalogAuth::Kind auth_kind_;
  std::string bearer_token_;
  RetryPolicy retry_;
  HttpTransport& transport_;
  const Clock& clock_;
  std::shared_ptr<OAuthTokenSource> tokens_;
};

}  // namespace icewarden
