// CommitQueue: writes to one table through one gateway go to the catalog one at a time, in
// the order they arrived. Two engines committing to a table at once then meet at most one
// requirement failure (409) per real conflict, instead of both failing, reloading and
// colliding again. Writes to different tables do not wait for each other.
//
// A write that names several tables (a transaction, a rename) takes its turns in table order,
// so two such writes cannot each hold a table the other waits for. A table already holding
// max_waiting writes refuses the next (the caller answers 503 with Retry-After), and a write
// that waited max_wait gives its place up: both bound what a burst costs the gateway's threads.
// Thread-safety: every method may be called from any thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "state/types.h"

namespace icewarden {

class CommitQueue {
  struct Lane;

 public:
  explicit CommitQueue(int max_waiting_per_table);
  ~CommitQueue();

  // Holds the turns of one write; releasing (or destroying) it lets the next write of each
  // table go.
  class Turn {
   public:
    Turn() = default;
    Turn(Turn&&) noexcept;
    Turn& operator=(Turn&&) noexcept;
    ~Turn();
    void Release();

   private:
    friend class CommitQueue;
    CommitQueue* queue_ = nullptr;
    std::vector<std::pair<std::shared_ptr<Lane>, std::uint64_t>> held_;
  };

  enum class Refusal { kNone, kFull, kTimedOut };
  // Blocks until it is this write's turn for every table. On kFull or kTimedOut nothing is held.
  Turn Enter(const std::vector<TableIdent>& tables, std::chrono::milliseconds max_wait,
             Refusal* refusal);

  // Writes waiting for their turn (not counting those being sent).
  std::size_t Waiting() const;

 private:
  void Leave(const std::shared_ptr<Lane>& lane, std::uint64_t ticket);
  void Forget(const std::string& key, const std::shared_ptr<Lane>& lane);

  const int max_waiting_;
  mutable std::mutex mu_;
  std::map<std::string, std::shared_ptr<Lane>> lanes_;  // by table, only while in use
  std::size_t waiting_ = 0;
};

}  // namespace icewarden
