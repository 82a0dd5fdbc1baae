#include "health/catalog_auth.h"

#include <ctime>
#include <iomanip>
#include <sstream>

#include "health/catalog_json.h"

namespace icewarden {

CatalogAuth CatalogAuth::Bearer(std::string token) {
  CatalogAuth a;
  a.kind = Kind::kBearerToken;
  a.bearer_token = std::move(token);
  return a;
}

CatalogAuth CatalogAuth::ClientCredentials(std::string client_id, std::string client_secret,
                                           std::string scope, std::string token_uri) {
  CatalogAuth a;
  a.kind = Kind::kOAuth2ClientCredentials;
  a.client_id = std::move(client_id);
  a.client_secret = std::move(client_secret);
  a.scope = std::move(scope);
  a.token_uri = std::move(token_uri);
  return a;
}

std::string PercentEncode(std::string_view s) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(s.size());
  for (unsigned char c : s) {
    if (std::isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~') {
      out.push_back(static_cast<char>(c));
    } else {
      out.push_back('%');
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 0x0F]);
    }
  }
  return out;
}

std::optional<std::chrono::milliseconds> ParseRetryAfter(const HttpHeaders& headers,
                                                         UnixMillis now) {
  auto value = headers.Get("Retry-After");
  if (!value) return std::nullopt;
  std::string v = *value;
  while (!v.empty() && v.back() == ' ') v.pop_back();
  while (!v.empty() && v.front() == ' ') v.erase(0, 1);
  if (!v.empty() && v.find_first_not_of("0123456789") == std::string::npos) {
    if (v.size() > 9) return std::nullopt;
    return std::chrono::seconds(std::stoll(v));
  }
  std::tm tm{};
  std::istringstream in(v);
  in.imbue(std::locale::classic());
  in >> std::get_time(&tm, "%a, %d %b %Y %H:%M:%S");  // IMF-fixdate, always GMT
  if (in.fail()) return std::nullopt;
  UnixMillis at = static_cast<UnixMillis>(timegm(&tm)) * 1000;
  return std::chrono::milliseconds(std::max<UnixMillis>(0, at - now));
}

OAuthTokenSource::OAuthTokenSource(CatalogAuth auth, std::string base_uri, HttpTransport& transport,
                                   const Clock& clock)
    : auth_(std::move(auth)),
      base_uri_(std::move(base_uri)),
      transport_(transport),
      clock_(clock) {}

void OAuthTokenSource::SetAdvertisedEndpoint(std::string uri) { advertised_uri_ = std::move(uri); }

std::string OAuthTokenSource::TokenEndpoint() const {
  std::string uri = !auth_.token_uri.empty() ? auth_.token_uri : advertised_uri_;
  if (uri.empty()) return base_uri_ + "/v1/oauth/tokens";
  if (uri.starts_with("http://") || uri.starts_with("https://")) return uri;
  return base_uri_ + (uri.starts_with("/") ? "" : "/") + uri;
}

void OAuthTokenSource::Get(std::chrono::milliseconds deadline,
                           std::function<void(Result<std::string>)> done) {
  if (token_ && (!refresh_at_ || clock_.Monotonic() < *refresh_at_)) {
    done(*token_);
    return;
  }
  waiters_.push_back(std::move(done));
  if (!fetching_) Fetch(deadline);
}

void OAuthTokenSource::Invalidate(const std::string& token) {
  if (token_ == token) {
    token_.reset();
    refresh_at_.reset();
  }
}

void OAuthTokenSource::Fetch(std::chrono::milliseconds deadline) {
  fetching_ = true;
  HttpRequest req;
  req.method = "POST";
  req.url = TokenEndpoint();
  req.headers.Set("Content-Type", "application/x-www-form-urlencoded");
  req.headers.Set("Accept", "application/json");
  // Credentials in the form body, as the spec's OAuthClientCredentialsRequest (and every
  // Iceberg client) sends them; servers that want HTTP Basic accept this too by RFC 6749.
  req.body = "grant_type=client_credentials&client_id=" + PercentEncode(auth_.client_id) +
             "&client_secret=" + PercentEncode(auth_.client_secret);
  if (!auth_.scope.empty()) req.body += "&scope=" + PercentEncode(auth_.scope);
  const auto requested_at = clock_.Monotonic();
  const std::string endpoint = req.url;
  transport_.Send(
      std::move(req), deadline,
      [self = shared_from_this(), endpoint, requested_at](Result<HttpResponse> r) {
        const std::string what = "oauth2 token request to " + endpoint;
        if (!r.ok()) {
          self->Finish(r.status().WithMessage(what + ": " + r.status().message()));
          return;
        }
        if (r->status != 200) {
          std::string why = ParseOAuthError(r->body).value_or("no OAuthError body");
          std::string msg = what + " failed: " + std::to_string(r->status) + " " + why;
          self->Finish((r->status >= 500 || r->status == 429 ? Status::Unavailable(msg)
                                                             : Status::Unauthenticated(msg))
                           .WithReply(PeerReply::kAnswered));
          return;
        }
        auto token = ParseOAuthTokenResponse(r->body);
        if (!token.ok()) {
          self->Finish(token.status().WithMessage(what + ": " + token.status().message()));
          return;
        }
        self->token_ = token->access_token;
        self->issued_.push_back(token->access_token);
        if (self->issued_.size() > 8) self->issued_.pop_front();
        self->refresh_at_.reset();
        if (token->expires_in) {
          // Refresh at 80% of the lifetime, counted from when we asked.
          self->refresh_at_ =
              requested_at +
              std::chrono::duration_cast<std::chrono::milliseconds>(*token->expires_in) * 8 / 10;
        }
        self->Finish(token->access_token);
      });
}

void OAuthTokenSource::Finish(Result<std::string> token) {
  fetching_ = false;
  if (!token.ok()) token = token.status().WithMessage(Redact(token.status().message()));
  auto waiters = std::move(waiters_);
  waiters_.clear();
  for (auto& w : waiters) w(token);
}

std::string OAuthTokenSource::Redact(std::string text) const {
  auto scrub = [&text](const std::string& secret) {
    if (secret.size() < 4) return;  // too short to be a real secret; scrubbing would mangle
    for (size_t at = text.find(secret); at != std::string::npos; at = text.find(secret, at)) {
      text.replace(at, secret.size(), "***");
    }
  };
  scrub(auth_.client_secret);
  scrub(PercentEncode(auth_.client_secret));
  scrub(auth_.bearer_token);
  for (const auto& t : issued_) scrub(t);
  return text;
}

}  // namespace icewarden
