// WriteFence: one region's "pause writes" switch, the lab's stand-in for a writer gateway that
// stops admitting writes so that a switchover can let replicas catch up. Data writes (table
// creates, commits that add or move snapshots) hold a Pass while they apply; pausing refuses
// new passes and waits for the ones held, so once SetPaused(true) returns no data write applies
// in the region until SetPaused(false). Commits that only set or remove table properties take
// no pass: they add no data, and the orchestrator writes its ownership claim through a fenced
// region. Replication copies metadata into the store directly and is not a write here.
// In memory only: a lab that restarts starts with every region's writes open.
//
// Thread-safety: every method is safe to call from any thread.
#pragma once

#include <condition_variable>
#include <mutex>
#include <nlohmann/json.hpp>

namespace icewarden::lab {

// True when a CommitTableRequest changes nothing but table properties (every update is
// set-properties or remove-properties, or there are none); false for anything else, malformed
// requests included.
bool ChangesOnlyProperties(const nlohmann::json& commit_request);

class WriteFence {
 public:
  // One data write inside the fence, for its scope. Not admitted while writes are paused; the
  // write must then not apply.
  class Pass {
   public:
    explicit Pass(WriteFence& fence);
    ~Pass();
    Pass(const Pass&) = delete;
    Pass& operator=(const Pass&) = delete;
    bool admitted() const { return admitted_; }

   private:
    WriteFence& fence_;
    bool admitted_ = false;
  };

  // Pausing returns once every pass held has been released; resuming returns at once.
  void SetPaused(bool paused);
  bool paused() const;

 private:
  mutable std::mutex mutex_;
  std::condition_variable released_;  // with mutex_: a pass was released
  bool paused_ = false;
  int passes_ = 0;  // held now
};

}  // namespace icewarden::lab
