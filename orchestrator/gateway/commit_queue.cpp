#include "orchestrator/gateway/commit_queue.h"

#include <algorithm>
#include <condition_variable>
#include <set>

namespace icewarden {

struct CommitQueue::Lane {
  std::string key;
  std::uint64_t next_ticket = 0;      // handed to the next arrival
  std::uint64_t serving = 0;          // whose turn it is
  std::set<std::uint64_t> abandoned;  // tickets whose writer gave up waiting
  int users = 0;                      // holding or waiting
  std::condition_variable turn;
};

CommitQueue::CommitQueue(int max_waiting_per_table) : max_waiting_(max_waiting_per_table) {}
CommitQueue::~CommitQueue() = default;

CommitQueue::Turn::Turn(Turn&& other) noexcept
    : queue_(other.queue_), held_(std::move(other.held_)) {
  other.queue_ = nullptr;
  other.held_.clear();
}

CommitQueue::Turn& CommitQueue::Turn::operator=(Turn&& other) noexcept {
  if (this != &other) {
    Release();
    queue_ = other.queue_;
    held_ = std::move(other.held_);
    other.queue_ = nullptr;
    other.held_.clear();
  }
  return *this;
}

CommitQueue::Turn::~Turn() { Release(); }

void CommitQueue::Turn::Release() {
  if (queue_ == nullptr) return;
  // In reverse: the last table taken is the first given back.
  for (auto it = held_.rbegin(); it != held_.rend(); ++it) queue_->Leave(it->first, it->second);
  held_.clear();
  queue_ = nullptr;
}

void CommitQueue::Leave(const std::shared_ptr<Lane>& lane, std::uint64_t ticket) {
  std::lock_guard lock(mu_);
  if (lane->serving == ticket) {
    ++lane->serving;
    while (lane->abandoned.erase(lane->serving) > 0) ++lane->serving;
  } else {
    lane->abandoned.insert(ticket);
  }
  lane->turn.notify_all();
  Forget(lane->key, lane);
}

void CommitQueue::Forget(const std::string& key, const std::shared_ptr<Lane>& lane) {
  if (--lane->users == 0) lanes_.erase(key);
}

CommitQueue::Turn CommitQueue::Enter(const std::vector<TableIdent>& tables,
                                     std::chrono::milliseconds max_wait, Refusal* refusal) {
  *refusal = Refusal::kNone;
  std::vector<std::string> keys;
  for (const TableIdent& t : tables) keys.push_back(t.NamespaceKey() + '\0' + t.name);
  std::sort(keys.begin(), keys.end());
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());

  Turn turn;
  turn.queue_ = this;
  const auto deadline = std::chrono::steady_clock::now() + max_wait;
  std::unique_lock lock(mu_);
  for (const std::string& key : keys) {
    auto& slot = lanes_[key];
    if (!slot) {
      slot = std::make_shared<Lane>();
      slot->key = key;
    }
    std::shared_ptr<Lane> lane = slot;
    // Waiting: holders and waiters but the one being served.
    if (lane->users - (lane->users > 0 ? 1 : 0) >= max_waiting_) {
      *refusal = Refusal::kFull;
      lock.unlock();
      turn.Release();
      return Turn();
    }
    const std::uint64_t ticket = lane->next_ticket++;
    ++lane->users;
    ++waiting_;
    const bool mine =
        lane->turn.wait_until(lock, deadline, [&] { return lane->serving == ticket; });
    --waiting_;
    if (!mine) {
      // Giving the place up: when the turn comes, it passes on at once.
      lane->abandoned.insert(ticket);
      Forget(key, lane);
      *refusal = Refusal::kTimedOut;
      lock.unlock();
      turn.Release();
      return Turn();
    }
    turn.held_.emplace_back(std::move(lane), ticket);
  }
  return turn;
}

std::size_t CommitQueue::Waiting() const {
  std::lock_guard lock(mu_);
  return waiting_;
}

}  // namespace icewarden
