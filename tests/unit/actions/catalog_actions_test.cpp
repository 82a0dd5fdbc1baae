// The catalog action family without catalogs: registration, Validate paths, Plan lines, and the
// store side of ownership.transfer (batches, epochs, resume, compensation) with markers off.
// The catalog side runs against the lab in tests/integration/actions/.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "actions/action_kinds.h"
#include "actions/catalog_checks.h"
#include "tests/fakes/fake_clock.h"
#include "tests/fakes/fake_store.h"

namespace icewarden {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;

std::vector<std::string> Paths(const std::vector<ParamError>& errors) {
  std::vector<std::string> out;
  for (const auto& e : errors) out.push_back(e.path);
  return out;
}

TEST(CatalogActionsTest, RegistersTheSixKinds) {
  ActionRegistry registry;
  ASSERT_TRUE(registerCatalogActions(registry, ActionEnv{}).ok());
  EXPECT_EQ(registry.Kinds(),
            (std::vector<std::string>{"fence.catalog_quiet", "ownership.transfer",
                                      "switchover.demotion_token", "verify.catalog_healthy",
                                      "verify.ownership_markers", "verify.replica_caught_up"}));
  EXPECT_TRUE(registry.Find("verify.ownership_markers")->idempotent());
  EXPECT_FALSE(registry.Find("verify.ownership_markers")->has_compensation());
  EXPECT_TRUE(registry.Find("switchover.demotion_token")->idempotent());
  EXPECT_FALSE(registry.Find("switchover.demotion_token")->has_compensation());
  EXPECT_TRUE(registry.Find("ownership.transfer")->idempotent());
  EXPECT_TRUE(registry.Find("ownership.transfer")->has_compensation());
  EXPECT_FALSE(registry.Find("fence.catalog_quiet")->has_compensation());
  EXPECT_FALSE(registerCatalogActions(registry, ActionEnv{}).ok());  // twice is an error
}

TEST(CatalogActionsTest, TransferValidatePaths) {
  auto a = MakeOwnershipTransferAction({});
  EXPECT_TRUE(a->Validate(json::object()).empty());
  EXPECT_TRUE(a->Validate(json{{"scope", "namespace:eu.*"},
                               {"write_catalog_properties", false},
                               {"concurrency", 256},
                               {"batch_size", 1}})
                  .empty());
  EXPECT_EQ(Paths(a->Validate(json{{"concurrency", 0}})), std::vector<std::string>{"concurrency"});
  EXPECT_EQ(Paths(a->Validate(json{{"concurrency", 257}})),
            std::vector<std::string>{"concurrency"});
  EXPECT_EQ(Paths(a->Validate(json{{"scope", "eu.*"}})), std::vector<std::string>{"scope"});
  EXPECT_EQ(Paths(a->Validate(json{{"write_catalog_properties", "yes"}})),
            std::vector<std::string>{"write_catalog_properties"});
  EXPECT_EQ(Paths(a->Validate(json{{"batch", 5}})), std::vector<std::string>{"batch"});
  auto errors = a->Validate(json{{"batch_size", 0}});
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].message, "must be between 1 and 10000, not 0");
}

TEST(CatalogActionsTest, ChecksValidatePaths) {
  auto healthy = MakeCatalogHealthyCheck({});
  EXPECT_EQ(Paths(healthy->Validate(json::object())), std::vector<std::string>{"region"});
  EXPECT_TRUE(healthy->Validate(json{{"region", "eu-central-1"}, {"timeout", "2s"}}).empty());
  auto caught_up = MakeReplicaCaughtUpCheck({});
  EXPECT_TRUE(caught_up->Validate(json::object()).empty());
  EXPECT_EQ(Paths(caught_up->Validate(json{{"max_lag", "soon"}})),
            std::vector<std::string>{"max_lag"});
  auto quiet = MakeCatalogQuietFence({});
  EXPECT_EQ(Paths(quiet->Validate(json::object())), std::vector<std::string>{"window"});
  EXPECT_EQ(Paths(quiet->Validate(json{{"window", "30s"}, {"poll_interval", "0"}})),
            std::vector<std::string>{"poll_interval"});
  EXPECT_EQ(Paths(quiet->Validate(json{{"window", "30s"}, {"scope", "tables:"}})),
            std::vector<std::string>{"scope"});
  // A poll every few milliseconds over a whole scope is a load test; 30 days is the longest
  // any duration param may be.
  EXPECT_EQ(Paths(quiet->Validate(json{{"window", "30s"}, {"poll_interval", "10ms"}})),
            std::vector<std::string>{"poll_interval"});
  EXPECT_TRUE(quiet->Validate(json{{"window", "30s"}, {"poll_interval", "50ms"}}).empty());
  EXPECT_EQ(Paths(quiet->Validate(json{{"window", "31d"}})), std::vector<std::string>{"window"});
}

TEST(CatalogActionsTest, OwnershipMarkersValidatePaths) {
  auto markers = MakeOwnershipMarkersCheck({});
  EXPECT_TRUE(markers->Validate(json::object()).empty());
  EXPECT_TRUE(markers->Validate(nullptr).empty());
  EXPECT_TRUE(markers
                  ->Validate(json{{"region", "us-east-1"},
                                  {"scope", "owner:eu-central-1"},
                                  {"allow_missing", true},
                                  {"concurrency", 256}})
                  .empty());
  EXPECT_EQ(Paths(markers->Validate(json{{"region", ""}})), std::vector<std::string>{"region"});
  EXPECT_EQ(Paths(markers->Validate(json{{"region", 7}})), std::vector<std::string>{"region"});
  EXPECT_EQ(Paths(markers->Validate(json{{"scope", "eu.*"}})), std::vector<std::string>{"scope"});
  EXPECT_EQ(Paths(markers->Validate(json{{"concurrency", 0}})),
            std::vector<std::string>{"concurrency"});
  EXPECT_EQ(Paths(markers->Validate(json{{"max_lag", "1s"}})), std::vector<std::string>{"max_lag"});
  auto errors = markers->Validate(json{{"allow_missing", "yes"}, {"concurrency", 257}});
  ASSERT_EQ(errors.size(), 2u);
  EXPECT_EQ(errors[0].path, "allow_missing");
  EXPECT_EQ(errors[0].message, "must be true or false");
  EXPECT_EQ(errors[1].message, "must be between 1 and 256, not 257");
  EXPECT_EQ(Paths(markers->Validate(json::array())), std::vector<std::string>{""});
}

TEST(CatalogActionsTest, PlanLinesSayWhatRunWouldDo) {
  EXPECT_EQ(MakeOwnershipTransferAction({})->Plan(json{{"scope", "namespace:eu.*"}}),
            "move every table of namespace:eu.* owned by the 'from' region to the 'to' region "
            "in the state store (compare-and-set, epoch +1, batches of 500), then set "
            "icewarden.owner/icewarden.epoch in the 'to' region's catalog (up to 64 commits in "
            "flight)");
  EXPECT_EQ(MakeCatalogHealthyCheck({})->Plan(json{{"region", "eu-central-1"}}),
            "check that region eu-central-1 is healthy and that its catalog answers GET "
            "/v1/config within 5s");
  EXPECT_EQ(MakeReplicaCaughtUpCheck({})->Plan(json{{"max_lag", "30s"}}),
            "check that the 'to' region trails by at most 30s for every table of the failover's "
            "scope owned by the 'from' region, with no divergence");
  EXPECT_EQ(MakeCatalogQuietFence({})->Plan(json{{"window", "30s"}, {"region", "us-east-1"}}),
            "watch us-east-1's catalog for 30s (a poll every 1s) and fail on any new commit to "
            "a table of the failover's scope, or when a table cannot be observed");
  EXPECT_EQ(MakeOwnershipMarkersCheck({})->Plan(json::object()),
            "check the icewarden.owner/icewarden.epoch markers in the 'to' region's catalog "
            "against the store for every table of the failover's scope: none at an epoch lower "
            "or higher than the store's, none naming another owner at the store's epoch, and one "
            "on every table a failover moved to the 'to' region");
  EXPECT_EQ(MakeOwnershipMarkersCheck({})->Plan(json{
                {"region", "eu-central-1"}, {"scope", "namespace:eu"}, {"allow_missing", true}}),
            "check the icewarden.owner/icewarden.epoch markers in eu-central-1's catalog against "
            "the store for every table of namespace:eu: none at an epoch lower or higher than the "
            "store's, none naming another owner at the store's epoch, and tables without a marker "
            "allowed");
}

class TransferStoreTest : public ::testing::Test {
 protected:
  TransferStoreTest() {
    env_.clock = clock_;
    env_.store = &store_;
    for (int i = 0; i < 7; ++i) Claim("eu.t" + std::to_string(i), "eu-central-1");
    Claim("sales.orders", "eu-central-1");
    Claim("eu.other", "us-east-1");
  }
  void Claim(const std::string& dotted, const std::string& owner) {
    OwnershipChange c{*TableIdent::Parse(dotted), 0, owner, ""};
    ASSERT_TRUE(store_.CompareAndSetOwnership(std::span(&c, 1), {}).ok());
  }
  Ownership Row(const std::string& dotted) {
    return **store_.GetOwnership(*TableIdent::Parse(dotted));
  }
  ActionContext Ctx() {
    ActionContext ctx;
    ctx.failover_id = "fo-1";
    ctx.step_id = "move";
    ctx.from = "eu-central-1";
    ctx.to = "us-east-1";
    ctx.scope = "namespace:eu.*";
    ctx.deadline = std::chrono::steady_clock::now() + 10s;
    return ctx;
  }
  const json kParams = json{{"write_catalog_properties", false}, {"batch_size", 3}};
  std::shared_ptr<testing::FakeClock> clock_ = std::make_shared<testing::FakeClock>();
  testing::FakeStore store_{*clock_};
  ActionEnv env_;
};

TEST_F(TransferStoreTest, MovesTheScopeInBatchesBumpingEpochs) {
  auto action = MakeOwnershipTransferAction(env_);
  auto result = action->Run(kParams, Ctx());
  ASSERT_TRUE(result.ok()) << result.reason;
  EXPECT_EQ(result.reason,
            "moved 7 tables of namespace:eu.* from eu-central-1 to us-east-1 (epochs +1)");
  json detail = json::parse(result.detail_json);
  EXPECT_EQ(detail["moved"], 7);
  EXPECT_EQ(detail["batches"], 3);
  for (int i = 0; i < 7; ++i) {
    auto row = Row("eu.t" + std::to_string(i));
    EXPECT_EQ(row.owner, "us-east-1");
    EXPECT_EQ(row.epoch, 2);
    EXPECT_EQ(row.failover_id, "fo-1");
  }
  EXPECT_EQ(Row("sales.orders").owner, "eu-central-1");
  EXPECT_EQ(Row("eu.other").epoch, 1);

  auto again = action->Run(kParams, Ctx());  // idempotent: nothing moves twice
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(json::parse(again.detail_json)["moved"], 0);
  EXPECT_EQ(json::parse(again.detail_json)["already_moved"], 7);
  EXPECT_EQ(Row("eu.t0").epoch, 2);
}

TEST_F(TransferStoreTest, ResumeContinuesWhereAnEarlierRunStopped) {
  OwnershipChange pre{*TableIdent::Parse("eu.t3"), 1, "us-east-1", "fo-1"};
  ASSERT_TRUE(store_.CompareAndSetOwnership(std::span(&pre, 1), {}).ok());
  auto result = MakeOwnershipTransferAction(env_)->Run(kParams, Ctx());
  ASSERT_TRUE(result.ok()) << result.reason;
  json detail = json::parse(result.detail_json);
  EXPECT_EQ(detail["moved"], 6);
  EXPECT_EQ(detail["already_moved"], 1);
  EXPECT_EQ(Row("eu.t3").epoch, 2);
}

TEST_F(TransferStoreTest, CompensationMovesBackOnlyWhatThisFailoverMovedWithHigherEpochs) {
  Claim("eu.before", "us-east-1");  // owned by 'to' before the failover: stays
  auto action = MakeOwnershipTransferAction(env_);
  ASSERT_TRUE(action->Run(kParams, Ctx()).ok());
  auto back = action->Compensate(kParams, json::object(), Ctx());
  ASSERT_TRUE(back.ok()) << back.reason;
  EXPECT_EQ(json::parse(back.detail_json)["moved"], 7);
  for (int i = 0; i < 7; ++i) {
    auto row = Row("eu.t" + std::to_string(i));
    EXPECT_EQ(row.owner, "eu-central-1");
    EXPECT_EQ(row.epoch, 3);
  }
  EXPECT_EQ(Row("eu.before").owner, "us-east-1");
  EXPECT_EQ(Row("eu.other").owner, "us-east-1");
}

TEST_F(TransferStoreTest, StoreFailureBeforeAnyMoveIsAFailure) {
  store_.FailWith(Status::IOError("disk gone"));
  auto result = MakeOwnershipTransferAction(env_)->Run(kParams, Ctx());
  EXPECT_EQ(result.outcome, ActionResult::Outcome::kFailed);
  EXPECT_NE(result.reason.find("disk gone"), std::string::npos) << result.reason;
}

TEST_F(TransferStoreTest, OwnerScopeMustNameTheFromRegion) {
  auto result = MakeOwnershipTransferAction(env_)->Run(
      json{{"scope", "owner:us-east-1"}, {"write_catalog_properties", false}}, Ctx());
  EXPECT_EQ(result.outcome, ActionResult::Outcome::kFailed);
  EXPECT_NE(result.reason.find("names region 'us-east-1'"), std::string::npos) << result.reason;
}

TEST_F(TransferStoreTest, ExpiredBeforeStartingMovesNothing) {
  auto ctx = Ctx();
  ctx.deadline = std::chrono::steady_clock::now();
  auto result = MakeOwnershipTransferAction(env_)->Run(kParams, ctx);
  EXPECT_EQ(result.outcome, ActionResult::Outcome::kFailed);
  EXPECT_EQ(Row("eu.t0").epoch, 1);
}

}  // namespace
}  // namespace icewarden
