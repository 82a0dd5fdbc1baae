// DrillStore: the durable record of disaster-recovery drill runs (DESIGN.md "drill"): one row
// per run with its mode, phase and verdict, each rehearsed step's journal, and the operators'
// notes. Kept apart from StateStore so that adding drills did not change the interface every
// component includes; the SQLite store implements both over one database (schema migration
// 5), so a run and its audit event commit in one transaction.
//
// Every mutating method is one durable transaction; those that take an AuditEvent append it
// in the same transaction.
// Thread-safety: implementations serialise calls internally.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "state/clock.h"
#include "state/status.h"
#include "state/types.h"

namespace icewarden {

class StateStore;

// What a drill run has reached. A shadow run that stopped (a crash) while running or
// cleaning is cleaned up when the daemon starts again.
enum class DrillPhase { kRunning, kCleaning, kWaiting, kFinished };
const char* DrillPhaseName(DrillPhase p);
std::optional<DrillPhase> ParseDrillPhase(const std::string& s);

struct DrillRun {
  std::string id{};     // "dr-20261201-170501-3f2a"
  std::string drill{};  // the config's drill name
  std::string mode{};   // plan | shadow | live
  DrillPhase phase = DrillPhase::kRunning;
  std::string trigger{};  // "schedule" | "operator:<token name>"
  // The cron slot this run is for (0: on demand). Unique per drill: a slot is claimed once,
  // so a restart never runs a missed slot a second time.
  UnixMillis scheduled_for = 0;
  std::string verdict{};  // "" while running; passed | failed
  std::string verdict_reason{};
  std::string failing_step{};  // the step the verdict names, when it failed
  std::string failover_id{};   // live: the failover proposed
  std::string failback_id{};   // live: the failback proposed once the failover completed
  std::string scope{}, from{}, to{};
  std::string result_json = "{}";  // the mode's own record (plan and guards; RPO)
  UnixMillis started_at = 0;
  UnixMillis finished_at = 0;
  std::int64_t version = 0;  // bumped by every update; UpdateDrillRun compares it
};

// One rehearsed step. state: not_started | running | succeeded | failed | timed_out | skipped.
// cleanup: "" (nothing to undo) | pending | done | failed | none (nothing recorded to undo).
struct DrillStep {
  std::string run_id{};
  std::string step_id{};
  int ordinal = 0;  // run order
  std::string section{};
  std::string action{};
  std::string state = "not_started";
  int attempts = 0;
  std::string error{};
  std::string params_json = "{}";  // masked: never a secret
  // What Capture read before the first attempt: journaled before the step acts, so that a
  // cleanup after a crash restores what was there (the cleanup obligation).
  std::string before_json{};
  std::string detail_json = "{}";
  std::string cleanup{};
  std::string cleanup_reason{};
  UnixMillis started_at = 0;
  UnixMillis finished_at = 0;
};

struct DrillNote {
  std::string run_id{};
  std::string by{};
  std::string text{};
  UnixMillis at = 0;
};

class DrillStore {
 public:
  virtual ~DrillStore() = default;
  // Inserts with version 1. kConflict when the id exists, or when run.scheduled_for is not 0
  // and that drill's slot is taken already (nothing is written).
  virtual Status CreateDrillRun(const DrillRun& run, const AuditEvent& why) = 0;
  // Replaces the run when its stored version equals expected_version. kNotFound, kConflict.
  virtual Status UpdateDrillRun(const DrillRun& run, std::int64_t expected_version,
                                const AuditEvent& why) = 0;
  virtual Result<std::optional<DrillRun>> GetDrillRun(const std::string& id) = 0;
  // Newest first; drill empty: every drill's. limit 0: no limit.
  virtual Result<std::vector<DrillRun>> ListDrillRuns(const std::string& drill,
                                                      std::size_t limit) = 0;
  // The latest scheduled_for recorded for the drill (0: none).
  virtual Result<UnixMillis> LastScheduledSlot(const std::string& drill) = 0;
  // Inserts or replaces the record keyed by (run_id, step_id).
  virtual Status PutDrillStep(const DrillStep& step) = 0;
  // In ordinal order.
  virtual Result<std::vector<DrillStep>> ListDrillSteps(const std::string& run_id) = 0;
  virtual Status AddDrillNote(const DrillNote& note, const AuditEvent& why) = 0;
  // Oldest first.
  virtual Result<std::vector<DrillNote>> ListDrillNotes(const std::string& run_id) = 0;
};

// The drill record of `store` when it keeps one (the SQLite and etcd stores do), else nullptr.
DrillStore* DrillStoreOf(StateStore& store);

}  // namespace icewarden
