// What the catalog client makes of answers it cannot parse (alive, reported, never an
// outage: DESIGN.md rule 7), and two real-world /v1/config bodies it used to reject.
#include <gtest/gtest.h>

#include "health/catalog_json.h"
#include "tests/unit/health/catalog_test_support.h"

namespace icewarden::testing {
namespace {

// Regression: `"endpoints": []` meant "nothing advertised", so discovery listed no
// namespace and found no table. The Java reference client reads an empty list as a missing
// one: the spec's default endpoints.
TEST_F(CatalogClientTest, EmptyEndpointsListIsTreatedAsMissingEndpoints) {
  auto client = Client();
  LoadConfig(*client, R"("endpoints": [])");
  ASSERT_TRUE(client->config().has_value());
  EXPECT_FALSE(client->config()->endpoints.has_value());
  transport_.Expect("GET", std::string(kRoot) + "/namespaces?pageToken=&pageSize=100",
                    JsonResponse(200, R"({"namespaces": [["sales"]]})"));
  Caught<std::vector<Namespace>> c;
  client->ListNamespaces(std::nullopt, c.Callback());
  ASSERT_TRUE(c->ok()) << c->status().ToString();
  ASSERT_EQ((*c)->size(), 1u);
  EXPECT_EQ((**c)[0], Namespace{"sales"});
}

// Regression: a null inside `defaults` or `overrides` rejected the whole config, and the
// region ended up unreachable although its catalog answered every probe.
TEST_F(CatalogClientTest, NullValuesInDefaultsAndOverridesAreAccepted) {
  auto client = Client();
  transport_.Expect(
      "GET", kConfigUrl,
      JsonResponse(200, R"({"defaults": {"prefix": "lake-eu", "warehouse": null, "clients": "4"},
                             "overrides": {"prefix": null, "s3.endpoint": null}})"));
  Caught<CatalogConfig> c;
  client->GetConfig(c.Callback());
  ASSERT_TRUE(c->ok()) << c->status().ToString();
  EXPECT_EQ((*c)->prefix, "lake-eu") << "a null override leaves the default in place";
  EXPECT_EQ((*c)->properties.count("warehouse"), 0u);
  EXPECT_EQ((*c)->properties.count("s3.endpoint"), 0u);
  EXPECT_EQ((*c)->properties.at("clients"), "4");
}

TEST_F(CatalogClientTest, HttpErrorsAreAnswersAndTransportFailuresKeepTheirReply) {
  auto client = Client();
  transport_.Expect("GET", kConfigUrl, JsonResponse(401, ""));
  transport_.ExpectError("GET", kConfigUrl,
                         Status::Unavailable("connect catalog.test:80: Connection refused")
                             .WithReply(PeerReply::kSilent));
  Caught<CatalogConfig> first, second;
  client->GetConfig(first.Callback());
  client->GetConfig(second.Callback());
  ASSERT_FALSE(first->ok());
  EXPECT_EQ(first->status().reply(), PeerReply::kAnswered);
  ASSERT_FALSE(second->ok());
  EXPECT_EQ(second->status().reply(), PeerReply::kSilent);
  EXPECT_NE(second->status().message().find("get catalog config from"), std::string::npos);
}

TEST_F(CatalogClientTest, AnUnparsableConfigIsReportedBoundedAndRedacted) {
  std::vector<UnparsedAnswer> seen;
  auto options = Options();
  options.on_unparsed = [&](const UnparsedAnswer& a) { seen.push_back(a); };
  auto client = Client(options);
  const std::string body =
      "<html>{\"access_token\": \"s3cr3t-t0ken\"} Authorization: Bearer abc.def " +
      std::string(2000, 'x') + "</html>";
  transport_.Expect("GET", kConfigUrl, JsonResponse(200, body));
  Caught<CatalogConfig> c;
  client->GetConfig(c.Callback());
  ASSERT_FALSE(c->ok());
  EXPECT_EQ(c->status().reply(), PeerReply::kUnparsed);
  EXPECT_NE(c->status().message().find("malformed CatalogConfig: not JSON"), std::string::npos);
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].kind, "config");
  EXPECT_EQ(seen[0].http_status, 200);
  EXPECT_EQ(seen[0].excerpt.size(), kUnparsedExcerptBytes);
  EXPECT_EQ(seen[0].excerpt.find("s3cr3t"), std::string::npos) << seen[0].excerpt;
  EXPECT_EQ(seen[0].excerpt.find("abc.def"), std::string::npos) << seen[0].excerpt;
  EXPECT_TRUE(seen[0].excerpt.starts_with("<html>{\"access_token\": \"***\"}")) << seen[0].excerpt;
}

TEST_F(CatalogClientTest, AnUnparsableTableIsReportedAsLoadTable) {
  std::vector<UnparsedAnswer> seen;
  auto options = Options();
  options.on_unparsed = [&](const UnparsedAnswer& a) { seen.push_back(a); };
  auto client = Client(options);
  LoadConfig(*client);
  transport_.Expect("GET", std::string(kRoot) + "/namespaces/ops/tables/canary?snapshots=all",
                    JsonResponse(200, R"({"metadata": {"format-version": "two"}})"));
  Caught<LoadTableOutcome> c;
  client->LoadTable({{"ops"}, "canary"}, std::nullopt, c.Callback());
  ASSERT_FALSE(c->ok());
  EXPECT_EQ(c->status().reply(), PeerReply::kUnparsed);
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].kind, "load_table");
  EXPECT_EQ(seen[0].excerpt, R"({"metadata": {"format-version": "two"}})");
}

TEST(RedactedExcerptTest, MasksCredentialShapesAndBoundsTheText) {
  EXPECT_EQ(RedactedExcerpt(R"({"client_secret":"abc","name":"x"})", 512),
            R"({"client_secret":"***","name":"x"})");
  EXPECT_EQ(RedactedExcerpt("grant_type=client_credentials&client_secret=hunter22&scope=x", 512),
            "grant_type=client_credentials&client_secret=***&scope=x");
  EXPECT_EQ(RedactedExcerpt("Authorization: Bearer tok-123", 512), "Authorization: Bearer ***");
  EXPECT_EQ(RedactedExcerpt("jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.sig end", 512),
            "jwt *** end");
  EXPECT_EQ(RedactedExcerpt("a\nb\x01"
                            "c",
                            512),
            "a b c");
  // A secret across the limit is masked before the cut, so no prefix of it leaks.
  const std::string body = std::string(10, 'x') + R"({"token": "abcdefghijklmnop"})";
  EXPECT_EQ(RedactedExcerpt(body, 24), std::string(10, 'x') + R"({"token": "***)");
}

}  // namespace
}  // namespace icewarden::testing
