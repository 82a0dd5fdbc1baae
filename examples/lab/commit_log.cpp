#include "examples/lab/commit_log.h"

#include <algorithm>

namespace icewarden::lab {

void CommitLog::Record(LoggedCommit commit) {
  std::lock_guard lock(mutex_);
  kept_.push_back(std::move(commit));
  while (kept_.size() > capacity_) {
    kept_.pop_front();
    ++dropped_;
  }
}

nlohmann::json CommitLog::ToJson(const std::optional<std::string>& table, int64_t since) const {
  std::lock_guard lock(mutex_);
  nlohmann::json commits = nlohmann::json::array();
  int64_t first = std::max<int64_t>(since, dropped_) - dropped_;
  for (size_t i = static_cast<size_t>(first); i < kept_.size(); ++i) {
    const LoggedCommit& commit = kept_[i];
    if (table && commit.table != *table) continue;
    commits.push_back({{"index", dropped_ + static_cast<int64_t>(i)},
                       {"table", commit.table},
                       {"region", commit.region},
                       {"writer", commit.writer},
                       {"snapshot_id", commit.snapshot_id},
                       {"sequence_number", commit.sequence_number},
                       {"committed_at_ms", commit.committed_at_ms}});
  }
  return {{"commits", std::move(commits)},
          {"total", dropped_ + static_cast<int64_t>(kept_.size())},
          {"dropped", dropped_}};
}

}  // namespace icewarden::lab
