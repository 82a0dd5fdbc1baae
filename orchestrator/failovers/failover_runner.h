// FailoverRunner: runs approved failovers inside `serve`. One supervisor thread looks at the
// active failovers every second, or at once when a command wakes it, and gives each one
// that has work a worker thread of its own running RunbookExecutor::Drive (one executor
// drive per failover at a time). At start every active failover is resumed from the journal.
//
// It is also the executor's FailoverTransitions, in front of the Orchestrator, adding the
// checks that need the world outside the failover:
//   begin_promotion          the guards once more (FailoverService::CheckBeforePromotion); a
//                            failure holds the failover in fenced until re-approved
//   confirm_fencing (steps)  the journal must bear the kind out (fence_evidence.h):
//                            steps_and_quiet_window a succeeded fence.catalog_quiet (fence
//                            steps alone prove nothing about writes), gateway_closed every
//                            fence step succeeded and every configured gateway confirmed
// and, for a failover waiting in fencing, it confirms old_region_unreachable evidence as
// soon as the old region has been silent long enough (FailoverService::UnreachableEvidence).
//
// Stop (SIGTERM): no new step starts; a step in flight finishes or times out and is
// journaled; the workers and the supervisor are joined. A restart resumes.
// Thread-safety: Wake and Apply may be called from any thread; Start and Stop from one.
#pragma once

#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>

#include "runbooks/executor.h"

namespace icewarden {

class ActionRegistry;
class Clock;
class FailoverService;
class Orchestrator;
class StateStore;

struct FailoverRunnerDeps {
  StateStore* store = nullptr;
  Orchestrator* orchestrator = nullptr;
  FailoverService* service = nullptr;
  const ActionRegistry* actions = nullptr;
  std::shared_ptr<Clock> clock;
  std::chrono::milliseconds poll{1000};
  // Called with every Drive's summary ("fo-1 completed: ..."), for the log.
  std::function<void(const std::string&)> log{};
  // Called with the failover's id when a Drive returns, whatever its outcome: what the steps
  // kept for one another (ActionEnv::observations) may go.
  std::function<void(const std::string&)> drive_ended{};
};

class FailoverRunner final : public FailoverTransitions {
 public:
  explicit FailoverRunner(FailoverRunnerDeps deps);
  ~FailoverRunner() override;
  FailoverRunner(const FailoverRunner&) = delete;
  FailoverRunner& operator=(const FailoverRunner&) = delete;

  void Start();
  void Wake(const std::string& failover_id);
  void Stop();

  Result<FailoverDecision> Apply(const std::string& failover_id,
                                 const FailoverInput& input) override;

 private:
  void Supervise();
  void Examine(const Failover& f);
  void Drive(const std::string& id);
  bool Stopping() const;
  void SleepInterruptibly(std::chrono::milliseconds d);

  FailoverRunnerDeps d_;
  std::unique_ptr<RunbookExecutor> executor_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;
  bool woken_ = false;
  std::set<std::string> running_;                // failovers with a worker
  std::map<std::string, std::int64_t> settled_;  // id -> version a Drive last stopped at
  std::set<std::string> woken_during_drive_;     // a command arrived while it was driven
  std::map<std::string, std::thread> workers_;
  std::vector<std::thread> finished_;  // to join
  std::thread supervisor_;
};

}  // namespace icewarden
