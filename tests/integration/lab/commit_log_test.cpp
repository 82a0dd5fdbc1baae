// The lab's CommitLog: entries numbered from 0 in commit order, the newest `capacity` kept and
// the evicted ones counted, filtered by table and by a first index. A log that renumbered after
// eviction would make a poller (since=previous total) skip or repeat commits.
#include <gtest/gtest.h>

#include <vector>

#include "examples/lab/commit_log.h"

namespace icewarden::lab {
namespace {

std::vector<int64_t> Field(const nlohmann::json& log, const char* key) {
  std::vector<int64_t> values;
  for (const auto& commit : log["commits"]) values.push_back(commit[key]);
  return values;
}

TEST(LabCommitLog, KeepsTheNewestAndNumbersThemFromTheFirstCommitEver) {
  CommitLog log(3);
  for (int i = 0; i < 5; ++i) {
    log.Record(
        {i % 2 ? "sales.orders" : "eu.orders", "us-east-1", "workload", 100 + i, i + 1, 1000 + i});
  }
  nlohmann::json all = log.ToJson(std::nullopt, 0);
  EXPECT_EQ(all["total"], 5);
  EXPECT_EQ(all["dropped"], 2);
  EXPECT_EQ(Field(all, "index"), (std::vector<int64_t>{2, 3, 4}));
  EXPECT_EQ(Field(all, "snapshot_id"), (std::vector<int64_t>{102, 103, 104}));
  EXPECT_EQ(all["commits"][0], (nlohmann::json{{"index", 2},
                                               {"table", "eu.orders"},
                                               {"region", "us-east-1"},
                                               {"writer", "workload"},
                                               {"snapshot_id", 102},
                                               {"sequence_number", 3},
                                               {"committed_at_ms", 1002}}));

  EXPECT_EQ(Field(log.ToJson(std::nullopt, 4), "index"), (std::vector<int64_t>{4}));
  EXPECT_EQ(Field(log.ToJson(std::nullopt, 5), "index"), std::vector<int64_t>{});
  EXPECT_EQ(Field(log.ToJson("sales.orders", 0), "index"), (std::vector<int64_t>{3}));
  EXPECT_EQ(Field(log.ToJson("eu.orders", 3), "index"), (std::vector<int64_t>{4}));
  EXPECT_EQ(log.ToJson("eu.orders", 3)["total"], 5);
}

TEST(LabCommitLog, EmptyLog) {
  CommitLog log;
  EXPECT_EQ(log.ToJson(std::nullopt, 0),
            (nlohmann::json{{"commits", nlohmann::json::array()}, {"total", 0}, {"dropped", 0}}));
}

}  // namespace
}  // namespace icewarden::lab
