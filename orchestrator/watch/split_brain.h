// SplitBrainWatch: the watch DESIGN.md rule 8 keeps on every region that holds tables it does not
// own. Two writers is the failure that splits a table's history, so after any promotion (and for
// tables never moved, since their first claim) a commit in a non-owner region made after the
// table's ownership last changed is acted on at once:
//   1. journaled: audit `split_brain.detected` on split-brain:REGION (and on each failover that
//      moved one of the tables, so that failover's report shows it), naming tables, snapshots
//      and the writer's commit time;
//   2. the region gets the `fenced` overlay (source orchestrator): no failover targets it;
//   3. a critical alert goes out through every `alerts:` route of the config, and the outcome
//      is audited as `split_brain.alerted`.
// It never moves ownership: the owner stays the owner. Clearing the overlay is an operator's
// command with a reason (POST /api/v1/regions/{r}/unfence).
//
// Each commit is acted on once, by snapshot id. While the region stays fenced, a writer that
// keeps going is the same split brain: its newer commits are journaled (split_brain.continued),
// not acted on. Once an operator has cleared the overlay, only a commit not seen before is new.
//
// What counts: a lag row that is diverged (the replica has snapshots the owner never had) whose
// newest divergent snapshot was committed after Ownership::updated_at. Divergent commits older
// than that are what a failover lost (its RPO), not a second writer. Commit times are the
// writer's clock, so a writer whose clock runs far behind ours can hide for that long.
//
// Data flows one way: the lag rounds published in the LiveView are read on the watch's own
// thread, and effects go to the store, the region-event sink and the alert sink.
// Thread-safety: Start/Stop from one thread; Examine is called on the watch's thread (or by a
// test, with the watch not started).
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "state/region_health_machine.h"
#include "state/status.h"
#include "state/types.h"

namespace icewarden {

class Clock;
class LiveView;
class StateStore;
struct LagReport;

struct SplitBrainFinding {
  std::string region{};  // the second writer
  std::string owner{};   // the table's owner, which keeps ownership
  TableIdent table{};
  std::vector<std::int64_t> snapshot_ids{};  // the divergent snapshots, ascending
  UnixMillis committed_at = 0;               // the newest of them, by the writer's clock
  UnixMillis owned_since = 0;                // Ownership::updated_at
  std::string failover_id{};                 // the failover that last moved the table, or ""
  // "region|table|committed_at|how many snapshots": names one detection (the alert's
  // idempotency key). Whether a commit is new is decided by snapshot id, not by this.
  std::string Key() const;
};

using OwnershipOf = std::function<std::optional<Ownership>(const TableIdent&)>;

// Pure: the rows of `report` that are writes in a region that does not own the table, made
// after the table's ownership last changed.
std::vector<SplitBrainFinding> FindSplitBrain(const LagReport& report,
                                              const OwnershipOf& ownership_of);

// What goes to the alert routes: one alert per region and detection.
struct SplitBrainAlert {
  std::string region{};
  std::string summary{};  // one sentence
  std::vector<SplitBrainFinding> findings{};
};

struct SplitBrainWatchDeps {
  StateStore* store = nullptr;
  LiveView* live = nullptr;  // reads lag rounds; publishes the marks `lag` shows
  std::shared_ptr<Clock> clock;
  // Sets the fenced overlay (CatalogWatch::ApplyHealthEvent in serve).
  std::function<Result<HealthDecision>(const std::string& region, const HealthInput& input,
                                       const std::string& actor)>
      region_event;
  // Sends the alert through every configured route; one line per route ("lab: sent ..."),
  // empty when none is configured.
  std::function<std::vector<std::string>(const SplitBrainAlert&)> alert;
  std::chrono::milliseconds poll{500};
  std::function<void(const std::string&)> log{};
};

class SplitBrainWatch {
 public:
  explicit SplitBrainWatch(SplitBrainWatchDeps deps);
  ~SplitBrainWatch();
  SplitBrainWatch(const SplitBrainWatch&) = delete;
  SplitBrainWatch& operator=(const SplitBrainWatch&) = delete;

  // Reads back what earlier runs acted on (the audit log), then watches every new lag round.
  Status Start(const std::vector<std::string>& regions);
  void Stop();

  // Acts on the findings in `report` not acted on before; returns them.
  std::vector<SplitBrainFinding> Examine(const LagReport& report);

 private:
  void Loop();
  // Journals (split_brain.continued) the newer commits seen in `region` while it was fenced.
  void FlushContinued(const std::string& region);

  SplitBrainWatchDeps d_;
  void Remember(const std::string& region, const std::string& table,
                const std::vector<std::int64_t>& snapshot_ids);
  // Every snapshot of the finding has been acted on or journaled before.
  bool Handled(const SplitBrainFinding& f) const;
  // "region|table" -> its divergent snapshot ids acted on or journaled, of those still listed.
  std::map<std::string, std::set<std::int64_t>> handled_;
  // region -> table -> the latest finding remembered while fenced, not yet journaled.
  std::map<std::string, std::map<std::string, SplitBrainFinding>> unjournaled_;
  // region -> its last detected or continued event: continued events come 30 s apart
  std::map<std::string, UnixMillis> last_continued_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace icewarden
