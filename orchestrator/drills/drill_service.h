// DrillService: disaster-recovery drills (DESIGN.md "drill"), run on demand (the API, the CLI)
// or by the DrillScheduler, in one of three modes:
//
//   plan    the drill's failover route planned against the current state: the runbook's steps
//           and every guard's result (a dry-run proposal through FailoverService). Passes
//           when every guard passes.
//   shadow  the route's runbook run for real against the drill's targets (shadow_targets.h):
//           the drill DNS name, the drill namespace's canary tables, alerts labelled
//           drill="true"; production ownership and DNS are left untouched. Every step is
//           journaled in the DrillStore before it acts, with what it will have to undo (its
//           Capture), so the cleanup (every attempted step's compensation, newest first)
//           also runs after a crash: ResumeAtStart cleans up every shadow run a stopped daemon
//           left running. Passes when every step succeeded (or was skipped), the cleanup
//           succeeded and the measured RTO is within the target.
//   live    a real failover of the drill's scope, proposed here and approved by a person like
//           any other (a drill never approves itself: DESIGN.md rule 4); once it completed and
//           the region it left is healthy again, the failback is proposed, and approved by a
//           person too. The run waits (phase
//           waiting) until both end; Refresh moves it on. Passes when both completed and the
//           failover's RTO is within the target.
//
// Every run leaves a report (drill_report.h). Refusals use the FailoverService status codes.
// Thread-safety: every method may be called from any thread; shadow runs go on worker
// threads (inline when DrillServiceDeps::run_inline), joined by Stop.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "orchestrator/failovers/failover_service.h"
#include "state/drill_store.h"

namespace icewarden {

// What /metrics shows of a drill (api/metrics_exposition.h renders it).
struct DrillMetric {
  std::string drill;
  std::int64_t last_success_at = 0;  // Unix ms; 0: none has passed
  std::int64_t last_rto_ms = -1;     // -1: none measured
};

class ActionRegistry;
class Clock;
class LiveView;
class RouteTable;
class StateStore;
struct LoadedRoute;
struct ShadowRunDeps;
struct Config;
struct DrillConfig;

struct DrillServiceDeps {
  const Config* config = nullptr;
  const RouteTable* routes = nullptr;
  StateStore* store = nullptr;
  DrillStore* drills = nullptr;
  FailoverService* failovers = nullptr;
  const ActionRegistry* actions = nullptr;
  std::shared_ptr<Clock> clock;
  const LiveView* live = nullptr;  // may be null: the shadow run's RPO is then unknown
  std::function<std::optional<std::string>(const std::string&)> env;  // ${env.NAME}
  std::function<void(const std::string&)> log{};                      // may be empty
  // Waits between a step's attempts. Empty: std::this_thread::sleep_for.
  std::function<void(std::chrono::milliseconds)> sleep{};
  bool run_inline = false;  // tests: a shadow run finishes before Run returns
};

struct DrillRunRequest {
  std::string drill{};
  std::string mode{};            // empty: the drill's configured mode
  UnixMillis scheduled_for = 0;  // the cron slot (DrillScheduler); 0: on demand
};

class DrillService {
 public:
  explicit DrillService(DrillServiceDeps deps);
  ~DrillService();
  DrillService(const DrillService&) = delete;
  DrillService& operator=(const DrillService&) = delete;

  // Starts a run: 201-style outcome whose body is {"run": ...}. kNotFound for an unknown
  // drill, kInvalidArgument for a bad mode, kConflict when the slot was run already.
  CommandOutcome Run(const Caller& caller, const DrillRunRequest& request);
  // Appends an operator's note to a run's report.
  CommandOutcome Note(const Caller& caller, const std::string& run_id, const std::string& text);
  // The report (drill_report.h); a waiting live run is refreshed first. kNotFound.
  Result<nlohmann::json> Report(const std::string& run_id);
  // The configured drills with their last run, and the newest runs.
  Result<nlohmann::json> List(std::size_t limit);

  // Per configured drill: its latest passing run's end and latest measured RTO (/metrics).
  std::vector<DrillMetric> Metrics();

  // Moves every waiting live run on (proposes the failback, records the end). Returns one
  // sentence per change.
  std::vector<std::string> Refresh();
  // At daemon start: cleans up every shadow run left running or cleaning (a crash), and
  // finishes it as failed ("interrupted"). Returns one sentence per run.
  std::vector<std::string> ResumeAtStart();
  // Waits for the shadow runs in flight.
  void Stop();

 private:
  void Log(const std::string& line) const;
  Status Finish(DrillRun run, const std::string& verdict, const std::string& reason,
                const std::string& failing_step);
  Status RunPlan(const Caller& caller, DrillRun run, const DrillConfig& drill);
  Status RunLive(const Caller& caller, DrillRun run, const DrillConfig& drill);
  void RunShadow(DrillRun run, const DrillConfig& drill);
  // What a shadow run's steps and cleanup need; `bound` says whether the runbook's parameters
  // bind for this run (deps.bindings is empty when they do not).
  ShadowRunDeps ShadowDeps(const DrillRun& run, const DrillConfig& drill, const LoadedRoute& route,
                           Status* bound) const;
  std::string RefreshLive(DrillRun run);

  DrillServiceDeps d_;
  std::mutex mu_;
  std::vector<std::thread> workers_;
};

// "dr-20261201-170501-k3v9": sorts by start time.
std::string NewDrillRunId(UnixMillis now);

}  // namespace icewarden
