// iceberg-js (npm), a real third-party Iceberg REST client, writing through `icewarden gateway`
// in the whole lab stack (tests/e2e/lab_stack.h): real failovers by `icewarden serve` with
// examples/runbooks/gateway-failover.yaml, whose first fence step is gateway.fence. The client
// runs as an engine would (tests/gateway/js/client.mjs), configured once with a gateway's URL.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <mutex>
#include <regex>
#include <thread>

#include "tests/gateway/gateway_e2e_fixture.h"

namespace icewarden::testing {
namespace {

using nlohmann::json;
using ::testing::Contains;
using namespace std::chrono_literals;

class IcebergJsTest : public GatewayE2eTest {
 protected:
  void SetUp() override {
    ASSERT_TRUE(std::filesystem::exists(SourceDir() + "/tests/gateway/js/node_modules/iceberg-js"))
        << "scripts/setup.sh runs npm ci in tests/gateway/js";
    GatewayE2eTest::SetUp();
  }

  // One client.mjs command against `base` (a gateway, or a catalog straight); its JSON line.
  json Js(const std::string& base, const std::vector<std::string>& args) {
    std::vector<std::string> argv{"/usr/bin/env", "node",
                                  SourceDir() + "/tests/gateway/js/client.mjs", base, "lab"};
    argv.insert(argv.end(), args.begin(), args.end());
    CommandResult r = RunCommand(argv, {{"RETRIES", "60"}}, 90s);
    const auto last = r.out.find_last_of('\n', r.out.size() >= 2 ? r.out.size() - 2 : 0);
    json j =
        json::parse(last == std::string::npos ? r.out : r.out.substr(last + 1), nullptr, false);
    if (!j.is_object()) ADD_FAILURE() << "client.mjs said: " << r.out << r.err;
    return j.is_object() ? j : json::object();
  }
};

TEST_F(IcebergJsTest, CreatesListsLoadsAndCommitsThroughTheGateway) {
  const std::string gw = Gateway("gw-us");
  json config = Js(gw, {"config"});
  ASSERT_TRUE(config["ok"]) << config.dump();
  EXPECT_EQ(config["result"]["overrides"]["uri"], gw) << "the client stays on the gateway";

  json created = Js(gw, {"create", "sales", "js_orders"});
  ASSERT_TRUE(created["ok"]) << created.dump();
  EXPECT_THAT(created["regions"], Contains(kLabUs)) << "sales.* is us-east-1's by the rules";
  json tables = Js(gw, {"tables", "sales"});
  ASSERT_TRUE(tables["ok"]) << tables.dump();
  EXPECT_THAT(tables["result"]["identifiers"],
              Contains(json{{"namespace", {"sales"}}, {"name", "js_orders"}}));

  json appended = Js(gw, {"append", "sales", "js_orders", "7001"});
  ASSERT_TRUE(appended["ok"]) << appended.dump();
  json loaded = Js(gw, {"load", "sales", "js_orders"});
  ASSERT_TRUE(loaded["ok"]) << loaded.dump();
  EXPECT_EQ(loaded["result"]["current"], 7001);
  EXPECT_EQ(Count(History(kLabUs, "sales", "js_orders").first, 7001), 1);
}

// A failover while the client writes: the commit it sends in the fence window is held off with
// 503 + Retry-After, retried by the client, and lands once in the new owner; the next commit
// goes there without reconfiguring anything. A stale writer straight at the old catalog is
// caught by the split-brain watch; the same writer through a gateway is refused with 409.
TEST_F(IcebergJsTest, AFailoverMovesTheClientsCommitsAndOneSentWhileFencingLandsOnce) {
  WaitUntilSettled();
  const std::string gw = Gateway("gw-us");
  json before = Js(gw, {"append", "sales", "orders", "8001"});
  ASSERT_TRUE(before["ok"]) << before.dump();
  EXPECT_EQ(before["regions"].back(), kLabUs);
  ASSERT_TRUE(
      Eventually([&] { return Count(History(kLabEu, "sales", "orders").first, 8001); }, 30s))
      << "replicated to eu-central-1";

  const std::string id = ProposeUsToEu();
  ASSERT_FALSE(id.empty());
  ASSERT_EQ(stack_->Cli({"failover", "approve", id, "--reason", "planned", "--yes"}, "approver")
                .exit_code,
            0);
  // The gateways close the scope as they read `fencing`; the quiet window (3 s) follows.
  ASSERT_TRUE(Eventually(
      [&] {
        httplib::Client c(gw);
        auto r = c.Get("/icewarden/v1/closures/" + id);
        return r && r->status == 200 && json::parse(r->body).value("confirmed", false);
      },
      30s))
      << Failover(id).dump(2);
  json during = Js(gw, {"append", "sales", "orders", "8002"});
  ASSERT_TRUE(during["ok"]) << during.dump();
  EXPECT_THAT(during["statuses"], Contains(503)) << "sent in the fence window: " << during.dump();
  EXPECT_GT(during["retried"].get<int>(), 0);
  EXPECT_EQ(during["regions"].back(), kLabEu) << during.dump();

  CommandResult watched = stack_->Cli({"failover", "watch", id, "--timeout", "90"}, "viewer", 100s);
  ASSERT_EQ(watched.exit_code, 0) << watched.out << watched.err << Failover(id).dump(2);
  json f = Failover(id);
  bool closed = false;
  for (const json& s : f["steps"])
    closed = closed || (s["step_id"] == "close-gateways" && s["state"] == "succeeded");
  EXPECT_TRUE(closed) << f.dump(2);

  auto [eu, eu_log] = History(kLabEu, "sales", "orders");
  EXPECT_EQ(Count(eu, 8002), 1) << "landed once in the new owner";
  EXPECT_EQ(Count(eu_log, 8002), 1);
  EXPECT_EQ(Count(History(kLabUs, "sales", "orders").first, 8002), 0) << "never in the old one";

  json after = Js(gw, {"append", "sales", "orders", "8003"});
  ASSERT_TRUE(after["ok"]) << after.dump();
  EXPECT_EQ(after["regions"].back(), kLabEu);
  EXPECT_EQ(Count(History(kLabEu, "sales", "orders").first, 8003), 1);

  // A writer pinned to us-east-1 through a gateway: refused, told where the table is now.
  json pinned = Js(Gateway("gw-us-stale"), {"append", "sales", "orders", "8004"});
  EXPECT_FALSE(pinned["ok"]) << pinned.dump();
  EXPECT_EQ(pinned["status"], 409) << pinned.dump();
  EXPECT_THAT(pinned["error"].get<std::string>(), ::testing::HasSubstr("eu-central-1"));
  EXPECT_EQ(Count(History(kLabUs, "sales", "orders").first, 8004), 0);

  // The same writer straight at the old catalog commits there, and the watch catches it.
  json stale = Js(stack_->region_url(kLabUs), {"append", "sales", "orders", "8005"});
  ASSERT_TRUE(stale["ok"]) << stale.dump();
  ASSERT_TRUE(Eventually([&] { return Fenced(kLabUs); }, 30s))
      << "the split-brain watch fences the second writer";
}

// Two clients commit to one table through two gateways in two regions at once: each commit
// that succeeds lands exactly once, in the owner; none is committed in the other region.
TEST_F(IcebergJsTest, TwoWritersThroughTwoGatewaysLandOnlyInTheOwner) {
  WaitUntilSettled();
  ASSERT_EQ(stack_->LabAdmin("POST", "/lab/replication/pause").status, 200);
  const auto eu_before = History(kLabEu, "sales", "orders").first;
  std::map<long long, bool> landed;  // id -> the client was told it committed
  std::mutex mu;
  auto writer = [&](const std::string& gateway, long long first) {
    for (long long id = first; id < first + 5; ++id) {
      json r = Js(gateway, {"append", "sales", "orders", std::to_string(id)});
      std::lock_guard lock(mu);
      landed[id] = r.value("ok", false);
      if (r.value("ok", false)) {
        EXPECT_EQ(r["regions"].back(), kLabUs) << r.dump();
      }
    }
  };
  const long long logged_before = stack_->LabAdmin("GET", "/lab/commits").body["total"];
  std::thread a(writer, Gateway("gw-us"), 9100);
  std::thread b(writer, Gateway("gw-eu"), 9200);
  a.join();
  b.join();
  const auto us = History(kLabUs, "sales", "orders").first;
  int ok = 0;
  for (const auto& [id, committed] : landed) {
    ok += committed;
    EXPECT_EQ(Count(us, id), committed ? 1 : 0) << id;
  }
  EXPECT_GE(ok, 5) << "the queue lets most through; a conflict fails one, not both";
  // The lab's workload wrote alongside through both gateways: its commits too are in the owner,
  // once each.
  json log = stack_
                 ->LabAdmin("GET", "/lab/commits?table=sales.orders&since=" +
                                       std::to_string(logged_before))
                 .body;
  int workload = 0;
  for (const json& c : log["commits"]) {
    ++workload;
    EXPECT_EQ(c["region"], kLabUs) << c.dump();
    EXPECT_EQ(Count(us, c["snapshot_id"].get<long long>()), 1) << c.dump();
  }
  EXPECT_GT(workload, 0) << "the workload committed meanwhile";
  EXPECT_EQ(History(kLabEu, "sales", "orders").first, eu_before)
      << "nothing was committed in eu-central-1";
}

}  // namespace
}  // namespace icewarden::testing
