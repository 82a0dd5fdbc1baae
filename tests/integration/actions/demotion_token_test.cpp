// switchover.demotion_token against the lab: the token is the old owner's main snapshot of
// every table of the scope, captured before the wait; the wait ends when the target is at
// exactly those snapshots, fails naming the table and its lag when it is not within the
// bound, and stops at once when the target is past the token (a second writer there).
#include <thread>

#include "actions/table_observations.h"
#include "tests/integration/actions/catalog_lab_fixture.h"

namespace icewarden::lab::testing {
namespace {

using namespace std::chrono_literals;
using DemotionTokenTest = CatalogLabTest;

std::string MainOf(const json& metadata) {
  if (!metadata.is_object() || !metadata.contains("refs") || !metadata["refs"].contains("main"))
    return "";
  return std::to_string(metadata["refs"]["main"]["snapshot-id"].get<long long>());
}

TEST_F(DemotionTokenTest, TokenIsTheOldOwnersMainSnapshotOfEveryTableOfTheScope) {
  auto action = MakeDemotionTokenAction(env_);
  ASSERT_EQ(Append(kEu, "eu", "orders")->status, 200);
  ActionContext ctx = Ctx();
  auto captured = action->Capture(json::object(), ctx);
  ASSERT_TRUE(captured.ok()) << captured.status().ToString();
  json token = json::parse(*captured);
  EXPECT_EQ(token["owner"], kEu);
  EXPECT_EQ(token["target"], kUs);
  ASSERT_EQ(token["tables"].size(), eu_tables_.size());
  for (const json& t : token["tables"]) {
    std::string dotted = t["table"];
    json m = Metadata(kEu, "eu", dotted.substr(3));
    EXPECT_EQ(t["snapshot_id"].is_null() ? "" : std::to_string(t["snapshot_id"].get<long long>()),
              MainOf(m))
        << dotted;
  }
  // The wait: replication (200 ms) brings us-east-1 to the token.
  ctx.before_json = *captured;
  auto done = action->Run(json{{"within", "10s"}, {"poll_interval", "100ms"}}, ctx);
  ASSERT_TRUE(done.ok()) << done.reason;
  EXPECT_NE(done.reason.find("us-east-1 is at the demotion token of all " +
                             std::to_string(eu_tables_.size()) + " tables"),
            std::string::npos)
      << done.reason;
  EXPECT_EQ(Detail(done)["at_token"], eu_tables_.size());
}

TEST_F(DemotionTokenTest, PollsStartPollIntervalApartSoASlowFirstRoundIsNotFollowedByAFullWait) {
  // The first round over the scope takes 2 s (the target answers every request 1 s late: its
  // config, then the loads) and finds eu.orders behind; the target has caught up right after it.
  // With polls starting 3 s apart, the next one is 1 s after the first ended, well within the 4.5 s
  // bound; a full 3 s wait after the first round would end past the bound, and the step would fail.
  auto action = MakeDemotionTokenAction(env_);
  lab_->SetReplicationLagMs(0);
  lab_->PauseReplication();
  ASSERT_EQ(Append(kEu, "eu", "orders")->status, 200);
  ActionContext ctx = Ctx();
  auto captured = action->Capture(json::object(), ctx);
  ASSERT_TRUE(captured.ok()) << captured.status().ToString();
  ctx.before_json = *captured;
  auto requests = [&] { return lab_->State()["regions"][kUs]["requests"]; };
  const int64_t before = requests()["requests_total"].get<int64_t>();
  ASSERT_TRUE(lab_->PatchFaults(kUs, {{"hang_ms", 1000}}).ok());

  ActionResult done;
  std::thread run([&] {
    done = action->Run(json{{"within", "4500ms"}, {"poll_interval", "3s"}}, ctx);
  });
  // The first round is answered: the config and every table of the scope asked for, none still
  // in progress.
  const bool first_round_answered = Eventually(
      [&] {
        json r = requests();
        return r["requests_total"].get<int64_t>() - before >=
                   static_cast<int64_t>(eu_tables_.size()) + 1 &&
               r["in_progress"].get<int>() == 0;
      },
      5s);
  ASSERT_TRUE(lab_->ClearFaults(kUs).ok());
  lab_->ResumeReplication();
  lab_->ReplicateNow();
  run.join();
  ASSERT_TRUE(first_round_answered);
  ASSERT_TRUE(done.ok()) << done.reason;
  EXPECT_EQ(Detail(done)["rounds"], 2);
  EXPECT_LT(Detail(done)["waited_ms"].get<int64_t>(), 4500);
}

TEST_F(DemotionTokenTest, TheCaptureAsksWithTheQuietFencesETagsAndStillSeesAChange) {
  // With the daemon's observations, the capture right after the quiet fence of the same
  // failover sends each table's ETag: the unchanged ones come back as 304s, yet a table that
  // moved in between is read anew and its token is its new snapshot.
  ActionEnv env = env_;
  env.observations = std::make_shared<TableObservations>();
  ActionContext ctx = Ctx();
  auto fence = MakeCatalogQuietFence(env)->Run(json{{"region", kEu}, {"window", "1ms"}}, ctx);
  ASSERT_TRUE(fence.ok()) << fence.reason;
  EXPECT_EQ(env.observations->size(), eu_tables_.size());

  auto moved = Append(kEu, "eu", "orders");
  ASSERT_EQ(moved->status, 200);
  const std::string new_main = MainOf(json::parse(moved->body)["metadata"]);
  auto not_modified = [&] {
    return lab_->State()["regions"][kEu]["requests"]["not_modified_total"].get<int64_t>();
  };
  const int64_t before = not_modified();
  auto captured = MakeDemotionTokenAction(env)->Capture(json::object(), ctx);
  ASSERT_TRUE(captured.ok()) << captured.status().ToString();
  EXPECT_EQ(not_modified() - before, static_cast<int64_t>(eu_tables_.size()) - 1);
  json token = json::parse(*captured);
  ASSERT_EQ(token["tables"].size(), eu_tables_.size());
  for (const json& t : token["tables"]) {
    const std::string dotted = t["table"];
    const std::string id =
        t["snapshot_id"].is_null() ? "" : std::to_string(t["snapshot_id"].get<long long>());
    EXPECT_EQ(id, MainOf(Metadata(kEu, "eu", dotted.substr(3)))) << dotted;
    if (dotted == "eu.orders") {
      EXPECT_EQ(id, new_main);
    }
  }

  // Another failover's steps have seen nothing: it reads in full.
  ActionContext other = ctx;
  other.failover_id = "fo-2";
  const int64_t before_other = not_modified();
  ASSERT_TRUE(MakeDemotionTokenAction(env)->Capture(json::object(), other).ok());
  EXPECT_EQ(not_modified() - before_other, 0);
}

TEST_F(DemotionTokenTest, ATableThatDoesNotCatchUpFailsNamingItsLag) {
  auto action = MakeDemotionTokenAction(env_);
  ASSERT_EQ(Append(kEu, "eu", "orders")->status, 200);
  ASSERT_TRUE(Eventually([&] { return Replicated("eu", "orders"); }));
  lab_->PauseReplication();
  ASSERT_EQ(Append(kEu, "eu", "orders")->status, 200);
  std::this_thread::sleep_for(30ms);
  ASSERT_EQ(Append(kEu, "eu", "orders")->status, 200);
  ActionContext ctx = Ctx();
  auto captured = action->Capture(json::object(), ctx);
  ASSERT_TRUE(captured.ok()) << captured.status().ToString();
  ctx.before_json = *captured;
  auto result = action->Run(json{{"within", "700ms"}, {"poll_interval", "100ms"}}, ctx);
  EXPECT_EQ(result.outcome, ActionResult::Outcome::kFailed);
  EXPECT_NE(result.reason.find("1 of " + std::to_string(eu_tables_.size()) +
                               " tables did not reach the demotion token in us-east-1 within "
                               "700ms: eu.orders: us-east-1 is at snapshot "),
            std::string::npos)
      << result.reason;
  EXPECT_NE(result.reason.find("by 2 commits"), std::string::npos) << result.reason;
  EXPECT_NE(result.reason.find("not promoting"), std::string::npos) << result.reason;
  json detail = Detail(result);
  EXPECT_EQ(detail["behind"][0]["table"], "eu.orders");
  EXPECT_EQ(detail["behind"][0]["missing_commits"], 2);

  // The same token, after replication resumes (a retry, or a resumed run): it gets there.
  lab_->ResumeReplication();
  auto later = action->Run(json{{"within", "10s"}, {"poll_interval", "100ms"}}, ctx);
  EXPECT_TRUE(later.ok()) << later.reason;
}

TEST_F(DemotionTokenTest, ATargetPastTheTokenStopsAtOnce) {
  auto action = MakeDemotionTokenAction(env_);
  ASSERT_EQ(Append(kEu, "eu", "customers")->status, 200);
  ASSERT_TRUE(Eventually([&] { return Replicated("eu", "customers"); }));
  ActionContext ctx = Ctx();
  auto captured = action->Capture(json::object(), ctx);
  ASSERT_TRUE(captured.ok()) << captured.status().ToString();
  ctx.before_json = *captured;
  // Someone commits in the target: a second writer, and history the old owner never had.
  ASSERT_EQ(Append(kUs, "eu", "customers")->status, 200);
  const auto started = std::chrono::steady_clock::now();
  auto result = action->Run(json{{"within", "20s"}, {"poll_interval", "100ms"}}, ctx);
  EXPECT_EQ(result.outcome, ActionResult::Outcome::kFailed);
  EXPECT_LT(std::chrono::steady_clock::now() - started, 15s) << "it must not wait out the bound";
  EXPECT_EQ(result.reason.rfind("eu.customers: us-east-1 is at snapshot ", 0), 0u) << result.reason;
  EXPECT_NE(result.reason.find("it holds commits the old owner never had"), std::string::npos)
      << result.reason;
}

TEST_F(DemotionTokenTest, RunWithoutACapturedTokenFailsAndChangesNothing) {
  auto result = MakeDemotionTokenAction(env_)->Run(json::object(), Ctx());
  EXPECT_EQ(result.outcome, ActionResult::Outcome::kFailed);
  EXPECT_EQ(result.reason, "no demotion token was recorded before this step ran");
  auto invalid = MakeDemotionTokenAction(env_)->Validate(json{{"within", "0s"}, {"x", 1}});
  EXPECT_EQ(invalid.size(), 2u);
}

}  // namespace
}  // namespace icewarden::lab::testing
