// verify.catalog_healthy, verify.replica_caught_up and fence.catalog_quiet against the lab.
#include <thread>

#include "tests/integration/actions/catalog_lab_fixture.h"

namespace icewarden::lab::testing {
namespace {

using namespace std::chrono_literals;
using CatalogChecksTest = CatalogLabTest;

TEST_F(CatalogChecksTest, CatalogHealthyPassesForAServingHealthyRegion) {
  auto result = MakeCatalogHealthyCheck(env_)->Run(json{{"region", kUs}}, Ctx());
  ASSERT_TRUE(result.ok()) << result.reason;
  EXPECT_EQ(result.reason.rfind("region us-east-1 is healthy and its catalog answered GET "
                                "/v1/config in ",
                                0),
            0u)
      << result.reason;
}

TEST_F(CatalogChecksTest, CatalogHealthyFailsForAStoppedRegionOrAnUnhealthyOne) {
  ASSERT_TRUE(lab_->StopRegion(kEu).ok());
  auto stopped = MakeCatalogHealthyCheck(env_)->Run(json{{"region", kEu}}, Ctx());
  EXPECT_EQ(stopped.outcome, ActionResult::Outcome::kFailed);
  EXPECT_NE(stopped.reason.find("GET /v1/config failed"), std::string::npos) << stopped.reason;

  health_[kUs].health = RegionHealth::kUnreachable;
  health_[kUs].reason = "3 probe rounds failed";
  auto unhealthy = MakeCatalogHealthyCheck(env_)->Run(json{{"region", kUs}}, Ctx());
  EXPECT_EQ(unhealthy.outcome, ActionResult::Outcome::kFailed);
  EXPECT_EQ(unhealthy.reason, "region us-east-1 is unreachable: 3 probe rounds failed");
  auto unknown = MakeCatalogHealthyCheck(env_)->Run(json{{"region", "ap-south-1"}}, Ctx());
  EXPECT_EQ(unknown.reason, "region ap-south-1 is not known");
}

TEST_F(CatalogChecksTest, ReplicaCaughtUpGatesOnTheWorstTable) {
  auto check = MakeReplicaCaughtUpCheck(env_);
  auto caught_up = check->Run(json::object(), Ctx());
  ASSERT_TRUE(caught_up.ok()) << caught_up.reason;
  EXPECT_EQ(caught_up.reason, "us-east-1 has the current snapshot of all " +
                                  std::to_string(eu_tables_.size()) +
                                  " tables of namespace:eu.* owned by eu-central-1");

  lab_->PauseReplication();
  ASSERT_EQ(Append(kEu, "eu", "orders")->status, 200);
  std::this_thread::sleep_for(50ms);
  ASSERT_EQ(Append(kEu, "eu", "orders")->status, 200);
  ASSERT_EQ(Append(kEu, "eu", "customers")->status, 200);
  auto behind = check->Run(json::object(), Ctx());
  EXPECT_EQ(behind.outcome, ActionResult::Outcome::kFailed);
  EXPECT_EQ(behind.reason.rfind("eu.orders: us-east-1 is 2 commits behind eu-central-1", 0), 0u)
      << behind.reason;
  EXPECT_NE(behind.reason.find("(worst of 2 failing out of"), std::string::npos) << behind.reason;
  json detail = Detail(behind);
  EXPECT_EQ(detail["failing"], 2);
  EXPECT_EQ(detail["rows"][0]["table"], "eu.orders");
  EXPECT_EQ(detail["rows"][0]["state"], "behind");

  auto lenient = check->Run(json{{"max_lag", "1h"}}, Ctx());
  EXPECT_TRUE(lenient.ok()) << lenient.reason;

  lab_->ResumeReplication();
  ASSERT_TRUE(Eventually([&] { return check->Run(json::object(), Ctx()).ok(); }));
}

TEST_F(CatalogChecksTest, QuietWindowPassesWhenNothingWrites) {
  auto not_modified = [&] {
    return lab_->State()["regions"][kEu]["requests"]["not_modified_total"].get<int64_t>();
  };
  const int64_t before = not_modified();
  auto result = MakeCatalogQuietFence(env_)->Run(
      json{{"window", "600ms"}, {"poll_interval", "100ms"}}, Ctx());
  ASSERT_TRUE(result.ok()) << result.reason;
  EXPECT_EQ(result.reason, "no new commit on " + std::to_string(eu_tables_.size()) +
                               " tables of namespace:eu.* in eu-central-1 for 600ms");
  json detail = Detail(result);
  EXPECT_GE(detail["polls"].get<int>(), 5);
  EXPECT_EQ(detail["tables_watched"], eu_tables_.size());
  // Without the daemon's observations the step keeps its own: every poll after the baseline
  // asks with the ETag it saw, and an unchanged table answers 304.
  EXPECT_EQ(not_modified() - before,
            (detail["polls"].get<int64_t>() - 1) * static_cast<int64_t>(eu_tables_.size()));
}

TEST_F(CatalogChecksTest, QuietWindowFailsNamingTheTableARogueWriterCommits) {
  // The lab now routes eu.* to us-east-1; eu-central-1 keeps writing them: an old owner that
  // was not fenced.
  ASSERT_TRUE(lab_->SetOwnershipRule("eu[.].*", kUs).ok());
  lab_->SetWorkload(false, 100);
  ASSERT_TRUE(lab_->SetRogueWriter(kEu, true).ok());
  auto result =
      MakeCatalogQuietFence(env_)->Run(json{{"window", "5s"}, {"poll_interval", "100ms"}}, Ctx());
  EXPECT_EQ(result.outcome, ActionResult::Outcome::kFailed);
  EXPECT_EQ(result.reason.rfind("eu.", 0), 0u) << result.reason;
  EXPECT_NE(result.reason.find(" got snapshot "), std::string::npos) << result.reason;
  EXPECT_NE(result.reason.find("in eu-central-1 (was "), std::string::npos) << result.reason;
  EXPECT_NE(result.reason.find("the old owner is still writing"), std::string::npos);
  EXPECT_TRUE(Detail(result).contains("changed"));
}

TEST_F(CatalogChecksTest, QuietWindowCannotBeProvenForAnUnreachableRegion) {
  ASSERT_TRUE(lab_->StopRegion(kEu).ok());
  auto result = MakeCatalogQuietFence(env_)->Run(
      json{{"window", "300ms"}, {"poll_interval", "100ms"}}, Ctx());
  EXPECT_EQ(result.outcome, ActionResult::Outcome::kFailed);
  EXPECT_EQ(result.reason.rfind("cannot observe eu.", 0), 0u) << result.reason;
  EXPECT_NE(result.reason.find("positive evidence"), std::string::npos);
}

TEST_F(CatalogChecksTest, QuietWindowLongerThanTheStepTimeoutIsRefused) {
  auto result = MakeCatalogQuietFence(env_)->Run(json{{"window", "1m"}}, Ctx(5s));
  EXPECT_EQ(result.outcome, ActionResult::Outcome::kFailed);
  EXPECT_NE(result.reason.find("longer timeout"), std::string::npos) << result.reason;
}

}  // namespace
}  // namespace icewarden::lab::testing
