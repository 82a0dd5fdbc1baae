#include "health/catalog_channel.h"

#include <algorithm>

#include "health/idempotency_in_progress.h"

namespace icewarden {

struct CatalogChannel::Attempt {
  HttpRequest request;
  std::chrono::milliseconds deadline;
  // The second argument: whether an error may hide a delivered request.
  std::function<void(Result<HttpResponse>, bool)> done;
  std::string token;  // the OAuth2 token this attempt carries
  bool reauthenticated = false;
  int retries_503 = 0;
  int retries_in_progress = 0;
  bool answered = false;  // an earlier attempt got an HTTP response (a 401, 419 or 503)
};

namespace {

// A 409 "still in progress" is resent this many times at most, after a pause of Retry-After
// when the catalog sends one, else 100 ms doubling (100 ms .. 1.6 s: about 3 s in all, the
// time a catalog takes to finish one commit under load).
constexpr int kMaxInProgressRetries = 5;

std::chrono::milliseconds InProgressPause(int retry) {
  return std::chrono::milliseconds(100 << std::min(retry, 4));
}

// "https://host:8443/api/catalog" -> "https://host:8443".
std::string_view Origin(std::string_view url) {
  const auto scheme = url.find("://");
  if (scheme == std::string_view::npos) return url;
  return url.substr(0, url.find('/', scheme + 3));
}

// A failed call's reply as the caller must read it: whatever the last attempt saw, unless
// an earlier attempt of the same call heard from the catalog (then the catalog answered).
Status WithCallReply(Status s, bool answered) {
  return answered ? s.WithReply(PeerReply::kAnswered) : s;
}

}  // namespace

CatalogChannel::CatalogChannel(CatalogAuth auth, std::string base_uri, RetryPolicy retry,
                               HttpTransport& transport, const Clock& clock)
    : base_uri_(base_uri),
      auth_kind_(auth.kind),
      bearer_token_(auth.bearer_token),
      retry_(retry),
      transport_(transport),
      clock_(clock),
      tokens_(std::make_shared<OAuthTokenSource>(std::move(auth), std::move(base_uri), transport,
                                                 clock)) {}

Status CatalogChannel::Redact(const Status& status) const {
  if (status.ok()) return status;
  return status.WithMessage(tokens_->Redact(status.message()));
}

void CatalogChannel::Send(HttpRequest request, std::chrono::milliseconds deadline,
                          std::function<void(Result<HttpResponse>)> done) {
  SendTracked(std::move(request), deadline,
              [done = std::move(done)](Result<HttpResponse> r, bool) { done(std::move(r)); });
}

void CatalogChannel::SendTracked(HttpRequest request, std::chrono::milliseconds deadline,
                                 std::function<void(Result<HttpResponse>, bool)> done) {
  auto a = std::make_shared<Attempt>();
  a->request = std::move(request);
  a->deadline = deadline;
  a->done = std::move(done);
  if (!a->request.headers.Has("Accept")) a->request.headers.Set("Accept", "application/json");
  Authorize(std::move(a));
}

void CatalogChannel::Authorize(std::shared_ptr<Attempt> a) {
  switch (auth_kind_) {
    case CatalogAuth::Kind::kNone:
      Transmit(std::move(a));
      return;
    case CatalogAuth::Kind::kBearerToken:
      a->request.headers.Set("Authorization", "Bearer " + bearer_token_);
      Transmit(std::move(a));
      return;
    case CatalogAuth::Kind::kOAuth2ClientCredentials:
      tokens_->Get(a->deadline, [self = shared_from_this(), a](Result<std::string> token) {
        if (!token.ok()) {
          // This attempt was never transmitted. What the token endpoint did says something
          // about the catalog only when the catalog serves it: an identity provider that
          // is down proves nothing about the catalog, so that reply becomes kUnknown.
          Status s = token.status();
          if (Origin(self->tokens_->TokenEndpoint()) != Origin(self->base_uri_))
            s = s.WithReply(PeerReply::kUnknown);
          a->done(WithCallReply(std::move(s), a->answered), /*may_have_been_delivered=*/false);
          return;
        }
        a->token = *token;
        a->request.headers.Set("Authorization", "Bearer " + *token);
        self->Transmit(a);
      });
      return;
  }
}

void CatalogChannel::Transmit(std::shared_ptr<Attempt> a) {
  transport_.Send(a->request, a->deadline, [self = shared_from_this(), a](Result<HttpResponse> r) {
    if (!r.ok()) {
      const bool delivered = RequestMayHaveBeenDelivered(r.status());
      a->done(WithCallReply(r.status(), a->answered), delivered);
      return;
    }
    a->answered = true;
    const int status = r->status;
    if ((status == 401 || status == 419) &&
        self->auth_kind_ == CatalogAuth::Kind::kOAuth2ClientCredentials && !a->reauthenticated) {
      a->reauthenticated = true;
      self->tokens_->Invalidate(a->token);
      self->Authorize(a);
      return;
    }
    if (status == 503 && a->retries_503 < self->retry_.max_503_retries) {
      auto wait = ParseRetryAfter(r->headers, self->clock_.Now());
      if (wait && *wait <= self->retry_.max_retry_after) {
        ++a->retries_503;
        self->transport_.RunAfter(*wait, [self, a] { self->Authorize(a); });
        return;
      }
    }
    if (a->request.headers.Has("Idempotency-Key") && IsRequestInProgress(*r) &&
        a->retries_in_progress < kMaxInProgressRetries) {
      auto wait = ParseRetryAfter(r->headers, self->clock_.Now())
                      .value_or(InProgressPause(a->retries_in_progress));
      if (wait <= self->retry_.max_retry_after) {
        ++a->retries_in_progress;
        self->transport_.RunAfter(wait, [self, a] { self->Authorize(a); });
        return;
      }
    }
    a->done(std::move(r), true);
  });
}

}  // namespace icewarden
