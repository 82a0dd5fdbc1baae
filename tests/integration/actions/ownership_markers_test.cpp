// verify.ownership_markers against the lab: after a real ownership.transfer, and after the
// store or the catalog has been made to disagree (a store epoch bumped past the marker, markers
// removed, planted from a future epoch, naming another owner, unparseable), plus bad params.
#include <set>

#include "tests/integration/actions/catalog_lab_fixture.h"

namespace icewarden::lab::testing {
namespace {

using namespace std::chrono_literals;

std::vector<std::string> Paths(const std::vector<ParamError>& errors) {
  std::vector<std::string> out;
  for (const auto& e : errors) out.push_back(e.path);
  return out;
}

class OwnershipMarkersTest : public CatalogLabTest {
 protected:
  void Transfer(json params = json::object()) {
    auto moved = MakeOwnershipTransferAction(env_)->Run(params, Ctx());
    ASSERT_TRUE(moved.ok()) << moved.reason << " " << moved.detail_json;
  }

  ActionResult Verify(const json& params = json::object(), ActionContext ctx = {}) {
    if (ctx.failover_id.empty()) ctx = Ctx();
    return MakeOwnershipMarkersCheck(env_)->Run(params, ctx);
  }

  // One property-only commit in `region`'s catalog, as any catalog client could make it.
  void CommitProperties(const std::string& region, const std::string& dotted, json update) {
    auto t = *::icewarden::TableIdent::Parse(dotted);
    json body{{"requirements", json::array()}, {"updates", json::array({std::move(update)})}};
    auto r = PostJson(region, TablePath(t.namespace_levels[0], t.name), body);
    ASSERT_TRUE(r);
    ASSERT_EQ(r->status, 200) << r->body;
  }
  void SetMarker(const std::string& region, const std::string& dotted, json properties) {
    CommitProperties(region, dotted, {{"action", "set-properties"}, {"updates", properties}});
  }

  // Bumps a table's store epoch (same owner), as a later run or another leader would.
  void BumpStoreEpoch(const std::string& dotted) {
    ::icewarden::Ownership row = Row(dotted);
    ::icewarden::OwnershipChange change{row.table, row.epoch, row.owner, "fo-2"};
    ASSERT_TRUE(store_->CompareAndSetOwnership(std::span(&change, 1), {}).ok());
  }

  int n() const { return static_cast<int>(eu_tables_.size()); }
};

TEST_F(OwnershipMarkersTest, PassesAfterARealTransferAndAgainOnARerun) {
  Transfer();
  for (int run = 0; run < 2; ++run) {
    auto result = Verify();
    ASSERT_TRUE(result.ok()) << result.reason << " " << result.detail_json;
    EXPECT_EQ(result.reason,
              "the markers in us-east-1 agree with the store for all " + std::to_string(n()) +
                  " tables of namespace:eu.*: " + std::to_string(n()) + " at the store's epoch");
    json d = Detail(result);
    EXPECT_EQ(d["region"], kUs);
    EXPECT_EQ(d["checked"], n());
    EXPECT_EQ(d["ok"], n());
    for (const char* zero : {"missing", "stale", "ahead", "conflicting", "invalid", "unreadable",
                             "unmarked", "failing"})
      EXPECT_EQ(d[zero], 0) << zero;
    EXPECT_TRUE(d["offending"].empty());
  }
  // The old owner's catalog gets the same markers by replication (until then it has none, and
  // tables it does not own need none); then they agree there too.
  EXPECT_TRUE(Eventually([&] {
    auto old_owner = Verify(json{{"region", kEu}});
    return old_owner.ok() && Detail(old_owner)["ok"] == n();
  }));
}

TEST_F(OwnershipMarkersTest, AnOwnerScopeChecksTheTablesTheFailoverMovedOutOfIt) {
  // "owner:eu-central-1" names no table once they have moved; the step checks what this
  // failover moved instead of passing on nothing.
  ActionContext ctx = Ctx();
  ctx.scope = "owner:eu-central-1";
  auto moved = MakeOwnershipTransferAction(env_)->Run(json::object(), ctx);
  ASSERT_TRUE(moved.ok()) << moved.reason;
  auto result = Verify(json::object(), ctx);
  ASSERT_TRUE(result.ok()) << result.reason;
  EXPECT_EQ(Detail(result)["checked"], n());
  EXPECT_EQ(Detail(result)["ok"], n());

  ctx.failover_id = "fo-other";  // a step of another failover has nothing of this scope to check
  auto other = Verify(json::object(), ctx);
  EXPECT_EQ(other.outcome, ActionResult::Outcome::kFailed);
  EXPECT_EQ(other.reason, "nothing to check: the store records no table of owner:eu-central-1");
}

TEST_F(OwnershipMarkersTest, FailsOnAMarkerLowerThanTheStoresEpoch) {
  Transfer();
  BumpStoreEpoch(eu_tables_[0]);  // the store at 3, the marker still at 2
  // An old run's marker planted in the new owner's catalog: epoch 1, naming the old owner.
  SetMarker(kUs, eu_tables_[1], {{"icewarden.owner", kEu}, {"icewarden.epoch", "1"}});
  auto result = Verify();
  ASSERT_EQ(result.outcome, ActionResult::Outcome::kFailed) << result.reason;
  EXPECT_EQ(result.reason.rfind("2 of " + std::to_string(n()) +
                                    " tables of namespace:eu.* fail the marker check in "
                                    "us-east-1 (2 stale): ",
                                0),
            0u)
      << result.reason;
  EXPECT_NE(
      result.reason.find(eu_tables_[0] + ": marker epoch 2 (owner \"us-east-1\") is lower than the "
                                         "store's epoch 3 (owner us-east-1)"),
      std::string::npos)
      << result.reason;
  EXPECT_NE(result.reason.find(eu_tables_[1] + ": marker epoch 1 (owner \"eu-central-1\")"),
            std::string::npos)
      << result.reason;
  json d = Detail(result);
  EXPECT_EQ(d["stale"], 2);
  EXPECT_EQ(d["ok"], n() - 2);
  EXPECT_EQ(d["failing"], 2);
  ASSERT_EQ(d["offending"].size(), 2u);
  std::set<std::string> offending;
  for (const auto& o : d["offending"]) {
    EXPECT_EQ(o["problem"], "stale");
    offending.insert(o["table"]);
  }
  EXPECT_EQ(offending, (std::set<std::string>{eu_tables_[0], eu_tables_[1]}));
  // allow_missing does not excuse a stale marker.
  EXPECT_FALSE(Verify(json{{"allow_missing", true}}).ok());
}

TEST_F(OwnershipMarkersTest, FailsOnMissingMarkersUnlessAllowed) {
  Transfer(json{{"write_catalog_properties", false}});
  auto result = Verify();
  ASSERT_EQ(result.outcome, ActionResult::Outcome::kFailed) << result.reason;
  EXPECT_NE(result.reason.find("(" + std::to_string(n()) + " missing): "), std::string::npos)
      << result.reason;
  EXPECT_NE(result.reason.find(": no marker in us-east-1, which owns it at epoch 2 since failover "
                               "fo-1: its transfer should have written one"),
            std::string::npos)
      << result.reason;
  EXPECT_NE(result.reason.find("; and " + std::to_string(n() - 3) + " more"), std::string::npos)
      << result.reason;
  EXPECT_EQ(Detail(result)["missing"], n());

  auto allowed = Verify(json{{"allow_missing", true}});
  ASSERT_TRUE(allowed.ok()) << allowed.reason;
  EXPECT_EQ(allowed.reason, "the markers in us-east-1 agree with the store for all " +
                                std::to_string(n()) +
                                " tables of namespace:eu.*: 0 at the "
                                "store's epoch, " +
                                std::to_string(n()) + " without a marker (allowed)");
  EXPECT_EQ(Detail(allowed)["missing"], n());
  EXPECT_EQ(Detail(allowed)["failing"], 0);
}

TEST_F(OwnershipMarkersTest, OneRemovedMarkerIsNamed) {
  Transfer();
  CommitProperties(kUs, eu_tables_[2],
                   {{"action", "remove-properties"},
                    {"removals", json::array({"icewarden.owner", "icewarden.epoch"})}});
  auto result = Verify();
  ASSERT_EQ(result.outcome, ActionResult::Outcome::kFailed) << result.reason;
  json d = Detail(result);
  EXPECT_EQ(d["missing"], 1);
  EXPECT_EQ(d["ok"], n() - 1);
  ASSERT_EQ(d["offending"].size(), 1u);
  EXPECT_EQ(d["offending"][0]["table"], eu_tables_[2]);
  EXPECT_EQ(d["offending"][0]["problem"], "missing");
  EXPECT_EQ(d["offending"][0]["store_epoch"], 2);
}

TEST_F(OwnershipMarkersTest, TablesNeverMovedByAFailoverNeedNoMarker) {
  // sales.* belongs to us-east-1 from the initial claim: nothing ever marked it.
  auto result = Verify(json{{"scope", "namespace:sales"}});
  ASSERT_TRUE(result.ok()) << result.reason;
  json d = Detail(result);
  EXPECT_GE(d["checked"].get<int>(), 1);
  EXPECT_EQ(d["unmarked"], d["checked"]);
  EXPECT_EQ(d["missing"], 0);
}

TEST_F(OwnershipMarkersTest, FailsOnAMarkerFromAFutureEpoch) {
  Transfer();
  SetMarker(kUs, eu_tables_[0], {{"icewarden.owner", kUs}, {"icewarden.epoch", "3"}});
  auto result = Verify();
  ASSERT_EQ(result.outcome, ActionResult::Outcome::kFailed) << result.reason;
  EXPECT_NE(result.reason.find("(1 ahead): " + eu_tables_[0] +
                               ": marker epoch 3 (owner \"us-east-1\") is higher than the "
                               "store's epoch 2 (owner us-east-1): a marker from a future epoch"),
            std::string::npos)
      << result.reason;
  json d = Detail(result);
  EXPECT_EQ(d["ahead"], 1);
  EXPECT_EQ(d["offending"][0]["marker_epoch"], "3");
  EXPECT_EQ(d["offending"][0]["store_epoch"], 2);
}

TEST_F(OwnershipMarkersTest, FailsOnAContradictingOwnerAndOnAnUnparseableMarker) {
  Transfer();
  SetMarker(kUs, eu_tables_[0], {{"icewarden.owner", kEu}, {"icewarden.epoch", "2"}});
  SetMarker(kUs, eu_tables_[1], {{"icewarden.epoch", "two"}});
  auto result = Verify();
  ASSERT_EQ(result.outcome, ActionResult::Outcome::kFailed) << result.reason;
  EXPECT_NE(result.reason.find("(1 conflicting, 1 invalid)"), std::string::npos) << result.reason;
  EXPECT_NE(result.reason.find(eu_tables_[0] +
                               ": marker at the store's epoch 2 names \"eu-central-1\", but the "
                               "store's owner is us-east-1"),
            std::string::npos)
      << result.reason;
  EXPECT_NE(result.reason.find(eu_tables_[1] +
                               ": unparseable marker: icewarden.epoch \"two\" is not a whole "
                               "number"),
            std::string::npos)
      << result.reason;
  json d = Detail(result);
  EXPECT_EQ(d["conflicting"], 1);
  EXPECT_EQ(d["invalid"], 1);
  EXPECT_EQ(d["ok"], n() - 2);
}

TEST_F(OwnershipMarkersTest, FailsWhenTheCatalogCannotBeRead) {
  Transfer();
  ASSERT_TRUE(lab_->StopRegion(kUs).ok());
  auto result = Verify(json::object(), Ctx(10s));
  ASSERT_EQ(result.outcome, ActionResult::Outcome::kFailed) << result.reason;
  EXPECT_EQ(Detail(result)["unreadable"], n()) << result.detail_json;
  EXPECT_NE(result.reason.find(": cannot read it in us-east-1: "), std::string::npos)
      << result.reason;
}

TEST_F(OwnershipMarkersTest, BadParamsAreRefusedBeforeAnythingIsRead) {
  auto check = MakeOwnershipMarkersCheck(env_);
  EXPECT_EQ(Paths(check->Validate(json{{"allow_missing", "yes"}})),
            std::vector<std::string>{"allow_missing"});
  EXPECT_EQ(Paths(check->Validate(json{{"scope", "eu"}, {"concurrency", 0}, {"owner", kEu}})),
            (std::vector<std::string>{"owner", "scope", "concurrency"}));
  auto run = check->Run(json{{"allow_missing", "yes"}}, Ctx());
  EXPECT_EQ(run.outcome, ActionResult::Outcome::kFailed);
  EXPECT_EQ(run.reason, "invalid params: allow_missing: must be true or false");
  ActionContext no_target = Ctx();
  no_target.to.clear();
  EXPECT_EQ(check->Run(json::object(), no_target).reason,
            "needs a region: no 'region' param and no 'to' region");
}

}  // namespace
}  // namespace icewarden::lab::testing
