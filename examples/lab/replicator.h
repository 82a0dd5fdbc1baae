// Replicator: copies every table's commits from its owning region to every other region, each
// commit becoming visible in a replica `lag_ms` after it was made in the owner (same metadata
// files, table-uuid, snapshot ids, refs, logs and properties; the table and its namespaces are
// created in the replica when missing). A table the owner dropped or renamed away is dropped in
// the replicas `lag_ms` after (a rename's destination arrives as a new table); views are
// copied and dropped the same way. A replica whose pointer is not in the owner's history
// (someone committed there: a rogue writer, a promotion) has diverged; it is reported and never
// overwritten here (a rewind, see rewind.h, re-seeds it on request). Stopped regions are skipped as
// sources and as targets, and catch up on restart.
//
// A pass reads every head only when it must (the first pass, a region stopped or started, a
// change of the ownership rules or of the lag, a resume, a pass that failed, the change log
// outrun); otherwise it looks only at the tables whose head changed in any region since the
// last pass (CatalogStore::ChangedSince) and at those left waiting for a commit to become
// visible, once it can be. So a pass costs what changed, not the number of tables.
//
// Thread-safety: all methods are safe to call from any thread; one background thread runs passes.
#pragma once

#include <atomic>
#include <condition_variable>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <thread>
#include <vector>

#include "examples/lab/lab_region.h"
#include "examples/lab/ownership.h"

namespace icewarden::lab {

using nlohmann::json;

class Replicator {
 public:
  Replicator(std::vector<LabRegion*> regions, Ownership* ownership, NowMs now_ms, int lag_ms);
  ~Replicator();

  void Start();
  void Stop();
  // One replication pass now, unless paused (the background thread runs one every 50 ms).
  void RunOnce();

  void Pause();
  void Resume();
  bool paused() const { return paused_; }
  void SetLagMs(int lag_ms) {
    lag_ms_ = lag_ms;
    read_all_ = true;
  }
  int lag_ms() const { return lag_ms_; }

  // The owner of every table known to any region, from its claims in every region.
  std::map<TableIdent, OwnerDecision> Owners();
  // One table's owner now, from its heads in every region (what a writer decides right before
  // it commits); nullopt when no region holds the table.
  std::optional<OwnerDecision> OwnerOf(const TableIdent& table);
  // Per table: owner (and why), per region metadata-location and current snapshot, and per
  // replica the commits not yet replicated and whether it has diverged.
  json Status();

 private:
  // Every region's heads (stopped regions included: their properties still count as claims).
  std::map<TableIdent, std::map<std::string, TableHead>> CollectHeads();
  OwnerDecision Decide(const TableIdent& table, const std::map<std::string, TableHead>& heads);
  LabRegion* Find(const std::string& name);
  void Loop();
  // What a pass saw as it started: each region's change log position (taken before its heads
  // are read, so a change made during the pass is seen by the next) and whether it was up.
  struct PassStart {
    std::map<std::string, uint64_t> cursors;
    std::map<std::string, bool> up;
    uint64_t rules_version = 0;
  };
  // Whether this pass must read every head.
  bool MustReadAll(PassStart* start);
  // The tables changed in any region since the last pass, and those waiting whose commit is
  // visible at `now`; nullopt when a region's change log no longer reaches back that far.
  std::optional<std::set<TableIdent>> TablesToLookAt(int64_t now);
  // Replicates one table from its owner to every replica that is up; returns when it should
  // be looked at again without a change of its own (ms since the epoch), or nullopt.
  std::optional<int64_t> Replicate(const TableIdent& table,
                                   const std::map<std::string, TableHead>& heads,
                                   int64_t visible_ms);
  // For a table its owner does not hold: when the owner dropped it (or renamed it away) and the
  // drop is visible, drops each replica's copy of it (a copy whose pointer is in the owner's
  // history of the table); returns when to look again, as Replicate does.
  std::optional<int64_t> ReplicateDrop(const TableIdent& table, LabRegion& owner,
                                       const std::map<std::string, TableHead>& heads,
                                       int64_t visible_ms);
  // Views (view_replication.cpp): every pass reads every region's view heads (views are few;
  // no change log) and copies each view's current metadata file from its owner (by the
  // ownership rules on its dotted name) to the replicas once it is `lag_ms` old, and drops a
  // replica's view the owner dropped once the drop is.
  void ReplicateViews(int64_t visible_ms);

  const std::vector<LabRegion*> regions_;
  Ownership* ownership_;
  NowMs now_ms_;
  std::atomic<int> lag_ms_;
  std::atomic<bool> paused_{false};

  std::mutex pass_mutex_;  // one pass at a time; it guards the pass state below
  std::atomic<bool> read_all_{true};
  std::map<std::string, uint64_t> cursors_;  // per region: its change log read up to here
  std::map<std::string, bool> was_up_;       // per region: up at the last pass
  uint64_t rules_version_ = 0;               // of the ownership rules at the last pass
  bool last_pass_ok_ = false;                // false: the next pass reads every head
  std::map<TableIdent, int64_t> waiting_;    // table -> when a commit becomes visible
  std::mutex thread_mutex_;
  std::condition_variable wake_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace icewarden::lab
