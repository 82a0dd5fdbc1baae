// Orchestrator: ties configuration, observations and commands to the state store. Every
// cycle and every command yields Decisions: one sentence each saying what was decided and
// why, which are logged, returned by the API and asserted in tests.
//
// Thread-safety: every method may be called from any thread: its state is the store
// (which serialises itself) and the read-only config.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "runbooks/executor.h"
#include "state/failover_machine.h"
#include "state/region_health_machine.h"
#include "state/status.h"

namespace icewarden {

class Clock;
class StateStore;
struct Config;

struct Decision {
  std::string subject{};  // "us-east-1", "fo-...", "sales.orders"
  std::string reason{};   // "us-east-1 recorded: in config, awaiting first probe rounds"
};

class Orchestrator final : public FailoverTransitions {
 public:
  Orchestrator(const Config& config, StateStore& store, std::shared_ptr<Clock> clock);

  // Brings the store in line with the config at start-up. A region in the config that the
  // store has never seen is recorded as degraded until probes prove it healthy: a guard
  // that requires a healthy target must never pass on a region nobody has looked at. A
  // region the store knows but the config no longer names is left as recorded (its tables
  // may still be owned by it) and reported.
  Result<std::vector<Decision>> Start();

  // Applies one event to a failover: the failover machine decides, the decision is
  // persisted (compare-and-set on the failover's version, with its audit event) and only
  // then returned. A refused event is audited too and returned with accepted == false;
  // kNotFound for an unknown id, kConflict if the failover changed concurrently.
  // `amend` records fields the machine does not decide in the same write.
  Result<FailoverDecision> ApplyToFailover(const std::string& id, const FailoverInput& input,
                                           const std::string& source,
                                           const std::function<void(Failover&)>& amend = {});

  // Persists a region's health change that the HealthTracker decided (health/), with its
  // audit event, before anything acts on it. Only changes come here: counters between
  // changes stay in the tracker (they are re-derived from probes after a restart, and
  // writing every probe round would bury the audit log).
  Status RecordRegionHealth(const HealthDecision& decision, const std::string& source);

  // FailoverTransitions, for the runbook executor: ApplyToFailover from "executor".
  Result<FailoverDecision> Apply(const std::string& failover_id,
                                 const FailoverInput& input) override {
    return ApplyToFailover(failover_id, input, "executor");
  }

  // The failover policy the config asks for.
  FailoverPolicy Policy() const;

 private:
  const Config& config_;
  StateStore& store_;
  std::shared_ptr<Clock> clock_;
};

}  // namespace icewarden
