// CommitLog: every commit the lab's own writers (the workload and the rogue writer) made, in
// the order they made them, so that a test can check that each one reached the region that
// owns the table now. Only successful commits are logged, with the snapshot the catalog
// committed. Entries are numbered from 0 in commit order; the newest `capacity` are kept and
// the older ones are counted as dropped. In memory only.
//
// Thread-safety: every method is safe to call from any thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace icewarden::lab {

struct LoggedCommit {
  std::string table;   // dotted: sales.archive.orders_2024
  std::string region;  // where it was committed
  std::string writer;  // "workload" or "rogue"
  int64_t snapshot_id = -1;
  int64_t sequence_number = -1;
  int64_t committed_at_ms = 0;  // the metadata's last-updated-ms
};

class CommitLog {
 public:
  static constexpr size_t kDefaultCapacity = 100'000;

  explicit CommitLog(size_t capacity = kDefaultCapacity) : capacity_(capacity) {}

  void Record(LoggedCommit commit);

  // {"commits":[{"index",...LoggedCommit fields}],"total","dropped"}: the kept entries with an
  // index >= `since`, of `table` only when given, oldest first. total counts every commit
  // logged (all tables; the next entry's index), dropped the ones no longer kept.
  nlohmann::json ToJson(const std::optional<std::string>& table, int64_t since) const;

 private:
  const size_t capacity_;
  mutable std::mutex mutex_;
  std::deque<LoggedCommit> kept_;  // kept_[i] has index dropped_ + i
  int64_t dropped_ = 0;
};

}  // namespace icewarden::lab
