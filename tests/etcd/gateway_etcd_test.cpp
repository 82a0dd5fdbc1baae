// The gateway on an etcd state store: it learns a failover entering fencing, and a table's move,
// from the store's watch (its poll is set to a minute, so nothing else can explain a refusal
// or a new owner within seconds), and
// while etcd is down it refuses every commit with 503 and Retry-After instead of guessing.
#include <gtest/gtest.h>

#include "state/etcd_store.h"
#include "tests/etcd/etcd_member.h"
#include "tests/gateway/gateway_fixture.h"

namespace icewarden::lab::testing {
namespace {

class GatewayOnEtcdTest : public GatewayTest {
 protected:
  void SetUp() override {
    LabTest::SetUp();
    if (HasFatalFailure()) return;
    etcd_ = std::make_unique<icewarden::testing::EtcdMember>();
    ASSERT_TRUE(etcd_->WaitReady()) << "etcd did not start";
    auto store = OpenEtcdStore(std::make_shared<EtcdClient>(EtcdClientOptions{{etcd_->url()}}),
                               EtcdStoreOptions{}, SystemClock());
    ASSERT_TRUE(store.ok()) << store.status().message();
    store_ = std::move(store).value();
    ASSERT_NO_FATAL_FAILURE(ClaimSeededTables());
    // store_poll a minute: a change seen within seconds came through the watch.
    WriteConfig("state:\n  backend: etcd\n  etcd:\n    endpoints: [" + etcd_->url() + "]\n",
                "  - name: gw-us\n    region: us-east-1\n    listen: 127.0.0.1:0\n"
                "    store_poll: 60s\n");
  }
  void TearDown() override {
    GatewayTest::TearDown();
    etcd_.reset();
  }

  // A commit through `gw` until it is refused with 503 (bounded); the refusal.
  std::optional<httplib::Result> RefusedVia(const std::string& gw, const std::string& ns,
                                            const std::string& table) {
    std::optional<httplib::Result> refused;
    const bool seen = Eventually(
        [&] {
          refused.emplace(AppendVia(gw, ns, table));
          return *refused && (*refused)->status == 503;
        },
        10s);
    if (!seen) return std::nullopt;
    return refused;
  }

  std::unique_ptr<icewarden::testing::EtcdMember> etcd_;
};

TEST_F(GatewayOnEtcdTest, AFailoverEnteringFencingIsLearnedThroughTheWatchNotThePoll) {
  const std::string gw = StartGateway("gw-us");
  lab_->PauseReplication();
  PutFailover("fo-1", FailoverPhase::kApproved);
  auto before = AppendVia(gw, "sales", "orders");
  ASSERT_TRUE(before);
  EXPECT_EQ(before->status, 200) << "approved does not close yet: " << before->body;

  PutFailover("fo-1", FailoverPhase::kFencing);
  // The next poll is a minute away: only the watch can close the scope now.
  auto refused = RefusedVia(gw, "sales", "orders");
  ASSERT_TRUE(refused) << "the gateway did not learn of fencing within 10 s (store_poll 60s)";
  EXPECT_EQ((*refused)->get_header_value("Retry-After"), "1");
  EXPECT_NE(Error(*refused)["message"].get<std::string>().find("fo-1"), std::string::npos)
      << (*refused)->body;
  auto closure = To(gw)->Get("/icewarden/v1/closures/fo-1");
  ASSERT_TRUE(closure);
  json c = json::parse(closure->body);
  EXPECT_EQ(c["confirmed"], true) << c.dump();
  EXPECT_EQ(AppendVia(gw, "eu", "orders")->status, 200) << "outside the scope: still open";
}

// The gateway keeps the ownership rows it read until the store changes (write_admission.h):
// a move of the table, with the poll a minute away, must reach it through the watch, or its
// next commit would go to the region the table left.
TEST_F(GatewayOnEtcdTest, AnOwnershipMoveReachesTheKeptRowsThroughTheWatch) {
  const std::string gw = StartGateway("gw-us");
  for (int i = 0; i < 2; ++i) {
    auto first = AppendVia(gw, "sales", "orders");
    ASSERT_TRUE(first);
    ASSERT_EQ(first->status, 200) << first->body;
    EXPECT_EQ(first->get_header_value("X-Icewarden-Region"), kUs);
    EXPECT_EQ(first->get_header_value("X-Icewarden-Epoch"), "1");
  }
  auto metrics = To(gw)->Get("/metrics");
  ASSERT_TRUE(metrics);
  EXPECT_EQ(metrics->body.find("icewarden_gateway_ownership_reads_total{source=\"kept\"} 0\n"),
            std::string::npos)
      << "the second commit's rows came from those kept: " << metrics->body;

  Move("sales.orders", kEu, "fo-1");
  httplib::Result moved{nullptr, httplib::Error::Unknown};
  EXPECT_TRUE(Eventually(
      [&] {
        moved = AppendVia(gw, "sales", "orders");
        return moved && moved->status == 200 && moved->get_header_value("X-Icewarden-Epoch") == "2";
      },
      10s))
      << "the gateway kept deciding by the row of epoch 1 (store_poll 60s): "
      << (moved ? "status " + std::to_string(moved->status) + ", epoch " +
                      moved->get_header_value("X-Icewarden-Epoch")
                : std::string("no answer"));
  if (moved) {
    EXPECT_EQ(moved->get_header_value("X-Icewarden-Region"), kEu);
  }
}

TEST_F(GatewayOnEtcdTest, WhileEtcdIsDownEveryCommitIsRefusedWithRetryAfter) {
  const std::string gw = StartGateway("gw-us");
  auto open = AppendVia(gw, "eu", "orders");
  ASSERT_TRUE(open);
  EXPECT_EQ(open->status, 200) << open->body;
  // The table's metadata now, so that the commits below need no load through the gateway.
  auto loaded = To(gw)->Get(TablePath("eu", "orders"));
  ASSERT_TRUE(loaded && loaded->status == 200);
  const json metadata = json::parse(loaded->body)["metadata"];
  auto commit = [&] {
    return To(gw)->Post(TablePath("eu", "orders"),
                        AppendCommit(metadata, "gateway-test", SystemNowMs()).dump(),
                        "application/json");
  };

  etcd_->Kill();
  // eu.orders is in nobody's failover: only the unreadable store can refuse it.
  std::optional<httplib::Result> refused;
  ASSERT_TRUE(Eventually(
      [&] {
        refused.emplace(commit());
        return *refused && (*refused)->status == 503;
      },
      10s))
      << "the gateway kept admitting commits with etcd down";
  EXPECT_EQ((*refused)->get_header_value("Retry-After"), "1");
  EXPECT_EQ(Snapshots(kEu, "eu", "orders"), metadata["snapshots"].size())
      << "nothing reached the catalog";

  etcd_->Restart();
  ASSERT_TRUE(etcd_->WaitReady());
  EXPECT_TRUE(Eventually(
      [&] {
        auto r = AppendVia(gw, "eu", "orders");
        return r && r->status == 200;
      },
      10s))
      << "etcd is back, and the watch with it: the gateway admits again";
}

}  // namespace
}  // namespace icewarden::lab::testing
