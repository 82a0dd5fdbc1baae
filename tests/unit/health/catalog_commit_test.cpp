// CatalogClient::CommitTable: the request body, Idempotency-Key, and the spec's outcomes.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "health/catalog_client.h"
#include "health/catalog_json.h"
#include "tests/unit/health/catalog_test_support.h"

namespace icewarden::testing {
namespace {

constexpr const char* kCommitResponse = R"({
  "metadata-location": "s3://lake/sales/orders/metadata/00004-aa.metadata.json",
  "metadata": {"format-version": 2, "table-uuid": "9c12d441-03fe-4693-9a96-a0705ddf69c1",
               "current-snapshot-id": 3003,
               "properties": {"icewarden.owner": "us-east-1", "icewarden.epoch": "5"}}})";

const std::string kTableUrl = std::string(kRoot) + "/namespaces/sales%1Feu/tables/orders";
constexpr const char* kIdempotent = R"("idempotency-key-lifetime": "PT30M")";

TableCommit OwnershipCommit() {
  TableCommit c;
  c.table = {{"sales", "eu"}, "orders"};
  c.requirements = {AssertTableUuid{"9c12d441-03fe-4693-9a96-a0705ddf69c1"},
                    AssertRefSnapshotId{"main", 3003}};
  c.updates = {SetPropertiesUpdate{{{"icewarden.owner", "us-east-1"}, {"icewarden.epoch", "5"}}},
               RemovePropertiesUpdate{{"icewarden.fencing"}}};
  return c;
}

HttpResponse Error(int status, const std::string& type, const std::string& message,
                   HttpHeaders headers = {}) {
  return JsonResponse(
      status,
      nlohmann::json{{"error", {{"message", message}, {"type", type}, {"code", status}}}}.dump(),
      std::move(headers));
}

TEST_F(CatalogClientTest, CommitBodyHasTheSpecsRequirementAndUpdateShapes) {
  auto client = Client();
  LoadConfig(*client);
  transport_.Expect("POST", kTableUrl, JsonResponse(200, kCommitResponse, {{"ETag", "\"m4\""}}));
  Caught<CommitOutcome> c;
  client->CommitTable(OwnershipCommit(), c.Callback());
  ASSERT_TRUE(c->ok()) << c->status().ToString();
  EXPECT_EQ((*c)->kind, CommitOutcome::Kind::kCommitted);
  EXPECT_EQ((*c)->table.metadata_location,
            "s3://lake/sales/orders/metadata/00004-aa.metadata.json");
  EXPECT_EQ((*c)->table.properties.at("icewarden.epoch"), "5");
  EXPECT_EQ((*c)->table.etag, "\"m4\"");

  const HttpRequest& sent = transport_.requests().back();
  EXPECT_EQ(sent.headers.Get("Content-Type"), "application/json");
  auto expected = nlohmann::json::parse(R"({
    "identifier": {"namespace": ["sales", "eu"], "name": "orders"},
    "requirements": [
      {"type": "assert-table-uuid", "uuid": "9c12d441-03fe-4693-9a96-a0705ddf69c1"},
      {"type": "assert-ref-snapshot-id", "ref": "main", "snapshot-id": 3003}],
    "updates": [
      {"action": "set-properties", "updates": {"icewarden.owner": "us-east-1", "icewarden.epoch": "5"}},
      {"action": "remove-properties", "removals": ["icewarden.fencing"]}]})");
  EXPECT_EQ(nlohmann::json::parse(sent.body), expected) << sent.body;
}

TEST_F(CatalogClientTest, AssertRefWithoutSnapshotIsSentAsNull) {
  TableCommit commit = OwnershipCommit();
  commit.requirements = {AssertRefSnapshotId{"main", std::nullopt}};
  auto body = nlohmann::json::parse(CommitTableRequestJson(commit));
  EXPECT_TRUE(body["requirements"][0].contains("snapshot-id"));
  EXPECT_TRUE(body["requirements"][0]["snapshot-id"].is_null());
}

// Names and values reach the catalog exactly, whatever they hold: quotes, backslashes,
// control characters, non-ASCII text; invalid UTF-8 is replaced, never a thrown exception.
TEST_F(CatalogClientTest, CommitRequestEscapesWhatNamesAndValuesHold) {
  TableCommit commit;
  commit.table = {{"sa\"les", "e\\u"}, "ord\ners\x01"};
  commit.requirements = {AssertTableUuid{"u\tu"}};
  commit.updates = {SetPropertiesUpdate{{{"k\"ey", "Zürich 東京"}, {"bad", "a\xff\xfe" "b"}}},
                    RemovePropertiesUpdate{{"x/y", ""}}};
  const std::string text = CommitTableRequestJson(commit);
  auto body = nlohmann::json::parse(text);  // throws, failing the test, if it is not JSON
  EXPECT_EQ(body["identifier"]["namespace"], nlohmann::json({"sa\"les", "e\\u"}));
  EXPECT_EQ(body["identifier"]["name"], "ord\ners\x01");
  EXPECT_EQ(body["requirements"][0]["uuid"], "u\tu");
  EXPECT_EQ(body["updates"][0]["updates"]["k\"ey"], "Zürich 東京");
  EXPECT_EQ(body["updates"][0]["updates"]["bad"], "a\uFFFD\uFFFDb");
  EXPECT_EQ(body["updates"][1]["removals"], nlohmann::json({"x/y", ""}));
}

TEST_F(CatalogClientTest, NoIdempotencyKeyWhenTheCatalogDoesNotAdvertiseIt) {
  auto client = Client();
  LoadConfig(*client);
  transport_.Expect("POST", kTableUrl, JsonResponse(200, kCommitResponse));
  TableCommit commit = OwnershipCommit();
  commit.idempotency_key = "017f22e2-79b0-7cc3-98c4-dc0c0c07398f";  // ignored: unsupported
  Caught<CommitOutcome> c;
  client->CommitTable(commit, c.Callback());
  ASSERT_TRUE(c->ok());
  EXPECT_FALSE(transport_.requests().back().headers.Has("Idempotency-Key"));
  EXPECT_EQ((*c)->idempotency_key, "");
}

TEST_F(CatalogClientTest, ServiceUnavailableWithRetryAfterIsRetriedOnceWithTheSameKey) {
  auto client = Client();
  LoadConfig(*client, kIdempotent);
  transport_.Expect("POST", kTableUrl,
                    Error(503, "SlowDownException", "Slow down", {{"Retry-After", "2"}}));
  transport_.Expect("POST", kTableUrl, JsonResponse(200, kCommitResponse));
  Caught<CommitOutcome> c;
  client->CommitTable(OwnershipCommit(), c.Callback());
  ASSERT_TRUE(c->ok()) << c->status().ToString();
  EXPECT_EQ((*c)->kind, CommitOutcome::Kind::kCommitted);
  ASSERT_EQ(transport_.requests().size(), 3u);
  auto first = transport_.requests()[1].headers.Get("Idempotency-Key");
  auto second = transport_.requests()[2].headers.Get("Idempotency-Key");
  ASSERT_TRUE(first.has_value());
  EXPECT_EQ(first, second);
  EXPECT_EQ(first->size(), 36u);
  EXPECT_EQ((*first)[14], '7');  // UUIDv7
  EXPECT_EQ(UuidV7Millis(*first), clock_.Now());
  EXPECT_EQ((*c)->idempotency_key, *first);
  EXPECT_EQ(transport_.waits(), std::vector<std::chrono::milliseconds>{std::chrono::seconds(2)});
  EXPECT_EQ(transport_.requests()[1].body, transport_.requests()[2].body);
}

TEST_F(CatalogClientTest, ServiceUnavailableIsRetriedAtMostTwice) {
  auto client = Client();
  LoadConfig(*client, kIdempotent);
  for (int i = 0; i < 3; ++i) {
    transport_.Expect("POST", kTableUrl,
                      Error(503, "SlowDownException", "Slow down", {{"Retry-After", "1"}}));
  }
  Caught<CommitOutcome> c;
  client->CommitTable(OwnershipCommit(), c.Callback());
  ASSERT_FALSE(c->ok());
  EXPECT_EQ(c->status().code(), StatusCode::kUnavailable);
  EXPECT_EQ(transport_.waits().size(), 2u);
}

TEST_F(CatalogClientTest, ServiceUnavailableWithoutRetryAfterIsNotRetried) {
  auto client = Client();
  LoadConfig(*client, kIdempotent);
  transport_.Expect("POST", kTableUrl, Error(503, "ServiceUnavailableException", "draining"));
  Caught<CommitOutcome> c;
  client->CommitTable(OwnershipCommit(), c.Callback());
  ASSERT_FALSE(c->ok());
  EXPECT_EQ(c->status().code(), StatusCode::kUnavailable);
  EXPECT_NE(c->status().message().find("draining"), std::string::npos);
  EXPECT_EQ(transport_.requests().size(), 2u);
  EXPECT_TRUE(transport_.waits().empty());
}

TEST_F(CatalogClientTest, ConflictIsAConflictWithTheServersMessage) {
  auto client = Client();
  LoadConfig(*client);
  transport_.Expect("POST", kTableUrl,
                    Error(409, "CommitFailedException",
                          "Requirement failed: branch main has changed: expected id 3003 != 3004"));
  Caught<CommitOutcome> c;
  client->CommitTable(OwnershipCommit(), c.Callback());
  ASSERT_FALSE(c->ok());
  EXPECT_EQ(c->status().code(), StatusCode::kConflict);
  EXPECT_EQ(c->status().message(),
            "commit to sales.eu.orders failed, a requirement was not met: Requirement failed: "
            "branch main has changed: expected id 3003 != 3004");
  EXPECT_EQ(transport_.requests().size(), 2u);
}

TEST_F(CatalogClientTest, ServerErrorsOnCommitMeanStateUnknownAndAreNotRetried) {
  for (int status : {500, 502, 504}) {
    SCOPED_TRACE(status);
    auto client = Client();
    LoadConfig(*client, kIdempotent);
    // Even a Retry-After must not make the client resend a commit of unknown fate.
    transport_.Expect("POST", kTableUrl,
                      Error(status, "CommitStateUnknownException",
                            "Gateway timed out during commit", {{"Retry-After", "1"}}));
    Caught<CommitOutcome> c;
    const size_t before = transport_.requests().size();
    client->CommitTable(OwnershipCommit(), c.Callback());
    ASSERT_TRUE(c->ok()) << c->status().ToString();
    EXPECT_EQ((*c)->kind, CommitOutcome::Kind::kStateUnknown);
    EXPECT_NE((*c)->detail.find("CommitStateUnknownException"), std::string::npos) << (*c)->detail;
    EXPECT_FALSE((*c)->idempotency_key.empty());
    EXPECT_EQ(transport_.requests().size(), before + 1);
  }
}

TEST_F(CatalogClientTest, LostConnectionAfterSendingIsStateUnknownButRefusedIsNot) {
  auto client = Client();
  LoadConfig(*client);
  transport_.ExpectError("POST", kTableUrl,
                         Status::Unavailable("read catalog.test:80: deadline of 5000ms exceeded"));
  transport_.ExpectError("POST", kTableUrl,
                         Status::Unavailable("connect catalog.test:80: Connection refused"));
  Caught<CommitOutcome> lost;
  client->CommitTable(OwnershipCommit(), lost.Callback());
  ASSERT_TRUE(lost->ok());
  EXPECT_EQ((*lost)->kind, CommitOutcome::Kind::kStateUnknown);
  Caught<CommitOutcome> refused;
  client->CommitTable(OwnershipCommit(), refused.Callback());
  ASSERT_FALSE(refused->ok());
  EXPECT_EQ(refused->status().code(), StatusCode::kUnavailable);
}

TEST_F(CatalogClientTest, CallerSuppliedKeyIsReusedUntilItsLifetimeEnds) {
  auto client = Client();
  LoadConfig(*client, kIdempotent);
  transport_.Expect("POST", kTableUrl, Error(504, "CommitStateUnknownException", "timeout"));
  transport_.Expect("POST", kTableUrl, JsonResponse(200, kCommitResponse));
  transport_.Expect("POST", kTableUrl, JsonResponse(200, kCommitResponse));
  Caught<CommitOutcome> first;
  client->CommitTable(OwnershipCommit(), first.Callback());
  ASSERT_TRUE(first->ok());
  const std::string key = (*first)->idempotency_key;

  // The caller reloaded, saw the commit did not land, and retries the same logical commit.
  TableCommit again = OwnershipCommit();
  again.idempotency_key = key;
  clock_.Advance(std::chrono::minutes(10));
  Caught<CommitOutcome> second;
  client->CommitTable(again, second.Callback());
  ASSERT_TRUE(second->ok());
  EXPECT_EQ(transport_.requests()[2].headers.Get("Idempotency-Key"), key);

  clock_.Advance(std::chrono::minutes(25));  // 35 min > PT30M: a new key
  Caught<CommitOutcome> third;
  client->CommitTable(again, third.Callback());
  ASSERT_TRUE(third->ok());
  EXPECT_NE(transport_.requests()[3].headers.Get("Idempotency-Key"), key);
  EXPECT_NE((*third)->idempotency_key, key);
}

}  // namespace
}  // namespace icewarden::testing
