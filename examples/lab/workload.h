// Workload: the lab's writers. Every interval, when enabled, one append commit (add-snapshot +
// set-snapshot-ref main, guarded by assert-table-uuid and assert-ref-snapshot-id) to each workload
// table in its owning region. A rogue writer enabled for a region also appends, every interval, to
// the workload tables that region holds but does not own: an old owner still accepting writes,
// which makes the region's history diverge from the owner's.
// Commits go through the region's CatalogApi in-process, so they obey the same requirements and
// write fence as REST commits but not the region's injected faults; stopped regions are not
// written to, and a region whose writes are paused refuses them (counted as refused_paused).
// Every commit that succeeds is recorded in the CommitLog.
// With a catalog gateway set for a region (SetGateways), that region's writers load and commit
// over HTTP through the gateway instead (icewarden gateway, docs/gateway.md), as engines pointed
// at it would: the gateway then decides where each commit goes, or holds it off. The rogue
// writer never uses a gateway: it is the writer that went around one.
//
// Thread-safety: all methods are safe to call from any thread; one background thread writes.
#pragma once

#include <atomic>
#include <condition_variable>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <thread>
#include <vector>

#include "examples/lab/commit_log.h"
#include "examples/lab/lab_region.h"
#include "examples/lab/replicator.h"

namespace icewarden::lab {

// The CommitTableRequest that appends one snapshot on top of `metadata`'s main branch (and
// expires the oldest snapshots beyond 100), as a writer named `writer` would send it.
json AppendCommit(const json& metadata, const std::string& writer, int64_t now_ms);

class Workload {
 public:
  // `log` must outlive the workload.
  Workload(std::vector<LabRegion*> regions, Replicator* replicator, std::vector<TableIdent> tables,
           CommitLog* log, NowMs now_ms, int interval_ms, bool enabled);
  ~Workload();

  void Start();
  void Stop();
  // One round of commits now; returns how many succeeded.
  int RunOnce();

  void SetEnabled(bool enabled) { enabled_ = enabled; }
  // region -> gateway base URL ("http://127.0.0.1:18281"); call before Start.
  void SetGateways(std::map<std::string, std::string> gateways);
  void SetIntervalMs(int interval_ms);
  // Disabling returns once the round in flight (which may still hold the old set) has ended:
  // after it, no rogue commit lands in `region`, which tests that wait for the last one rely on.
  LabStatus SetRogueWriter(const std::string& region, bool enabled);
  json ToJson() const;

 private:
  // `rogue`: the region does not own the table. True when the commit succeeded.
  bool Append(LabRegion* region, const TableIdent& table, bool rogue);
  bool AppendThroughGateway(LabRegion* region, const std::string& gateway, const TableIdent& table);
  void Record(const TableIdent& table, const std::string& region, bool rogue,
              const json& committed);
  void Loop();

  const std::vector<LabRegion*> regions_;
  Replicator* replicator_;
  const std::vector<TableIdent> tables_;
  CommitLog* log_;
  NowMs now_ms_;
  std::atomic<int> interval_ms_;
  std::atomic<bool> enabled_;
  std::atomic<int64_t> commits_{0};
  std::atomic<int64_t> conflicts_{0};       // refused for any other reason (409, 400)
  std::atomic<int64_t> refused_paused_{0};  // refused by a region's write fence
  std::atomic<int64_t> held_off_{0};        // a gateway answered 503: not now, retry later
  std::atomic<int64_t> unanswered_{0};      // a gateway gave no answer, or a 5xx other than 503
  std::map<std::string, std::string> gateways_;

  mutable std::mutex mutex_;  // guards rogue_regions_ and the thread's stop flag
  std::set<std::string> rogue_regions_;
  std::mutex round_mutex_;  // one round at a time
  std::condition_variable wake_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace icewarden::lab
