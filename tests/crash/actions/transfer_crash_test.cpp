// Kills ownership.transfer (SIGKILL: no destructors, no flush) at several points of its
// progress, restarts it, and checks what a resume must guarantee: every table of the scope
// ends owned by the new region at exactly one epoch more (moved once, never twice), with its
// marker in the new owner's catalog, and the store's audit counts each table in exactly one
// batch. The lab runs in this process; the transfer runs in tests/helpers/transfer_crash_runner.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "state/sqlite_store.h"
#include "tests/fakes/subprocess.h"
#include "tests/fakes/test_paths.h"
#include "tests/integration/lab/lab_fixture.h"

namespace icewarden::lab::testing {
namespace {

using namespace std::chrono_literals;
using ::icewarden::testing::HelperBinary;
using ::icewarden::testing::RunCommand;
using ::icewarden::testing::Subprocess;

class TransferCrashTest : public LabTest {
 protected:
  TransferCrashTest() {
    options_.seed_tables = 150;
    options_.replication_lag_ms = 0;
  }

  void SetUp() override {
    LabTest::SetUp();
    if (HasFatalFailure()) return;
    db_ = options_.data_dir + "/state.db";
    json tables;
    ASSERT_TRUE(Eventually(
        [&] {
          tables = lab_->State()["tables"];
          if (tables.size() < 6u + options_.seed_tables) return false;
          for (const auto& t : tables) {
            const json& replica = t["regions"][t["owner"] == kUs ? kEu : kUs];
            if (!replica.value("present", false) || replica.value("pending_commits", 1) != 0)
              return false;
          }
          return true;
        },
        60s));
    auto store = OpenSqliteStore({.path = db_}, SystemClock());
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    for (const auto& t : tables) {
      std::string owner = t["owner"];
      ::icewarden::OwnershipChange claim{
          *::icewarden::TableIdent::Parse(t["table"].get<std::string>()), 0, owner, ""};
      ASSERT_TRUE((*store)->CompareAndSetOwnership(std::span(&claim, 1), {}).ok());
      if (owner == kUs) moving_.insert(t["table"].get<std::string>());
    }
    ASSERT_GE(moving_.size(), 100u);
    // Slow enough commits that a kill lands while markers are being written.
    ASSERT_TRUE(lab_->PatchFaults(kEu, {{"commit_latency_ms", 15}}).ok());
  }

  // Rows this failover has moved so far.
  int Moved() {
    auto store = OpenSqliteStore({.path = db_}, SystemClock());
    if (!store.ok()) return -1;
    auto rows = (*store)->ListOwnership({.owner = std::string(kEu), .limit = 0});
    if (!rows.ok()) return -1;
    int n = 0;
    for (const auto& r : *rows) n += r.failover_id == "fo-crash" ? 1 : 0;
    return n;
  }

  std::string db_;
  std::set<std::string> moving_;
};

TEST_F(TransferCrashTest, KilledAnywhereAndResumedEveryTableMovesExactlyOnce) {
  const int total = static_cast<int>(moving_.size());
  std::vector<int> moved_at_kill;
  // Kill at growing progress: before the first batch is durable, then part-way through.
  for (double fraction : {0.0, 0.15, 0.4, 0.7}) {
    Subprocess runner({HelperBinary("transfer_crash_runner"), db_, lab_->region_url(kEu)});
    const int target = static_cast<int>(fraction * total);
    auto deadline = std::chrono::steady_clock::now() + 60s;
    while (Moved() < target && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(2ms);
    runner.Signal(SIGKILL);
    ASSERT_TRUE(runner.Wait(10s).has_value());
    moved_at_kill.push_back(Moved());
  }
  std::printf("moved at each kill: %s of %d\n", ::testing::PrintToString(moved_at_kill).c_str(),
              total);
  // At least one kill stopped it part-way: otherwise this test proved nothing.
  EXPECT_TRUE(std::any_of(moved_at_kill.begin(), moved_at_kill.end(), [&](int m) {
    return m > 0 && m < total;
  })) << ::testing::PrintToString(moved_at_kill);

  auto last =
      RunCommand({HelperBinary("transfer_crash_runner"), db_, lab_->region_url(kEu)}, {}, 120s);
  ASSERT_EQ(last.exit_code, 0) << last.out << last.err;
  ASSERT_NE(last.out.find("END succeeded"), std::string::npos) << last.out;

  auto store = OpenSqliteStore({.path = db_}, SystemClock());
  ASSERT_TRUE(store.ok());
  for (const auto& dotted : moving_) {
    auto row = (*store)->GetOwnership(*::icewarden::TableIdent::Parse(dotted));
    ASSERT_TRUE(row.ok() && row->has_value()) << dotted;
    EXPECT_EQ((*row)->owner, kEu) << dotted;
    EXPECT_EQ((*row)->epoch, 2) << dotted << ": moved more than once";
    EXPECT_EQ((*row)->failover_id, "fo-crash") << dotted;
    json state = TableState(dotted);
    EXPECT_EQ(state["owner"], kEu) << dotted << " " << state;
    EXPECT_EQ(state["owner_source"], "property") << dotted;
    EXPECT_EQ(state["epoch"], 2) << dotted << ": marker";
  }
  // Every table of the scope is in exactly one durable batch.
  auto audit = (*store)->ListAudit({.limit = 100000});
  ASSERT_TRUE(audit.ok());
  int in_batches = 0;
  for (const auto& e : *audit) {
    if (e.action != "ownership.transfer") continue;
    in_batches += json::parse(e.detail_json).value("tables", 0);
  }
  EXPECT_EQ(in_batches, total);
}

}  // namespace
}  // namespace icewarden::lab::testing
