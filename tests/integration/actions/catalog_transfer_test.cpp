// ownership.transfer against the lab: store epochs, catalog markers in the new owner, the lab's
// replication direction following the markers, idempotent re-runs, resume after a partial run,
// injected 409s and 502s, and compensation.
#include <atomic>
#include <thread>

#include "tests/fakes/forwarding_store.h"
#include "tests/integration/actions/catalog_lab_fixture.h"

namespace icewarden::lab::testing {
namespace {

using namespace std::chrono_literals;
using CatalogTransferTest = CatalogLabTest;

// What a run asks the new owner's catalog before its markers: GET /v1/config.
constexpr int64_t kSessionSetupRequests = 1;

TEST_F(CatalogTransferTest, MovesANamespaceAndFlipsReplication) {
  auto action = MakeOwnershipTransferAction(env_);
  auto result = action->Run(json::object(), Ctx());
  ASSERT_TRUE(result.ok()) << result.reason << " " << result.detail_json;
  int n = static_cast<int>(eu_tables_.size());
  EXPECT_EQ(result.reason, "moved " + std::to_string(n) +
                               " tables of namespace:eu.* from eu-central-1 to us-east-1 "
                               "(epochs +1); markers in us-east-1: " +
                               std::to_string(n) + " written, 0 already there");
  for (const auto& t : eu_tables_) {
    ::icewarden::Ownership row = Row(t);
    EXPECT_EQ(row.owner, kUs) << t;
    EXPECT_EQ(row.epoch, 2) << t;
    EXPECT_EQ(row.failover_id, "fo-1") << t;
    EXPECT_EQ(Marker(kUs, t), std::make_pair(std::string(kUs), std::string("2"))) << t;
    EXPECT_EQ(TableState(t)["owner"], kUs) << t;
  }
  EXPECT_EQ(Row("sales.orders").epoch, 1);

  // The lab now replicates us-east-1 -> eu-central-1 for these tables.
  auto committed = Append(kUs, "eu", "orders");
  ASSERT_EQ(committed->status, 200) << committed->body;
  std::string location = json::parse(committed->body)["metadata-location"];
  EXPECT_TRUE(Eventually([&] { return MetadataLocation(kEu, "eu", "orders") == location; }));

  // Running the step again changes nothing.
  auto again = action->Run(json::object(), Ctx());
  ASSERT_TRUE(again.ok()) << again.reason;
  EXPECT_EQ(Detail(again)["moved"], 0);
  EXPECT_EQ(Detail(again)["already_moved"], n);
  EXPECT_EQ(Detail(again)["markers_written"], 0);
  EXPECT_EQ(Detail(again)["markers_present"], n);
  for (const auto& t : eu_tables_) EXPECT_EQ(Row(t).epoch, 2) << t;
}

TEST_F(CatalogTransferTest, RowsJustMovedAreMarkedWithoutALoadAndARerunLoadsEach) {
  // A row this run moved has an epoch no marker can carry yet: one commit each, no load. A
  // re-run (a resume) must look first, since its markers may be there: one load each, no commit.
  auto counts = [&] {
    json r = lab_->State()["regions"][kUs]["requests"];
    return std::make_pair(r["requests_total"].get<int64_t>(), r["commits_total"].get<int64_t>());
  };
  const int64_t n = static_cast<int64_t>(eu_tables_.size());
  auto action = MakeOwnershipTransferAction(env_);
  const auto before = counts();
  auto first = action->Run(json::object(), Ctx());
  ASSERT_TRUE(first.ok()) << first.reason;
  const auto after_first = counts();
  EXPECT_EQ(after_first.second - before.second, n);
  EXPECT_EQ(after_first.first - before.first, n + kSessionSetupRequests);

  auto again = action->Run(json::object(), Ctx());
  ASSERT_TRUE(again.ok()) << again.reason;
  const auto after_again = counts();
  EXPECT_EQ(after_again.second - after_first.second, 0);
  EXPECT_EQ(after_again.first - after_first.first, n + kSessionSetupRequests);
  EXPECT_EQ(Detail(again)["markers_present"], n);
  for (const auto& t : eu_tables_) EXPECT_EQ(Marker(kUs, t).second, "2") << t;  // loads: last
}

TEST_F(CatalogTransferTest, ResumesAfterARunStoppedByItsDeadline) {
  // Slow commits, one table per batch and one commit at a time: the deadline stops it midway.
  ASSERT_TRUE(lab_->PatchFaults(kUs, {{"commit_latency_ms", 400}}).ok());
  auto action = MakeOwnershipTransferAction(env_);
  json params{{"batch_size", 1}, {"concurrency", 1}};
  auto partial = action->Run(params, Ctx(600ms));
  ASSERT_EQ(partial.outcome, ActionResult::Outcome::kUnknown) << partial.reason;
  EXPECT_NE(partial.reason.find("running the step again resumes"), std::string::npos);
  int moved_first = Detail(partial)["moved"];
  EXPECT_GE(moved_first, 1);
  EXPECT_LT(moved_first, static_cast<int>(eu_tables_.size()));

  ASSERT_TRUE(lab_->ClearFaults(kUs).ok());
  auto rest = action->Run(params, Ctx());
  ASSERT_TRUE(rest.ok()) << rest.reason;
  EXPECT_EQ(Detail(rest)["already_moved"], moved_first);
  EXPECT_EQ(Detail(rest)["moved"], static_cast<int>(eu_tables_.size()) - moved_first);
  for (const auto& t : eu_tables_) {
    EXPECT_EQ(Row(t).epoch, 2) << t;
    EXPECT_EQ(Marker(kUs, t).second, "2") << t;
  }
}

TEST_F(CatalogTransferTest, KeepsCommitsInFlightToItsConcurrency) {
  // Four eu tables, two commit slots, commits slow enough (400 ms) to overlap: the new owner's
  // catalog sees two commits at once (loads ran ahead to fill both slots), never three.
  ASSERT_TRUE(lab_->PatchFaults(kUs, {{"commit_latency_ms", 400}}).ok());
  json params{{"concurrency", 2}, {"batch_size", 1}};
  auto result = MakeOwnershipTransferAction(env_)->Run(params, Ctx());
  ASSERT_TRUE(result.ok()) << result.reason << " " << result.detail_json;
  EXPECT_EQ(Detail(result)["markers_written"], static_cast<int>(eu_tables_.size()));
  json requests = lab_->State()["regions"][kUs]["requests"];
  EXPECT_EQ(requests["peak_commits_in_progress"], 2) << requests;
  EXPECT_EQ(requests["commits_in_progress"], 0) << requests;
}

// Holds the second store batch until the new owner's catalog has admitted a marker commit
// of the first batch (or `patience` passes), and says whether one came. The count is taken
// when the first batch is durable, so a marker admitted before the second batch began counts.
class HoldingBatchStore final : public ::icewarden::testing::ForwardingStore {
 public:
  HoldingBatchStore(StateStore& inner, Lab& lab, std::chrono::milliseconds patience)
      : ForwardingStore(inner), lab_(lab), patience_(patience) {}

  Status CompareAndSetOwnership(std::span<const OwnershipChange> changes,
                                const AuditEvent& why) override {
    const int batch = ++batches_;
    if (batch == 2) {
      const auto give_up = std::chrono::steady_clock::now() + patience_;
      while (Commits() <= after_first_ && std::chrono::steady_clock::now() < give_up)
        std::this_thread::sleep_for(10ms);
      marker_during_batch_ = Commits() > after_first_;
    }
    Status s = inner_.CompareAndSetOwnership(changes, why);
    if (batch == 1) after_first_ = Commits();
    return s;
  }
  bool marker_during_batch() const { return marker_during_batch_; }

 private:
  int64_t Commits() {
    return lab_.State()["regions"][kUs]["requests"]["commits_total"].get<int64_t>();
  }
  Lab& lab_;
  std::chrono::milliseconds patience_;
  std::atomic<int> batches_{0};
  std::atomic<int64_t> after_first_{0};
  std::atomic<bool> marker_during_batch_{false};
};

TEST_F(CatalogTransferTest, MarkersKeepGoingWhileTheStoreCommitsTheNextBatch) {
  // One table per batch, two markers at once: batch 2 is held (as on a slow disk) until
  // batch 1's marker commit reaches the catalog. A transfer that made the batch on its catalog
  // thread would send nothing until the batch was done, and the hold would run out.
  HoldingBatchStore slow(*store_, *lab_, 3s);
  ActionEnv env = env_;
  env.store = &slow;
  json params{{"concurrency", 2}, {"batch_size", 1}};
  auto result = MakeOwnershipTransferAction(env)->Run(params, Ctx());
  ASSERT_TRUE(result.ok()) << result.reason << " " << result.detail_json;
  EXPECT_EQ(Detail(result)["markers_written"], static_cast<int>(eu_tables_.size()));
  EXPECT_TRUE(slow.marker_during_batch());
  for (const auto& t : eu_tables_) EXPECT_EQ(Marker(kUs, t).second, "2") << t;
}

TEST_F(CatalogTransferTest, CompletesThroughInjectedConflicts) {
  ASSERT_TRUE(lab_->PatchFaults(kUs, {{"error_rate", 0.4}, {"error_status", 409}}).ok());
  auto result = MakeOwnershipTransferAction(env_)->Run(json::object(), Ctx());
  ASSERT_TRUE(result.ok()) << result.reason << " " << result.detail_json;
  ASSERT_TRUE(lab_->ClearFaults(kUs).ok());
  for (const auto& t : eu_tables_) EXPECT_EQ(Marker(kUs, t).second, "2") << t;
}

TEST_F(CatalogTransferTest, ConflictsAreReloadedAndRetried) {
  // Every commit conflicts until the faults are cleared; the retries (with their short pauses)
  // outlast that.
  ASSERT_TRUE(lab_->PatchFaults(kUs, {{"error_rate", 1.0}, {"error_status", 409}}).ok());
  std::thread clear([&] {
    std::this_thread::sleep_for(150ms);
    lab_->ClearFaults(kUs);
  });
  auto result = MakeOwnershipTransferAction(env_)->Run(json::object(), Ctx());
  clear.join();
  ASSERT_TRUE(result.ok()) << result.reason << " " << result.detail_json;
  EXPECT_GE(Detail(result)["conflicts_retried"].get<int>(), static_cast<int>(eu_tables_.size()));
  for (const auto& t : eu_tables_) EXPECT_EQ(Marker(kUs, t).second, "2") << t;
}

TEST_F(CatalogTransferTest, StateUnknownIsReloadedBeforeRetrying) {
  // Every marker commit is applied and then answered 502: the client cannot know it landed.
  // Reloading finds each marker there, so none is committed twice.
  ASSERT_TRUE(
      lab_->PatchFaults(kUs,
                        {{"error_rate", 1.0}, {"error_status", 502}, {"error_after_commit", true}})
          .ok());
  const auto before = lab_->State()["regions"][kUs]["requests"]["commits_total"].get<int64_t>();
  auto result = MakeOwnershipTransferAction(env_)->Run(json::object(), Ctx());
  const auto after = lab_->State()["regions"][kUs]["requests"]["commits_total"].get<int64_t>();
  ASSERT_TRUE(lab_->ClearFaults(kUs).ok());
  ASSERT_TRUE(result.ok()) << result.reason << " " << result.detail_json;
  const int n = static_cast<int>(eu_tables_.size());
  EXPECT_EQ(Detail(result)["markers_verified_after_unknown"], n);
  EXPECT_EQ(after - before, n) << "one commit per table: the reload saw each one applied";
  for (const auto& t : eu_tables_) {
    EXPECT_EQ(Row(t).epoch, 2) << t;
    EXPECT_EQ(Marker(kUs, t).second, "2") << t;
  }
}

TEST_F(CatalogTransferTest, FailsClearlyWhenTheNewOwnerIsDown) {
  ASSERT_TRUE(lab_->StopRegion(kUs).ok());
  auto result = MakeOwnershipTransferAction(env_)->Run(json::object(), Ctx(10s));
  // The store moved (the source of truth), the markers could not be written: a re-run resumes.
  EXPECT_EQ(result.outcome, ActionResult::Outcome::kUnknown) << result.reason;
  EXPECT_NE(result.reason.find("marker not written in us-east-1"), std::string::npos)
      << result.reason;
  ASSERT_TRUE(lab_->StartRegion(kUs).ok());
  auto rest = MakeOwnershipTransferAction(env_)->Run(json::object(), Ctx());
  ASSERT_TRUE(rest.ok()) << rest.reason;
  EXPECT_EQ(Detail(rest)["markers_written"], static_cast<int>(eu_tables_.size()));
}

TEST_F(CatalogTransferTest, CompensationMovesBackWithHigherEpochs) {
  auto action = MakeOwnershipTransferAction(env_);
  auto run = action->Run(json::object(), Ctx());
  ASSERT_TRUE(run.ok()) << run.reason;
  // The markers reach the old owner by replication before it takes the tables back.
  ASSERT_TRUE(Eventually([&] {
    for (const auto& t : eu_tables_)
      if (Marker(kEu, t).second != "2") return false;
    return true;
  }));
  auto back = action->Compensate(json::object(), json::parse(run.detail_json), Ctx());
  ASSERT_TRUE(back.ok()) << back.reason << " " << back.detail_json;
  EXPECT_EQ(back.reason.rfind("moved back " + std::to_string(eu_tables_.size()), 0), 0u)
      << back.reason;
  for (const auto& t : eu_tables_) {
    EXPECT_EQ(Row(t).owner, kEu) << t;
    EXPECT_EQ(Row(t).epoch, 3) << t;
    EXPECT_EQ(Marker(kEu, t), std::make_pair(std::string(kEu), std::string("3"))) << t;
    EXPECT_EQ(TableState(t)["owner"], kEu) << t;
  }
  auto again = action->Compensate(json::object(), json::object(), Ctx());
  ASSERT_TRUE(again.ok()) << again.reason;
  EXPECT_EQ(Detail(again)["moved"], 0);
  EXPECT_EQ(Row("eu.orders").epoch, 3);
}

}  // namespace
}  // namespace icewarden::lab::testing
