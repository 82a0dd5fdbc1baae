// Orchestrator: ties configuration, observations and commands to the state store. Every
// cycle and every command yields Decisions: one sentence each saying what was decided and
// why, which are logged, returned by the API and asserted in tests.
//
// Thread-safety: not thread-safe; the daemon calls it from one strand.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "state/status.h"

namespace icewarden {

class Clock;
class StateStore;
struct Config;

struct Decision {
  std::string subject;  // "us-east-1", "fo-...", "sales.orders"
  std::string reason;   // "us-east-1 recorded: in config, awaiting first probe rounds"
};

class Orchestrator {
 public:
  Orchestrator(const Config& config, StateStore& store, std::shared_ptr<Clock> clock);

  // Brings the store in line with the config at start-up. A region in the config that the
  // store has never seen is recorded as degraded until probes prove it healthy: a guard
  // that requires a healthy target must never pass on a region nobody has looked at. A
  // region the store knows but the config no longer names is left as recorded (its tables
  // may still be owned by it) and reported.
  Result<std::vector<Decision>> Start();

 private:
  const Config& config_;
  StateStore& store_;
  std::shared_ptr<Clock> clock_;
};

}  // namespace icewarden
