// The lab's write fence (POST /lab/regions/{r}/writes), the stand-in for a writer gateway's
// "pause writes" that a switchover uses: a paused region refuses table creates and data commits
// with the spec's 403, still takes property-only commits (the ownership claim) and reads, is
// skipped by the workload and the rogue writer, and still receives replication.
#include <thread>

#include "tests/integration/lab/lab_fixture.h"

namespace icewarden::lab::testing {
namespace {

class LabWriteFenceTest : public LabTest {
 protected:
  // The workload is driven by WorkloadRoundNow: its own thread would wait a minute.
  LabWriteFenceTest() { options_.workload_interval_ms = 60'000; }

  httplib::Result SetPaused(const std::string& region, const std::string& body) {
    httplib::Client admin(lab_->admin_url());
    return admin.Post("/lab/regions/" + region + "/writes", body, "application/json");
  }

  json Workload() { return lab_->State()["workload"]; }
};

std::string FenceMessage(const std::string& region) {
  return "writes to region " + region + " are paused by the lab's write fence (POST /lab/regions/" +
         region + "/writes {\"paused\":false} resumes them)";
}

void ExpectFenced(const httplib::Result& result, const std::string& region) {
  ASSERT_TRUE(result) << httplib::to_string(result.error());
  EXPECT_EQ(result->status, 403) << result->body;
  json expected = {
      {"error",
       {{"message", FenceMessage(region)}, {"type", "ForbiddenException"}, {"code", 403}}}};
  EXPECT_EQ(json::parse(result->body, nullptr, false), expected) << result->body;
}

json ClaimCommit(const json& metadata, const std::string& owner, const std::string& epoch) {
  return {{"requirements", {{{"type", "assert-table-uuid"}, {"uuid", metadata["table-uuid"]}}}},
          {"updates",
           {{{"action", "set-properties"},
             {"updates", {{"icewarden.owner", owner}, {"icewarden.epoch", epoch}}}},
            {{"action", "remove-properties"}, {"removals", {"no-such-property"}}}}}};
}

TEST_F(LabWriteFenceTest, PausedRegionRefusesDataWritesButTakesPropertyOnlyCommits) {
  auto paused = SetPaused(kUs, R"({"paused":true})");
  ASSERT_TRUE(paused);
  ASSERT_EQ(paused->status, 200) << paused->body;
  EXPECT_EQ(json::parse(paused->body), (json{{"region", kUs}, {"writes_paused", true}}));
  EXPECT_EQ(lab_->State()["regions"][kUs]["writes_paused"], true);
  EXPECT_EQ(lab_->State()["regions"][kEu]["writes_paused"], false);

  const std::string before = MetadataLocation(kUs, "sales", "orders");
  ExpectFenced(Append(kUs, "sales", "orders"), kUs);
  // A property change does not carry a data commit past the fence.
  json mixed = AppendCommit(Metadata(kUs, "sales", "orders"), "test", SystemNowMs());
  mixed["updates"].push_back({{"action", "set-properties"}, {"updates", {{"k", "v"}}}});
  ExpectFenced(PostJson(kUs, TablePath("sales", "orders"), mixed), kUs);
  json create = {
      {"name", "fenced"},
      {"schema",
       {{"type", "struct"},
        {"fields", {{{"id", 1}, {"name", "id"}, {"type", "long"}, {"required", true}}}}}}};
  ExpectFenced(PostJson(kUs, "/v1/lab/namespaces/sales/tables", create), kUs);
  EXPECT_EQ(MetadataLocation(kUs, "sales", "orders"), before);

  // Reads keep working.
  int status = 0;
  GetJson(kUs, "/v1/config?warehouse=lab", &status);
  EXPECT_EQ(status, 200);
  EXPECT_EQ(GetJson(kUs, "/v1/lab/namespaces/sales/tables", &status)["identifiers"].size(), 2u);
  EXPECT_EQ(status, 200);
  EXPECT_EQ(Client(kUs)->Head(TablePath("sales", "fenced"))->status, 404);
  EXPECT_EQ(Client(kUs)->Head(TablePath("sales", "orders"))->status, 204);

  // The ownership claim goes through the fenced region.
  auto claimed = PostJson(kUs, TablePath("sales", "orders"),
                          ClaimCommit(Metadata(kUs, "sales", "orders"), kEu, "3"));
  ASSERT_TRUE(claimed);
  ASSERT_EQ(claimed->status, 200) << claimed->body;
  EXPECT_EQ(Metadata(kUs, "sales", "orders")["properties"]["icewarden.epoch"], "3");

  // Other regions are not fenced; resuming opens the region again.
  EXPECT_EQ(Append(kEu, "eu", "orders")->status, 200);
  ASSERT_EQ(SetPaused(kUs, R"({"paused":false})")->status, 200);
  EXPECT_EQ(lab_->State()["regions"][kUs]["writes_paused"], false);
  auto appended = Append(kUs, "sales", "orders");
  ASSERT_TRUE(appended);
  EXPECT_EQ(appended->status, 200) << appended->body;
}

TEST_F(LabWriteFenceTest, IdempotencyKeyIsNotSpentOnARefusal) {
  lab_->SetWritesPaused(kUs, true);
  json commit = AppendCommit(Metadata(kUs, "sales", "orders"), "test", SystemNowMs());
  httplib::Headers key = {{"Idempotency-Key", "01900000-0000-7000-8000-00000000fe1c"}};
  ExpectFenced(PostJson(kUs, TablePath("sales", "orders"), commit, key), kUs);
  lab_->SetWritesPaused(kUs, false);
  auto retried = PostJson(kUs, TablePath("sales", "orders"), commit, key);
  ASSERT_TRUE(retried);
  EXPECT_EQ(retried->status, 200) << retried->body;
  EXPECT_EQ(Metadata(kUs, "sales", "orders")["snapshots"].size(), 1u);
}

TEST_F(LabWriteFenceTest, RouteNeedsABooleanAndAKnownRegion) {
  for (const char* body : {"", "{}", R"({"paused":"yes"})", R"({"paused":1})", "paused"}) {
    auto result = SetPaused(kUs, body);
    ASSERT_TRUE(result);
    EXPECT_EQ(result->status, 400) << body << ": " << result->body;
  }
  auto unknown = SetPaused("mars", R"({"paused":true})");
  ASSERT_TRUE(unknown);
  EXPECT_EQ(unknown->status, 404);
  EXPECT_EQ(json::parse(unknown->body)["error"], "unknown region: mars");
  EXPECT_EQ(lab_->SetWritesPaused("mars", true).message(), "unknown region: mars");
  EXPECT_EQ(lab_->State()["regions"][kUs]["writes_paused"], false);
}

TEST_F(LabWriteFenceTest, WorkloadSkipsAPausedRegionAndCountsTheRefusals) {
  lab_->SetWorkload(true, 0);
  ASSERT_TRUE(lab_->SetWritesPaused(kUs, true).ok());
  // us-east-1 owns four of the six workload tables, eu-central-1 the two eu.* ones.
  EXPECT_EQ(lab_->WorkloadRoundNow(), 2);
  EXPECT_EQ(Workload()["refused_paused"], 4);
  EXPECT_EQ(Workload()["commits"], 2);
  EXPECT_EQ(Workload()["conflicts"], 0);
  EXPECT_EQ(Metadata(kUs, "sales", "orders")["snapshots"].size(), 0u);
  EXPECT_EQ(Metadata(kEu, "eu", "orders")["snapshots"].size(), 1u);
  EXPECT_EQ(lab_->Commits()["total"], 2);
  for (const auto& commit : lab_->Commits()["commits"]) EXPECT_EQ(commit["region"], kEu);

  ASSERT_TRUE(lab_->SetWritesPaused(kUs, false).ok());
  EXPECT_EQ(lab_->WorkloadRoundNow(), 6);
  EXPECT_EQ(Workload()["refused_paused"], 4);
  EXPECT_EQ(Workload()["commits"], 8);
  EXPECT_EQ(Metadata(kUs, "sales", "orders")["snapshots"].size(), 1u);
}

TEST_F(LabWriteFenceTest, RogueWriterIsFencedToo) {
  for (auto [ns, table] : {std::pair{"sales", "orders"},
                           {"sales", "customers"},
                           {"clickstream", "events"},
                           {"sales%1Farchive", "orders_2024"}}) {
    ASSERT_TRUE(Eventually([&] { return Replicated(ns, table); })) << table;
  }
  ASSERT_TRUE(lab_->SetRogueWriter(kEu, true).ok());
  ASSERT_TRUE(lab_->SetWritesPaused(kEu, true).ok());
  EXPECT_EQ(lab_->WorkloadRoundNow(), 0);
  EXPECT_EQ(Workload()["refused_paused"], 4);
  EXPECT_EQ(Workload()["commits"], 0);
  EXPECT_EQ(Metadata(kEu, "sales", "orders")["snapshots"].size(), 0u);
  EXPECT_EQ(lab_->Commits()["total"], 0);

  ASSERT_TRUE(lab_->SetWritesPaused(kEu, false).ok());
  EXPECT_EQ(lab_->WorkloadRoundNow(), 4);
  EXPECT_EQ(Metadata(kEu, "sales", "orders")["snapshots"].size(), 1u);
  EXPECT_EQ(lab_->Commits()["total"], 4);
}

TEST_F(LabWriteFenceTest, ReplicatorStillFastForwardsAPausedReplica) {
  ASSERT_TRUE(Eventually([&] { return Replicated("sales", "orders"); }));
  ASSERT_EQ(SetPaused(kEu, R"({"paused":true})")->status, 200);
  auto appended = Append(kUs, "sales", "orders");
  ASSERT_EQ(appended->status, 200);
  const std::string committed = json::parse(appended->body)["metadata-location"];
  EXPECT_TRUE(Eventually([&] { return MetadataLocation(kEu, "sales", "orders") == committed; }));
  EXPECT_EQ(TableState("sales.orders")["regions"][kEu]["diverged"], false);
  EXPECT_EQ(lab_->State()["regions"][kEu]["writes_paused"], true);
}

}  // namespace
}  // namespace icewarden::lab::testing
