// The lab's commit log (GET /lab/commits, Lab::Commits): every commit the workload and the
// rogue writer made, in order, with the snapshot the catalog committed, so a switchover test can
// check that each one is in the new owner. Checked against the tables' metadata in the catalogs.
#include <atomic>
#include <functional>
#include <future>
#include <map>
#include <thread>
#include <vector>

#include "tests/integration/lab/lab_fixture.h"

namespace icewarden::lab::testing {
namespace {

struct WorkloadTable {
  std::string dotted, owner, ns, name;  // ns as the REST path spells it
};

const std::vector<WorkloadTable>& Tables() {
  static const std::vector<WorkloadTable> tables = {
      {"sales.orders", kUs, "sales", "orders"},
      {"sales.customers", kUs, "sales", "customers"},
      {"clickstream.events", kUs, "clickstream", "events"},
      {"eu.orders", kEu, "eu", "orders"},
      {"eu.customers", kEu, "eu", "customers"},
      {"sales.archive.orders_2024", kUs, "sales%1Farchive", "orders_2024"}};
  return tables;
}

class LabCommitLogTest : public LabTest {
 protected:
  // The workload is driven by WorkloadRoundNow: its own thread would wait a minute.
  LabCommitLogTest() : test_thread_(std::this_thread::get_id()) {
    options_.workload_interval_ms = 60'000;
  }

  void SetUp() override {
    lab_ = std::make_unique<Lab>(options_, [this] { return Now(); });
    auto status = lab_->Start();
    ASSERT_TRUE(status.ok()) << status.message();
  }

  // The wall clock. Once armed, the first read on the test's thread (in a workload round run
  // by WorkloadRoundNow: the workload's read between loading sales.orders and committing to
  // it) first appends to sales.orders over REST, so that the workload's commit conflicts.
  int64_t Now() {
    if (std::this_thread::get_id() == test_thread_ && arm_conflict_.exchange(false)) {
      auto result = Append(kUs, "sales", "orders");
      interloper_status_ = result ? result->status : -1;
    }
    if (std::this_thread::get_id() == test_thread_ && on_workload_read_) {
      auto once = std::move(on_workload_read_);
      on_workload_read_ = nullptr;
      once();
    }
    return SystemNowMs();
  }

  json GetCommits(const std::string& query, int* status = nullptr) {
    httplib::Client admin(lab_->admin_url());
    auto result = admin.Get(("/lab/commits" + query).c_str());
    if (status) *status = result ? result->status : -1;
    return result ? json::parse(result->body, nullptr, false) : json();
  }

  const std::thread::id test_thread_;
  std::atomic<bool> arm_conflict_{false};
  std::atomic<int> interloper_status_{0};
  std::function<void()> on_workload_read_;  // run once, at the test thread's next clock read
};

std::vector<int64_t> Indices(const json& log) {
  std::vector<int64_t> indices;
  for (const auto& commit : log["commits"]) indices.push_back(commit["index"]);
  return indices;
}

TEST_F(LabCommitLogTest, ListsEveryWorkloadCommitWithTheSnapshotTheCatalogCommitted) {
  lab_->SetWorkload(true, 0);
  for (int round = 0; round < 3; ++round) ASSERT_EQ(lab_->WorkloadRoundNow(), 6);

  json log = lab_->Commits();
  EXPECT_EQ(log["total"], 18);
  EXPECT_EQ(log["dropped"], 0);
  ASSERT_EQ(log["commits"].size(), 18u);
  EXPECT_EQ(lab_->State()["workload"]["commits"], 18);
  EXPECT_EQ(GetCommits(""), log);

  std::map<std::string, std::vector<json>> by_table;
  for (size_t i = 0; i < log["commits"].size(); ++i) {
    const json& commit = log["commits"][i];
    EXPECT_EQ(commit["index"], i);
    EXPECT_EQ(commit["writer"], "workload");
    by_table[commit["table"]].push_back(commit);
  }
  ASSERT_EQ(by_table.size(), Tables().size());
  for (const auto& table : Tables()) {
    SCOPED_TRACE(table.dotted);
    const auto& commits = by_table[table.dotted];
    json metadata = Metadata(table.owner, table.ns, table.name);
    ASSERT_TRUE(metadata.is_object());
    ASSERT_EQ(metadata["snapshot-log"].size(), commits.size());
    std::map<int64_t, int64_t> sequence_of;
    for (const auto& snapshot : metadata["snapshots"]) {
      sequence_of[snapshot["snapshot-id"]] = snapshot["sequence-number"];
    }
    for (size_t i = 0; i < commits.size(); ++i) {
      EXPECT_EQ(commits[i]["region"], table.owner);
      EXPECT_EQ(commits[i]["snapshot_id"], metadata["snapshot-log"][i]["snapshot-id"]);
      EXPECT_EQ(commits[i]["sequence_number"], sequence_of[commits[i]["snapshot_id"]]);
    }
    EXPECT_EQ(commits.back()["snapshot_id"], metadata["current-snapshot-id"]);
    EXPECT_EQ(commits.back()["committed_at_ms"], metadata["last-updated-ms"]);
  }
}

TEST_F(LabCommitLogTest, FiltersByTableAndStartsAtAnIndex) {
  lab_->SetWorkload(true, 0);
  for (int round = 0; round < 3; ++round) ASSERT_EQ(lab_->WorkloadRoundNow(), 6);
  json all = lab_->Commits();

  json orders = GetCommits("?table=sales.orders");
  ASSERT_EQ(orders["commits"].size(), 3u);
  for (const auto& commit : orders["commits"]) {
    EXPECT_EQ(commit["table"], "sales.orders");
    EXPECT_EQ(all["commits"][commit["index"].get<size_t>()], commit);
  }
  EXPECT_EQ(orders["total"], 18);
  EXPECT_EQ(lab_->Commits("sales.orders"), orders);
  EXPECT_EQ(lab_->Commits("eu.orders")["commits"].size(), 3u);
  EXPECT_EQ(lab_->Commits("no.such")["commits"].size(), 0u);

  EXPECT_EQ(Indices(GetCommits("?since=15")), (std::vector<int64_t>{15, 16, 17}));
  EXPECT_EQ(Indices(GetCommits("?since=18")), std::vector<int64_t>{});
  EXPECT_EQ(Indices(GetCommits("?since=1000")), std::vector<int64_t>{});
  std::vector<int64_t> later_orders = Indices(orders);
  later_orders.erase(later_orders.begin());
  EXPECT_EQ(
      Indices(GetCommits("?table=sales.orders&since=" + std::to_string(Indices(orders)[0] + 1))),
      later_orders);
  for (const char* bad : {"?since=-1", "?since=abc", "?since=", "?since=3x"}) {
    int status = 0;
    json body = GetCommits(bad, &status);
    EXPECT_EQ(status, 400) << bad;
    EXPECT_EQ(body["error"], "since must be a non-negative integer") << bad;
  }
}

TEST_F(LabCommitLogTest, CommitThatMeetsAConflictIsNotLogged) {
  lab_->SetWorkload(true, 0);
  arm_conflict_ = true;
  EXPECT_EQ(lab_->WorkloadRoundNow(), 5);
  ASSERT_EQ(interloper_status_, 200) << "the conflicting REST commit did not happen";
  EXPECT_EQ(lab_->State()["workload"]["conflicts"], 1);

  json log = lab_->Commits();
  EXPECT_EQ(log["total"], 5);
  EXPECT_EQ(lab_->Commits("sales.orders")["commits"].size(), 0u);
  // sales.orders holds the REST commit only.
  json metadata = Metadata(kUs, "sales", "orders");
  ASSERT_EQ(metadata["snapshots"].size(), 1u);
  EXPECT_EQ(metadata["snapshots"][0]["summary"]["icewarden-lab.writer"], "test");
}

TEST_F(LabCommitLogTest, RogueCommitsAreLoggedAsRogue) {
  ASSERT_TRUE(Eventually([&] { return Replicated("sales", "orders"); }));
  ASSERT_TRUE(lab_->SetRogueWriter(kEu, true).ok());
  int rogue = lab_->WorkloadRoundNow();
  ASSERT_GE(rogue, 1);
  ASSERT_TRUE(lab_->SetRogueWriter(kEu, false).ok());

  json log = lab_->Commits();
  ASSERT_EQ(log["commits"].size(), static_cast<size_t>(rogue));
  for (const auto& commit : log["commits"]) {
    EXPECT_EQ(commit["writer"], "rogue");
    EXPECT_EQ(commit["region"], kEu);
  }
  json orders = lab_->Commits("sales.orders")["commits"];
  ASSERT_EQ(orders.size(), 1u);
  EXPECT_EQ(orders[0]["snapshot_id"], Metadata(kEu, "sales", "orders")["current-snapshot-id"]);
  EXPECT_EQ(Metadata(kUs, "sales", "orders")["snapshots"].size(), 0u);

  // The owner's workload commits after them, logged as the workload's.
  lab_->SetWorkload(true, 0);
  ASSERT_EQ(lab_->WorkloadRoundNow(), 6);
  json after = lab_->Commits("sales.orders")["commits"];
  ASSERT_EQ(after.size(), 2u);
  EXPECT_EQ(after[1]["writer"], "workload");
  EXPECT_EQ(after[1]["region"], kUs);
  EXPECT_EQ(after[1]["snapshot_id"], Metadata(kUs, "sales", "orders")["current-snapshot-id"]);
}

// Disabling the rogue writer while a round is writing with it returns only once that round has
// ended: after the call, no rogue commit lands (tests wait for the last one on this promise).
TEST_F(LabCommitLogTest, DisablingTheRogueWriterReturnsAfterItsLastCommit) {
  ASSERT_TRUE(Eventually([&] { return Replicated("sales", "orders"); }));
  ASSERT_TRUE(lab_->SetRogueWriter(kEu, true).ok());
  std::future<json> total_when_disabled;
  on_workload_read_ = [&] {  // inside the round, before its first commit
    total_when_disabled = std::async(std::launch::async, [&] {
      EXPECT_TRUE(lab_->SetRogueWriter(kEu, false).ok());
      return lab_->Commits()["total"];
    });
    // Time for a disable that does not wait to return while the round is still writing; one
    // that waits cannot return before this round ends, however long this is.
    total_when_disabled.wait_for(std::chrono::milliseconds(300));
  };
  const int rogue = lab_->WorkloadRoundNow();
  ASSERT_GE(rogue, 1);
  ASSERT_TRUE(total_when_disabled.valid());
  EXPECT_EQ(total_when_disabled.get(), rogue) << "a rogue commit landed after the disable";
  EXPECT_EQ(lab_->WorkloadRoundNow(), 0) << "and none after it";
}

}  // namespace
}  // namespace icewarden::lab::testing
