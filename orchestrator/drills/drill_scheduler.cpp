#include "orchestrator/drills/drill_scheduler.h"

#include <algorithm>

#include "orchestrator/config/config.h"
#include "orchestrator/drills/drill_service.h"
#include "orchestrator/failovers/automation_pause.h"
#include "state/drill_store.h"
#include "state/pause_store.h"

namespace icewarden {

DrillScheduler::DrillScheduler(DrillSchedulerDeps deps) : d_(std::move(deps)) {
  for (const DrillConfig& d : *d_.drills) {
    if (d.schedule.empty()) continue;
    auto s = ParseCronSchedule(d.schedule, d.time_zone);
    if (s.ok()) schedules_.emplace(d.name, *s);  // the config was validated; a bad one is off
  }
}

DrillScheduler::~DrillScheduler() { Stop(); }

std::map<std::string, UnixMillis> DrillScheduler::NextSlots() const { return next_; }

std::vector<std::string> DrillScheduler::Tick() {
  std::vector<std::string> out;
  const UnixMillis now = d_.clock->Now();
  if (!primed_) {
    for (const auto& [name, schedule] : schedules_) {
      UnixMillis from = now - d_.catch_up.count();
      if (d_.store != nullptr) {
        auto last = d_.store->LastScheduledSlot(name);
        if (last.ok()) from = std::max(from, *last);
      }
      if (auto next = NextFireAfter(schedule, from)) next_[name] = *next;
    }
    primed_ = true;
  }
  for (const DrillConfig& d : *d_.drills) {
    auto it = next_.find(d.name);
    if (it == next_.end() || it->second > now) continue;
    // The latest slot that has come: missed earlier ones are skipped, not queued.
    UnixMillis slot = it->second;
    while (auto later = NextFireAfter(schedules_.at(d.name), slot)) {
      if (*later > now) break;
      slot = *later;
    }
    Caller scheduler{"drill-scheduler", ActorKind::kOperator, "internal"};
    CommandOutcome started;
    if (std::string paused = PausedBecause(d, now); !paused.empty()) {
      started.status = Status::FailedPrecondition(paused);
    } else {
      started = d_.service->Run(scheduler, {d.name, d.mode, slot});
    }
    if (started.status.ok()) {
      out.push_back("drill " + d.name + ": started " +
                    started.body["run"].value("id", std::string()) + " for the slot " +
                    FormatUnixMillis(slot));
    } else if (started.status.code() == StatusCode::kFailedPrecondition) {
      out.push_back("drill " + d.name + ": the slot " + FormatUnixMillis(slot) +
                    " is skipped: " + started.status.message());
    } else if (started.status.code() == StatusCode::kConflict) {
      out.push_back("drill " + d.name + ": the slot " + FormatUnixMillis(slot) +
                    " has run already");
    } else {
      out.push_back("drill " + d.name + ": the slot " + FormatUnixMillis(slot) +
                    " could not start: " + started.status.message());
    }
    auto next = NextFireAfter(schedules_.at(d.name), std::max(slot, now));
    if (next) {
      it->second = *next;
    } else {
      next_.erase(it);
    }
  }
  for (const std::string& line : d_.service->Refresh()) out.push_back(line);
  if (d_.log)
    for (const std::string& line : out) d_.log(line);
  return out;
}

std::string DrillScheduler::PausedBecause(const DrillConfig& d, UnixMillis now) const {
  if (d_.pauses == nullptr) return "";
  AutomationTarget target{d.route, d.from, d.to, d.name};
  if (d_.routes != nullptr) {
    for (const FailoverRouteConfig& r : *d_.routes) {
      if (r.name != d.route) continue;
      if (target.from.empty() && r.from != "*") target.from = r.from;
      if (target.to.empty()) target.to = r.to;
    }
  }
  auto pauses = d_.pauses->ListPauses();
  // A store that cannot say whether the drill is paused does not run it: a drill skipped is
  // a finding; a drill run against a pause is a breach of it.
  if (!pauses.ok()) return "cannot read the pauses: " + pauses.status().message();
  auto covering = CoveringPause(*pauses, target);
  return covering ? PauseRefusal(*covering, now) : "";
}

void DrillScheduler::Start() {
  thread_ = std::thread([this] {
    std::unique_lock lock(mu_);
    while (!stop_) {
      lock.unlock();
      Tick();
      lock.lock();
      cv_.wait_for(lock, d_.interval, [this] { return stop_; });
    }
  });
}

void DrillScheduler::Stop() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

}  // namespace icewarden
