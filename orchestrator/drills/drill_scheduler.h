// DrillScheduler: starts each scheduled drill at its cron slots (cron_schedule.h), in the
// drill's configured mode, and moves waiting live runs on (DrillService::Refresh).
//
// A slot is claimed durably: the run records it (DrillRun::scheduled_for, unique per
// drill), so a slot runs at most once even across restarts and daemons. At start the
// scheduler looks for the first slot after the later of the drill's last recorded slot and
// `now - catch_up`: a slot missed while the daemon was down runs once when it comes back
// (within catch_up), and never a second time. When several slots were missed only the
// latest runs: a rehearsal is about now, not a backlog. A slot a pause covers is skipped,
// never run late when the pause is lifted.
//
// Tick() does one round against the Clock, so tests drive time; Start() runs Tick every
// `interval` of real time on its own thread until Stop().
// Thread-safety: Tick is called from one thread at a time (the scheduler's own, or a test's).
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "orchestrator/config/cron_schedule.h"
#include "state/clock.h"

namespace icewarden {

class DrillService;
class DrillStore;
class PauseStore;
struct DrillConfig;
struct FailoverRouteConfig;

struct DrillSchedulerDeps {
  const std::vector<DrillConfig>* drills = nullptr;
  DrillService* service = nullptr;
  DrillStore* store = nullptr;
  // A slot that a pause covers (automation_pause.h) is skipped, and said so in the log.
  // Null: nothing is paused. `routes` gives a drill's regions when the drill names none.
  PauseStore* pauses = nullptr;
  const std::vector<FailoverRouteConfig>* routes = nullptr;
  std::shared_ptr<Clock> clock;
  std::chrono::milliseconds catch_up{std::chrono::hours(1)};
  std::chrono::milliseconds interval{std::chrono::seconds(1)};
  std::function<void(const std::string&)> log{};
};

class DrillScheduler {
 public:
  explicit DrillScheduler(DrillSchedulerDeps deps);
  ~DrillScheduler();

  // One round: starts every drill whose next slot has come; returns one sentence per
  // decision ("drill weekly: started dr-... for the slot 2026-03-29T01:00:00.000Z").
  std::vector<std::string> Tick();
  // The next slot of each scheduled drill, as the scheduler sees it.
  std::map<std::string, UnixMillis> NextSlots() const;

  void Start();
  void Stop();

 private:
  // The refusal of the pause covering `d`, or empty when none does.
  std::string PausedBecause(const DrillConfig& d, UnixMillis now) const;

  DrillSchedulerDeps d_;
  std::map<std::string, CronSchedule> schedules_;
  std::map<std::string, UnixMillis> next_;
  bool primed_ = false;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace icewarden
