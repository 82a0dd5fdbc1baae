// CatalogClient behaves like the reference clients where real catalogs rely on it (issue 11):
// a `uri` override moves later requests (Nessie sends one), `prefix` goes into paths as given
// (Nessie's is percent-encoded already), and a 409 "request in progress" (Lakekeeper) is
// resent with the same Idempotency-Key instead of being read as a failed requirement.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "health/catalog_client.h"
#include "tests/unit/health/catalog_test_support.h"

namespace icewarden::testing {
namespace {

using namespace std::chrono_literals;

constexpr const char* kOtherBase = "http://catalog-b.test/iceberg";
constexpr const char* kFirstPage = "?pageToken=&pageSize=100";
constexpr const char* kAllSnapshots = "?snapshots=all";

std::string Config(const nlohmann::json& defaults, const nlohmann::json& overrides) {
  return nlohmann::json{{"defaults", defaults}, {"overrides", overrides}}.dump();
}

// Shaped as Nessie's IcebergConfigurer builds its ConfigResponse
// (projectnessie/nessie@8fbeb3dc, catalog/service/rest/.../IcebergConfigurer.java and
// ExternalBaseUri.java): the prefix is URLEncoder.encode("main|warehouse") in the defaults,
// and the overrides carry `uri` = the Iceberg base URI, ending in '/'.
std::string NessieConfig() {
  return Config({{"prefix", "main%7Cwarehouse"}, {"rest-page-size", "200"}},
                {{"uri", std::string(kOtherBase) + "/"},
                 {"nessie.is-nessie-catalog", "true"},
                 {"nessie.prefix-pattern", "{ref}|{warehouse}"}});
}

constexpr const char* kLoadBody = R"({
  "metadata-location": "s3://lake/sales/orders/metadata/00001.metadata.json",
  "metadata": {"format-version": 2, "table-uuid": "9c12d441-03fe-4693-9a96-a0705ddf69c1",
               "current-snapshot-id": -1, "properties": {}}})";

template <class T>
const T& Ok(const Caught<T>& c) {
  EXPECT_TRUE(c.result.has_value());
  EXPECT_TRUE(c->ok()) << c->status().ToString();
  return c->value();
}

TEST_F(CatalogClientTest, UriOverrideMovesEveryLaterRequestButTheConfig) {
  auto client = Client();
  transport_.Expect("GET", kConfigUrl, JsonResponse(200, NessieConfig()));
  transport_.Expect("GET", std::string(kOtherBase) + "/v1/main%7Cwarehouse/namespaces" + kFirstPage,
                    JsonResponse(200, R"({"namespaces": [["sales"]]})"));
  Caught<std::vector<Namespace>> listed;
  client->ListNamespaces(std::nullopt, listed.Callback());
  EXPECT_EQ(Ok(listed), (std::vector<Namespace>{{"sales"}}));

  // The config itself is still read from the configured endpoint (the probe's question is
  // whether that one serves), and the override it repeats keeps applying.
  transport_.Expect("GET", kConfigUrl, JsonResponse(200, NessieConfig()));
  Caught<CatalogConfig> config;
  client->GetConfig(config.Callback());
  EXPECT_EQ(Ok(config).properties.at("uri"), std::string(kOtherBase) + "/");
  transport_.Expect("GET",
                    std::string(kOtherBase) +
                        "/v1/main%7Cwarehouse/namespaces/sales/tables/orders" + kAllSnapshots,
                    JsonResponse(200, kLoadBody));
  Caught<LoadTableOutcome> loaded;
  client->LoadTable({{"sales"}, "orders"}, std::nullopt, loaded.Callback());
  EXPECT_EQ(Ok(loaded).table.table_uuid, "9c12d441-03fe-4693-9a96-a0705ddf69c1");
}

TEST_F(CatalogClientTest, PrefixGoesIntoThePathExactlyAsTheCatalogGaveIt) {
  auto client = Client();
  // Without a uri override: the configured base, and the prefix byte for byte (no second
  // encoding of its '%').
  transport_.Expect("GET", kConfigUrl,
                    JsonResponse(200, Config({{"prefix", "main%7Cwarehouse"}}, {})));
  transport_.Expect(
      "GET",
      std::string(kBase) + "/v1/main%7Cwarehouse/namespaces/sales/tables/orders" + kAllSnapshots,
      JsonResponse(200, kLoadBody));
  Caught<LoadTableOutcome> loaded;
  client->LoadTable({{"sales"}, "orders"}, std::nullopt, loaded.Callback());
  Ok(loaded);
}

TEST_F(CatalogClientTest, UriInTheDefaultsDoesNotMoveRequests) {
  auto client = Client();
  // The client's own uri sits above the defaults (defaults < client < overrides).
  transport_.Expect("GET", kConfigUrl,
                    JsonResponse(200, Config({{"uri", kOtherBase}}, {{"prefix", "lake-eu"}})));
  transport_.Expect("GET", std::string(kRoot) + "/namespaces" + kFirstPage,
                    JsonResponse(200, R"({"namespaces": []})"));
  Caught<std::vector<Namespace>> listed;
  client->ListNamespaces(std::nullopt, listed.Callback());
  EXPECT_TRUE(Ok(listed).empty());
}

TEST_F(CatalogClientTest, AUriOverrideThatIsNoHttpUrlIsAMalformedAnswerNotSilence) {
  for (const char* uri : {"ftp://catalog-b.test/", "catalog-b.test:8181", "http:///v1", ""}) {
    SCOPED_TRACE(uri);
    auto client = Client();
    transport_.Expect("GET", kConfigUrl, JsonResponse(200, Config({}, {{"uri", uri}})));
    Caught<CatalogConfig> config;
    client->GetConfig(config.Callback());
    ASSERT_TRUE(config.result.has_value());
    ASSERT_FALSE(config->ok());
    EXPECT_EQ(config->status().reply(), PeerReply::kUnparsed);  // alive: never "unreachable"
    EXPECT_NE(config->status().message().find("is not an absolute http(s) URL"), std::string::npos)
        << config->status().message();
  }
}

// ---- 409 "request in progress" ------------------------------------------------------------

const std::string kRefTableUrl = std::string(kRoot) + "/namespaces/sales/tables/orders";
constexpr const char* kRefIdempotent = R"("idempotency-key-lifetime": "PT30M")";

// The body Lakekeeper's ErrorModel::request_in_progress() serializes to (serde field order
// message, type, code; lakekeeper/lakekeeper@90892e9c,
// crates/iceberg-ext/src/catalog/rest/error.rs). Built from that source, not recorded.
constexpr const char* kLakekeeperInProgress =
    R"({"error":{"message":"A request with this idempotency key is currently being processed. Please retry later.","type":"RequestInProgress","code":409}})";

constexpr const char* kCommitted = R"({
  "metadata-location": "s3://lake/sales/orders/metadata/00002.metadata.json",
  "metadata": {"format-version": 2, "table-uuid": "9c12d441-03fe-4693-9a96-a0705ddf69c1",
               "current-snapshot-id": -1,
               "properties": {"icewarden.owner": "eu-central-1", "icewarden.epoch": "2"}}})";

TableCommit Marker() {
  TableCommit c;
  c.table = {{"sales"}, "orders"};
  c.requirements = {AssertTableUuid{"9c12d441-03fe-4693-9a96-a0705ddf69c1"}};
  c.updates = {
      SetPropertiesUpdate{{{"icewarden.owner", "eu-central-1"}, {"icewarden.epoch", "2"}}}};
  return c;
}

TEST_F(CatalogClientTest, RequestInProgressIsResentWithTheSameKeyUntilItIsFinal) {
  auto client = Client();
  LoadConfig(*client, kRefIdempotent);
  transport_.Expect("POST", kRefTableUrl, JsonResponse(409, kLakekeeperInProgress));
  transport_.Expect("POST", kRefTableUrl, JsonResponse(409, kLakekeeperInProgress));
  transport_.Expect("POST", kRefTableUrl, JsonResponse(200, kCommitted));
  Caught<CommitOutcome> c;
  client->CommitTable(Marker(), c.Callback());
  EXPECT_EQ(Ok(c).kind, CommitOutcome::Kind::kCommitted);
  ASSERT_EQ(transport_.requests().size(), 4u);  // config + three POSTs
  auto key = transport_.requests()[1].headers.Get("Idempotency-Key");
  ASSERT_TRUE(key.has_value());
  for (int i = 2; i <= 3; ++i) {
    EXPECT_EQ(transport_.requests()[i].headers.Get("Idempotency-Key"), key);
    EXPECT_EQ(transport_.requests()[i].body, transport_.requests()[1].body);
  }
  EXPECT_EQ(transport_.waits(), (std::vector<std::chrono::milliseconds>{100ms, 200ms}));
}

TEST_F(CatalogClientTest, RequestInProgressWaitsWhatRetryAfterSays) {
  auto client = Client();
  LoadConfig(*client, kRefIdempotent);
  transport_.Expect("POST", kRefTableUrl,
                    JsonResponse(409, kLakekeeperInProgress, {{"Retry-After", "3"}}));
  transport_.Expect("POST", kRefTableUrl, JsonResponse(200, kCommitted));
  Caught<CommitOutcome> c;
  client->CommitTable(Marker(), c.Callback());
  EXPECT_EQ(Ok(c).kind, CommitOutcome::Kind::kCommitted);
  EXPECT_EQ(transport_.waits(), (std::vector<std::chrono::milliseconds>{3s}));
}

TEST_F(CatalogClientTest, StillInProgressAfterTheResendsIsAnUnknownOutcomeNotAConflict) {
  auto client = Client();
  LoadConfig(*client, kRefIdempotent);
  for (int i = 0; i < 6; ++i)
    transport_.Expect("POST", kRefTableUrl, JsonResponse(409, kLakekeeperInProgress));
  Caught<CommitOutcome> c;
  client->CommitTable(Marker(), c.Callback());
  const CommitOutcome& out = Ok(c);
  // The first request may still land: the caller must reload and look, reusing the key.
  EXPECT_EQ(out.kind, CommitOutcome::Kind::kStateUnknown);
  EXPECT_EQ(out.reply, PeerReply::kAnswered);
  EXPECT_EQ(out.idempotency_key, transport_.requests()[1].headers.Get("Idempotency-Key"));
  EXPECT_NE(out.detail.find("still processing an earlier request with this Idempotency-Key"),
            std::string::npos)
      << out.detail;
  EXPECT_EQ(transport_.waits(),
            (std::vector<std::chrono::milliseconds>{100ms, 200ms, 400ms, 800ms, 1600ms}));
}

TEST_F(CatalogClientTest, WithoutAnIdempotencyKeyA409IsTheConflictItSays) {
  auto client = Client();
  LoadConfig(*client);  // no idempotency-key-lifetime: no key is sent
  transport_.Expect("POST", kRefTableUrl, JsonResponse(409, kLakekeeperInProgress));
  Caught<CommitOutcome> c;
  client->CommitTable(Marker(), c.Callback());
  ASSERT_FALSE(c->ok());
  EXPECT_EQ(c->status().code(), StatusCode::kConflict);
  EXPECT_TRUE(transport_.waits().empty());
}

TEST_F(CatalogClientTest, AnOrdinaryConflictWithAKeyIsNotResent) {
  auto client = Client();
  LoadConfig(*client, kRefIdempotent);
  transport_.Expect(
      "POST", kRefTableUrl,
      JsonResponse(
          409,
          R"({"error":{"message":"Requirement failed: UUID does not match","type":"CommitFailedException","code":409}})"));
  Caught<CommitOutcome> c;
  client->CommitTable(Marker(), c.Callback());
  ASSERT_FALSE(c->ok());
  EXPECT_EQ(c->status().code(), StatusCode::kConflict);
  EXPECT_TRUE(transport_.waits().empty());
}

}  // namespace
}  // namespace icewarden::testing
