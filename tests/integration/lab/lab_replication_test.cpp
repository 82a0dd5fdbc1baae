// The lab's replication, ownership, region outages and rogue writers, observed through the
// regions' REST catalogs and GET /lab/state: state is asserted, never timings.
#include <signal.h>

#include <set>

#include "tests/fakes/subprocess.h"
#include "tests/integration/lab/lab_fixture.h"

namespace icewarden::lab::testing {
namespace {

using LabReplicationTest = LabTest;

std::set<int64_t> SnapshotIds(const json& metadata) {
  std::set<int64_t> ids;
  if (!metadata.is_object()) return ids;
  for (const auto& snapshot : metadata["snapshots"])
    ids.insert(snapshot["snapshot-id"].get<int64_t>());
  return ids;
}

TEST_F(LabReplicationTest, SeedTablesReachEveryRegionWithTheSameIdentity) {
  ASSERT_TRUE(
      Eventually([&] { return Replicated("sales", "orders") && Replicated("eu", "orders"); }));
  EXPECT_EQ(Metadata(kUs, "sales", "orders")["table-uuid"],
            Metadata(kEu, "sales", "orders")["table-uuid"]);
  EXPECT_EQ(TableState("eu.orders")["owner"], kEu);
  EXPECT_EQ(TableState("sales.orders")["owner"], kUs);
  EXPECT_EQ(GetJson(kEu, "/v1/lab/namespaces?parent=sales")["namespaces"],
            json::parse(R"([["sales","archive"]])"));
}

TEST_F(LabReplicationTest, CommitBecomesVisibleInReplicaOnlyAfterTheLag) {
  ASSERT_TRUE(Eventually([&] { return Replicated("sales", "orders"); }));
  lab_->SetReplicationLagMs(60'000);  // long enough that "not yet" cannot be a race
  auto result = Append(kUs, "sales", "orders");
  ASSERT_EQ(result->status, 200);
  json committed = json::parse(result->body);
  lab_->ReplicateNow();
  EXPECT_NE(MetadataLocation(kEu, "sales", "orders"), committed["metadata-location"]);
  EXPECT_EQ(TableState("sales.orders")["regions"][kEu]["pending_commits"], 1);

  lab_->SetReplicationLagMs(200);
  ASSERT_TRUE(Eventually(
      [&] { return MetadataLocation(kEu, "sales", "orders") == committed["metadata-location"]; }));
  json replica = Metadata(kEu, "sales", "orders");
  EXPECT_EQ(replica["table-uuid"], committed["metadata"]["table-uuid"]);
  EXPECT_EQ(replica["snapshots"], committed["metadata"]["snapshots"]);
  EXPECT_EQ(replica["snapshot-log"], committed["metadata"]["snapshot-log"]);
  EXPECT_EQ(replica["refs"], committed["metadata"]["refs"]);
  EXPECT_EQ(TableState("sales.orders")["regions"][kEu]["pending_commits"], 0);
}

TEST_F(LabReplicationTest, HiddenCommitArrivesAfterTheLagWithNothingElseChanging) {
  // The pass that first sees the commit finds it hidden by the lag; no later change touches the
  // table, so only the replicator's own note of when it becomes visible can bring it over.
  lab_->SetReplicationLagMs(1500);
  ASSERT_TRUE(Eventually([&] { return Replicated("sales", "orders"); }));
  lab_->ReplicateNow();  // the pass that reads every head after the lag change is behind us
  auto result = Append(kUs, "sales", "orders");
  ASSERT_EQ(result->status, 200);
  const std::string location = json::parse(result->body)["metadata-location"];
  lab_->ReplicateNow();
  ASSERT_TRUE(Eventually([&] { return MetadataLocation(kEu, "sales", "orders") == location; }));
  EXPECT_EQ(TableState("sales.orders")["regions"][kEu]["pending_commits"], 0);
}

TEST_F(LabReplicationTest, PausedReplicationLeavesTheReplicaBehind) {
  ASSERT_TRUE(Eventually([&] { return Replicated("eu", "orders"); }));
  httplib::Client admin(lab_->admin_url());
  ASSERT_EQ(admin.Post("/lab/replication/pause", "", "application/json")->status, 200);
  ASSERT_EQ(Append(kEu, "eu", "orders")->status, 200);
  ASSERT_EQ(Append(kEu, "eu", "orders")->status, 200);
  std::this_thread::sleep_for(std::chrono::milliseconds(400));  // twice the lag
  lab_->ReplicateNow();
  EXPECT_FALSE(Replicated("eu", "orders"));
  json state = TableState("eu.orders");
  EXPECT_EQ(state["regions"][kUs]["pending_commits"], 2);
  EXPECT_EQ(lab_->State()["replication"]["paused"], true);

  ASSERT_EQ(admin.Post("/lab/replication/resume", "", "application/json")->status, 200);
  EXPECT_TRUE(Eventually([&] { return Replicated("eu", "orders"); }));
}

TEST_F(LabReplicationTest, StoppedRegionRefusesConnectionsAndKeepsItsData) {
  ASSERT_TRUE(Eventually([&] { return Replicated("sales", "orders"); }));
  std::string before = MetadataLocation(kEu, "sales", "orders");
  int port = lab_->region_port(kEu);
  httplib::Client admin(lab_->admin_url());
  ASSERT_EQ(admin.Post("/lab/regions/eu-central-1/stop", "", "application/json")->status, 200);
  auto refused = Client(kEu)->Get("/v1/config");
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error(), httplib::Error::Connection);
  EXPECT_EQ(lab_->State()["regions"][kEu]["up"], false);

  // The rest of the lab carries on, and the stopped replica falls behind.
  ASSERT_EQ(Append(kUs, "sales", "orders")->status, 200);
  std::this_thread::sleep_for(std::chrono::milliseconds(400));
  lab_->ReplicateNow();
  EXPECT_EQ(TableState("sales.orders")["regions"][kEu]["pending_commits"], 1);

  ASSERT_EQ(admin.Post("/lab/regions/eu-central-1/start", "", "application/json")->status, 200);
  EXPECT_EQ(lab_->region_port(kEu), port);
  EXPECT_TRUE(Eventually([&] { return Replicated("sales", "orders"); }));
  EXPECT_NE(MetadataLocation(kEu, "sales", "orders"), before);
  EXPECT_EQ(GetJson(kEu, "/v1/lab/namespaces")["namespaces"].size(), 3u);
}

TEST_F(LabReplicationTest, RogueWriterMakesTheOldOwnerDiverge) {
  ASSERT_TRUE(Eventually([&] { return Replicated("sales", "orders"); }));
  httplib::Client admin(lab_->admin_url());
  auto enabled = admin.Post("/lab/rogue-writer", R"({"region":"eu-central-1","enabled":true})",
                            "application/json");
  ASSERT_EQ(enabled->status, 200) << enabled->body;
  ASSERT_GT(lab_->WorkloadRoundNow(), 0);
  ASSERT_EQ(admin
                .Post("/lab/rogue-writer", R"({"region":"eu-central-1","enabled":false})",
                      "application/json")
                ->status,
            200);

  int64_t rogue = Metadata(kEu, "sales", "orders")["current-snapshot-id"];
  EXPECT_FALSE(SnapshotIds(Metadata(kUs, "sales", "orders")).count(rogue));
  // The owner keeps committing; replication never overwrites the diverged replica.
  ASSERT_EQ(Append(kUs, "sales", "orders")->status, 200);
  std::this_thread::sleep_for(std::chrono::milliseconds(400));
  lab_->ReplicateNow();
  EXPECT_EQ(Metadata(kEu, "sales", "orders")["current-snapshot-id"], rogue);
  EXPECT_FALSE(SnapshotIds(Metadata(kUs, "sales", "orders")).count(rogue));
  EXPECT_EQ(TableState("sales.orders")["regions"][kEu]["diverged"], true);
}

TEST_F(LabReplicationTest, OwnershipPropertiesWithAHigherEpochFlipReplication) {
  ASSERT_TRUE(Eventually([&] { return Replicated("sales", "customers"); }));
  json metadata = Metadata(kEu, "sales", "customers");
  json claim = {
      {"requirements", {{{"type", "assert-table-uuid"}, {"uuid", metadata["table-uuid"]}}}},
      {"updates",
       {{{"action", "set-properties"},
         {"updates", {{"icewarden.owner", kEu}, {"icewarden.epoch", "1"}}}}}}};
  auto claimed = PostJson(kEu, TablePath("sales", "customers"), claim);
  ASSERT_EQ(claimed->status, 200) << claimed->body;
  json state = TableState("sales.customers");
  EXPECT_EQ(state["owner"], kEu);
  EXPECT_EQ(state["owner_source"], "property");
  EXPECT_EQ(state["epoch"], 1);

  auto appended = Append(kEu, "sales", "customers");
  ASSERT_EQ(appended->status, 200);
  int64_t snapshot = json::parse(appended->body)["metadata"]["current-snapshot-id"];
  ASSERT_TRUE(Eventually([&] { return Replicated("sales", "customers"); }));
  json old_owner = Metadata(kUs, "sales", "customers");
  EXPECT_EQ(old_owner["current-snapshot-id"], snapshot);
  EXPECT_EQ(old_owner["properties"]["icewarden.owner"], kEu);

  // A lower epoch does not take the table back.
  json stale = {{"requirements", json::array()},
                {"updates",
                 {{{"action", "set-properties"},
                   {"updates", {{"icewarden.owner", kUs}, {"icewarden.epoch", "0"}}}}}}};
  ASSERT_EQ(PostJson(kUs, TablePath("sales", "customers"), stale)->status, 200);
  EXPECT_EQ(TableState("sales.customers")["owner"], kEu);
}

TEST_F(LabReplicationTest, OwnershipRulesChangeAtRunTime) {
  ASSERT_TRUE(Eventually([&] { return Replicated("clickstream", "events"); }));
  httplib::Client admin(lab_->admin_url());
  auto set = admin.Post("/lab/ownership", R"({"match":"clickstream[.].*","owner":"eu-central-1"})",
                        "application/json");
  ASSERT_EQ(set->status, 200) << set->body;
  EXPECT_EQ(TableState("clickstream.events")["owner"], kEu);
  ASSERT_EQ(Append(kEu, "clickstream", "events")->status, 200);
  EXPECT_TRUE(Eventually([&] { return Replicated("clickstream", "events"); }));
  EXPECT_EQ(
      admin.Post("/lab/ownership", R"({"match":"x","owner":"mars-1"})", "application/json")->status,
      404);
  EXPECT_EQ(
      admin.Post("/lab/ownership", R"({"match":"(","owner":"us-east-1"})", "application/json")
          ->status,
      400);
}

TEST_F(LabReplicationTest, WorkloadAppendsInOwnersAndReplicasFollow) {
  httplib::Client admin(lab_->admin_url());
  auto on = admin.Post("/lab/workload", R"({"enabled":true,"interval_ms":50})", "application/json");
  ASSERT_EQ(on->status, 200) << on->body;
  ASSERT_TRUE(Eventually([&] {
    return Metadata(kUs, "sales", "orders")["snapshots"].size() >= 3 &&
           Metadata(kEu, "eu", "orders")["snapshots"].size() >= 3;
  }));
  ASSERT_EQ(admin.Post("/lab/workload", R"({"enabled":false})", "application/json")->status, 200);
  EXPECT_TRUE(
      Eventually([&] { return Replicated("sales", "orders") && Replicated("eu", "orders"); }));
  EXPECT_EQ(Metadata(kEu, "sales", "orders")["snapshots"].back()["summary"]["operation"], "append");
}

class LabAuthTest : public LabTest {
 protected:
  LabAuthTest() {
    options_.token = "static-secret";
    options_.oauth_client_id = "icewarden";
    options_.oauth_client_secret = "s3cret";
  }

  httplib::Result Token(const std::string& secret) {
    return httplib::Client(lab_->region_url(kUs))
        .Post("/v1/oauth/tokens",
              "grant_type=client_credentials&client_id=icewarden&client_secret=" + secret +
                  "&scope=catalog",
              "application/x-www-form-urlencoded");
  }
};

TEST_F(LabAuthTest, EveryCatalogRouteNeedsABearerToken) {
  for (const char* path : {"/v1/config", "/v1/lab/namespaces", "/v1/lab/namespaces/sales/tables"}) {
    auto denied = Client(kUs)->Get(path);
    ASSERT_TRUE(denied);
    EXPECT_EQ(denied->status, 401) << path;
    EXPECT_EQ(json::parse(denied->body)["error"]["type"], "NotAuthorizedException");
  }
  bearer_ = "wrong";
  EXPECT_EQ(Client(kUs)->Get("/v1/config")->status, 401);
  bearer_ = "static-secret";
  EXPECT_EQ(Client(kUs)->Get("/v1/config")->status, 200);
}

TEST_F(LabAuthTest, OAuthClientCredentialsIssueExpiringTokens) {
  auto wrong = Token("nope");
  ASSERT_TRUE(wrong);
  EXPECT_EQ(wrong->status, 401);
  EXPECT_EQ(json::parse(wrong->body)["error"], "invalid_client");

  auto issued = Token("s3cret");
  ASSERT_TRUE(issued);
  ASSERT_EQ(issued->status, 200) << issued->body;
  json token = json::parse(issued->body);
  EXPECT_EQ(token["token_type"], "bearer");
  EXPECT_EQ(token["expires_in"], 3600);
  EXPECT_EQ(token["issued_token_type"], "urn:ietf:params:oauth:token-type:access_token");
  bearer_ = token["access_token"];
  EXPECT_EQ(Client(kUs)->Get("/v1/lab/namespaces")->status, 200);
  EXPECT_EQ(Client(kEu)->Get("/v1/lab/namespaces")->status, 401);  // tokens are per region

  ASSERT_TRUE(lab_->PatchFaults(kUs, {{"token_lifetime_s", 1}}).ok());
  json short_lived = json::parse(Token("s3cret")->body);
  EXPECT_EQ(short_lived["expires_in"], 1);
  bearer_ = short_lived["access_token"];
  EXPECT_EQ(Client(kUs)->Get("/v1/lab/namespaces")->status, 200);
  EXPECT_TRUE(Eventually([&] { return Client(kUs)->Get("/v1/lab/namespaces")->status == 401; },
                         std::chrono::seconds(5)));

  // Refreshing by token exchange needs a still-valid subject token.
  auto refreshed = httplib::Client(lab_->region_url(kUs))
                       .Post("/v1/oauth/tokens",
                             "grant_type=urn:ietf:params:oauth:grant-type:token-exchange"
                             "&subject_token_type=urn:ietf:params:oauth:token-type:access_token"
                             "&subject_token=" +
                                 token["access_token"].get<std::string>(),
                             "application/x-www-form-urlencoded");
  ASSERT_TRUE(refreshed);
  EXPECT_EQ(refreshed->status, 200) << refreshed->body;
}

TEST(LabExecutableTest, PrintsEveryListenerThenReady) {
  std::string dir = icewarden::testing::MakeTempDir("icewarden-lab-exe");
  icewarden::testing::Subprocess lab({ICEWARDEN_LAB_BINARY, "--data", dir, "--admin", "127.0.0.1:0",
                                      "--region", "us-east-1=127.0.0.1:0", "--region",
                                      "eu-central-1=127.0.0.1:0", "--owner", "eu[.].*=eu-central-1",
                                      "--replication-lag-ms", "200"});
  std::vector<std::string> lines;
  while (auto line = lab.ReadLine(std::chrono::seconds(20))) {
    lines.push_back(*line);
    if (*line == "lab: ready") break;
  }
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_EQ(lines[0].rfind("lab: region us-east-1 http://127.0.0.1:", 0), 0u) << lines[0];
  EXPECT_EQ(lines[1].rfind("lab: region eu-central-1 http://127.0.0.1:", 0), 0u) << lines[1];
  EXPECT_EQ(lines[2].rfind("lab: admin http://127.0.0.1:", 0), 0u) << lines[2];
  std::string url = lines[0].substr(lines[0].rfind(' ') + 1);
  auto config = httplib::Client(url).Get("/v1/config");
  ASSERT_TRUE(config);
  EXPECT_EQ(config->status, 200);
  lab.Signal(SIGTERM);
  EXPECT_EQ(lab.Wait(std::chrono::seconds(10)), 0);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace icewarden::lab::testing
