// How icewarden authenticates to an Iceberg REST catalog: not at all, with a static bearer
// token, or with OAuth2 client credentials (RFC 6749 4.4), whose access token is cached and
// refreshed before it expires.
//
// Secrets (client secret, tokens) never appear in a Status message or a log line:
// OAuthTokenSource::Redact scrubs every secret it knows, and the catalog client passes
// every Status it returns through it.
// Thread-safety: OAuthTokenSource is used from the transport's executor thread only.
#pragma once

#include <chrono>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "health/http_transport.h"
#include "state/clock.h"
#include "state/status.h"

namespace icewarden {

struct CatalogAuth {
  enum class Kind { kNone, kBearerToken, kOAuth2ClientCredentials };
  Kind kind = Kind::kNone;
  std::string bearer_token;  // kBearerToken
  // kOAuth2ClientCredentials
  std::string client_id;
  std::string client_secret;
  std::string scope = "catalog";  // the spec's OAuth2 scope; "PRINCIPAL_ROLE:ALL" for Polaris
  // Token endpoint chosen by the operator. Empty: the catalog's `oauth2-server-uri` once
  // GET /v1/config has been read, else the deprecated {base}/v1/oauth/tokens (the config
  // call itself needs a token, so that is where the very first one comes from).
  std::string token_uri;

  static CatalogAuth None() { return {}; }
  static CatalogAuth Bearer(std::string token);
  static CatalogAuth ClientCredentials(std::string client_id, std::string client_secret,
                                       std::string scope = "catalog", std::string token_uri = "");
};

class OAuthTokenSource : public std::enable_shared_from_this<OAuthTokenSource> {
 public:
  // `base_uri` is the catalog's base ("https://host/api/catalog", without /v1); relative
  // token URIs resolve against it. `transport` and `clock` must outlive this object.
  OAuthTokenSource(CatalogAuth auth, std::string base_uri, HttpTransport& transport,
                   const Clock& clock);

  // Calls `done` with an access token: the cached one while it is younger than 80% of its
  // expires_in (a token without expires_in is kept until Invalidate), else a fresh one
  // from the token endpoint. Callers that arrive while a request is in flight share it.
  // Errors: kUnauthenticated (the endpoint refused the credentials, 4xx), kUnavailable
  // (transport failure or 5xx). Messages name the endpoint, never a secret.
  void Get(std::chrono::milliseconds deadline, std::function<void(Result<std::string>)> done);

  // Drops `token` if it is still the cached one (after a 401 or 419), so the next Get
  // fetches a new token. A token already replaced by a concurrent refresh is left alone.
  void Invalidate(const std::string& token);

  // The catalog's advertised `oauth2-server-uri` (from GET /v1/config). Used for the next
  // token request unless CatalogAuth::token_uri is set.
  void SetAdvertisedEndpoint(std::string uri);
  std::string TokenEndpoint() const;

  // `text` with the client secret and every token issued so far replaced by "***".
  std::string Redact(std::string text) const;

 private:
  void Fetch(std::chrono::milliseconds deadline);
  void Finish(Result<std::string> token);

  CatalogAuth auth_;
  std::string base_uri_;
  std::string advertised_uri_;
  HttpTransport& transport_;
  const Clock& clock_;
  std::optional<std::string> token_;
  std::optional<std::chrono::steady_clock::time_point> refresh_at_;
  std::vector<std::function<void(Result<std::string>)>> waiters_;
  bool fetching_ = false;
  std::deque<std::string> issued_;  // recent tokens, for Redact
};

// Percent-encodes everything but RFC 3986 unreserved characters ("a b/c" -> "a%20b%2Fc").
std::string PercentEncode(std::string_view s);

// "Retry-After: 2" -> 2 s; an HTTP-date -> the time until then by `now` (0 if past);
// nullopt if absent or unparseable.
std::optional<std::chrono::milliseconds> ParseRetryAfter(const HttpHeaders& headers,
                                                         UnixMillis now);

}  // namespace icewarden
