// CatalogClient authentication: static bearer tokens, OAuth2 client credentials with a
// cached, refreshed token, one re-authentication on 401, and no secret in any message.
#include <gtest/gtest.h>

#include "health/catalog_client.h"
#include "health/catalog_json.h"
#include "tests/unit/health/catalog_test_support.h"

namespace icewarden::testing {
namespace {

constexpr const char* kSecret = "s3cr3t-client-p@ss";
constexpr const char* kIdp = "https://idp.test/realms/lake/token";
const std::string kNamespacesUrl = std::string(kRoot) + "/namespaces?pageToken=&pageSize=100";

HttpResponse Token(const std::string& token, int expires_in = 3600) {
  return JsonResponse(200, R"({"access_token": ")" + token +
                               R"(", "token_type": "bearer", "expires_in": )" +
                               std::to_string(expires_in) + "}");
}

HttpResponse NoNamespaces() { return JsonResponse(200, R"({"namespaces": []})"); }

class CatalogAuthTest : public CatalogClientTest {
 protected:
  CatalogClientOptions OAuth(std::string token_uri) {
    auto o = Options();
    o.auth = CatalogAuth::ClientCredentials("icewarden", kSecret, "catalog", std::move(token_uri));
    return o;
  }
  void ListNamespacesOk(CatalogClient& client) {
    Caught<std::vector<Namespace>> c;
    client.ListNamespaces(std::nullopt, c.Callback());
    ASSERT_TRUE(c->ok()) << c->status().ToString();
  }
};

TEST_F(CatalogAuthTest, StaticBearerTokenIsSentAsIs) {
  auto o = Options();
  o.auth = CatalogAuth::Bearer("static-token-1");
  auto client = Client(o);
  LoadConfig(*client);
  EXPECT_EQ(transport_.requests()[0].headers.Get("Authorization"), "Bearer static-token-1");
}

TEST_F(CatalogAuthTest, TokenComesFromTheConfiguredEndpointAndIsCached) {
  auto client = Client(OAuth(kIdp));
  transport_.Expect("POST", kIdp, Token("tok-1"));
  transport_.Expect("GET", kConfigUrl, JsonResponse(200, ConfigBody()));
  transport_.Expect("GET", kNamespacesUrl, NoNamespaces());
  transport_.Expect("GET", kNamespacesUrl, NoNamespaces());
  ListNamespacesOk(*client);
  ListNamespacesOk(*client);

  const HttpRequest& token_request = transport_.requests()[0];
  EXPECT_EQ(token_request.headers.Get("content-type"), "application/x-www-form-urlencoded");
  EXPECT_EQ(token_request.body,
            "grant_type=client_credentials&client_id=icewarden&client_secret=s3cr3t-client-p%40ss"
            "&scope=catalog");
  for (size_t i = 1; i < transport_.requests().size(); ++i) {
    EXPECT_EQ(transport_.requests()[i].headers.Get("Authorization"), "Bearer tok-1");
  }
}

TEST_F(CatalogAuthTest, TokenIsRefreshedNearExpiryFromTheAdvertisedEndpoint) {
  // No endpoint configured: the first token (needed for /v1/config itself) comes from the
  // deprecated route; the config then advertises oauth2-server-uri for the next ones.
  auto client = Client(OAuth(""));
  transport_.Expect("POST", std::string(kBase) + "/v1/oauth/tokens", Token("tok-1", 100));
  transport_.Expect("GET", kConfigUrl,
                    JsonResponse(200, R"({"defaults": {}, "overrides": {"prefix": "lake-eu",
                                          "oauth2-server-uri": "https://idp.test/realms/lake/token"}})"));
  transport_.Expect("GET", kNamespacesUrl, NoNamespaces());
  ListNamespacesOk(*client);

  clock_.Advance(std::chrono::seconds(79));  // under 80% of 100 s: cached
  transport_.Expect("GET", kNamespacesUrl, NoNamespaces());
  ListNamespacesOk(*client);

  clock_.Advance(std::chrono::seconds(2));  // past 80%: refreshed before it expires
  transport_.Expect("POST", kIdp, Token("tok-2", 100));
  transport_.Expect("GET", kNamespacesUrl, NoNamespaces());
  ListNamespacesOk(*client);
  EXPECT_EQ(transport_.requests().back().headers.Get("Authorization"), "Bearer tok-2");
}

TEST_F(CatalogAuthTest, UnauthorizedTriggersExactlyOneRefreshAndRetry) {
  auto client = Client(OAuth(kIdp));
  transport_.Expect("POST", kIdp, Token("tok-1"));
  LoadConfig(*client);
  transport_.Expect("GET", kNamespacesUrl,
                    JsonResponse(401, R"({"error": {"message": "token revoked",
                                                            "type": "NotAuthorizedException", "code": 401}})"));
  transport_.Expect("POST", kIdp, Token("tok-2"));
  transport_.Expect("GET", kNamespacesUrl, NoNamespaces());
  ListNamespacesOk(*client);
  EXPECT_EQ(transport_.requests().back().headers.Get("Authorization"), "Bearer tok-2");

  // A second 401 right after a fresh token is final: no loop.
  transport_.Expect("GET", kNamespacesUrl, JsonResponse(401, "{}"));
  transport_.Expect("POST", kIdp, Token("tok-3"));
  transport_.Expect("GET", kNamespacesUrl, JsonResponse(401, "{}"));
  Caught<std::vector<Namespace>> c;
  client->ListNamespaces(std::nullopt, c.Callback());
  ASSERT_FALSE(c->ok());
  EXPECT_EQ(c->status().code(), StatusCode::kUnauthenticated);
}

TEST_F(CatalogAuthTest, RejectedCredentialsAreUnauthenticatedAndNeverLeakTheSecret) {
  auto client = Client(OAuth(kIdp));
  // A careless identity provider echoes the request back.
  transport_.Expect(
      "POST", kIdp,
      JsonResponse(401, std::string(R"j({"error": "invalid_client", "error_description":
                                 "bad secret s3cr3t-client-p@ss (s3cr3t-client-p%40ss)"})j")));
  Caught<CatalogConfig> c;
  client->GetConfig(c.Callback());
  ASSERT_FALSE(c->ok());
  EXPECT_EQ(c->status().code(), StatusCode::kUnauthenticated);
  EXPECT_NE(c->status().message().find("oauth2 token request to " + std::string(kIdp)),
            std::string::npos);
  EXPECT_NE(c->status().message().find("invalid_client"), std::string::npos);
  EXPECT_EQ(c->status().ToString().find("s3cr3t"), std::string::npos) << c->status().ToString();
}

TEST_F(CatalogAuthTest, TokensEchoedByTheCatalogAreRedacted) {
  auto o = Options();
  o.auth = CatalogAuth::Bearer("static-token-abc");
  auto client = Client(o);
  transport_.Expect(
      "GET", kConfigUrl,
      JsonResponse(403, R"({"error": {"message": "token static-token-abc may not read",
                                          "type": "ForbiddenException", "code": 403}})"));
  Caught<CatalogConfig> c;
  client->GetConfig(c.Callback());
  ASSERT_FALSE(c->ok());
  EXPECT_EQ(c->status().code(), StatusCode::kPermissionDenied);
  EXPECT_EQ(c->status().message().find("static-token-abc"), std::string::npos);
  EXPECT_NE(c->status().message().find("token *** may not read"), std::string::npos);

  auto oauth = Client(OAuth(kIdp));
  transport_.Expect("POST", kIdp, Token("oauth-token-xyz"));
  transport_.Expect("GET", kConfigUrl,
                    JsonResponse(400, R"({"error": {"message": "bad header Bearer oauth-token-xyz",
                                          "type": "BadRequestException", "code": 400}})"));
  Caught<CatalogConfig> d;
  oauth->GetConfig(d.Callback());
  ASSERT_FALSE(d->ok());
  EXPECT_EQ(d->status().message().find("oauth-token-xyz"), std::string::npos)
      << d->status().message();
}

TEST(CatalogJsonTest, IsoDurations) {
  EXPECT_EQ(ParseIsoDuration("PT30M"), std::chrono::minutes(30));
  EXPECT_EQ(ParseIsoDuration("PT24H"), std::chrono::hours(24));
  EXPECT_EQ(ParseIsoDuration("P1DT1.5S"), std::chrono::milliseconds(86'401'500));
  EXPECT_EQ(ParseIsoDuration("P1W"), std::chrono::hours(168));
  EXPECT_EQ(ParseIsoDuration("P1M"), std::nullopt);  // months have no fixed length
  EXPECT_EQ(ParseIsoDuration("30M"), std::nullopt);
  EXPECT_EQ(ParseIsoDuration("PT"), std::nullopt);
}

TEST(CatalogJsonTest, RetryAfterSecondsAndHttpDate) {
  EXPECT_EQ(ParseRetryAfter(HttpHeaders{{"retry-after", " 3 "}}, 0), std::chrono::seconds(3));
  // Sun, 06 Nov 1994 08:49:37 GMT = 784111777 s
  EXPECT_EQ(ParseRetryAfter(HttpHeaders{{"Retry-After", "Sun, 06 Nov 1994 08:49:37 GMT"}},
                            784111777000 - 1500),
            std::chrono::milliseconds(1500));
  EXPECT_EQ(ParseRetryAfter(HttpHeaders{}, 0), std::nullopt);
  EXPECT_EQ(ParseRetryAfter(HttpHeaders{{"Retry-After", "soon"}}, 0), std::nullopt);
}

TEST(CatalogJsonTest, UuidV7CarriesItsTimeAndVersion) {
  std::uint64_t n = 0;
  RandomBits random = [&n] { return ~(n++); };
  std::string id = NewUuidV7(1'780'000'000'123, random);
  EXPECT_EQ(id.size(), 36u);
  EXPECT_EQ(id[14], '7');
  EXPECT_NE(std::string("89ab").find(id[19]), std::string::npos);  // variant 10
  EXPECT_EQ(UuidV7Millis(id), 1'780'000'000'123);
  EXPECT_NE(NewUuidV7(1'780'000'000'123, random), id);
}

}  // namespace
}  // namespace icewarden::testing
