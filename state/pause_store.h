// PauseStore: the durable record of paused automation (`icewarden pause`): while a pause
// covers a proposal, webhooks and scheduled drills propose nothing there; probes, lag and
// operators' own commands go on. Kept beside StateStore (as DrillStore is) so that adding
// pauses did not change the interface every component includes. The SQLite store keeps them
// in one table (schema migration 6), the etcd store under `pauses/`; each change and its
// audit event commit in one transaction, so the audit log says who paused, why, and when.
//
// A pause has no deadline that ends it: `expected_end` is when its author expected to resume
// (`--for`), and past it the pause is overdue (a metric and an alert), not lifted. Automation
// that turns itself back on, unannounced, at 3 a.m. is what a pause exists to prevent.
// Thread-safety: implementations serialise calls internally.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "state/clock.h"
#include "state/status.h"
#include "state/types.h"

namespace icewarden {

class StateStore;

struct Pause {
  // "all", "region:NAME" (proposals from or to NAME, drills that move it), "route:NAME" (the
  // failovers: route), "drill:NAME" (that drill's schedule).
  std::string scope;
  std::string by;      // who paused: the API token's name
  std::string reason;  // why, as given
  UnixMillis since = 0;
  UnixMillis expected_end = 0;  // --for: when resuming was expected; 0: not said
};

class PauseStore {
 public:
  virtual ~PauseStore() = default;

  // Pauses `pause.scope`, or replaces the pause it has (a new reason or --for), and appends
  // `why`. kInvalidArgument for an empty scope or reason.
  virtual Status PutPause(const Pause& pause, const AuditEvent& why) = 0;
  // Lifts the pause of `scope` and appends `why`; kNotFound (nothing written) when `scope`
  // is not paused.
  virtual Status DeletePause(const std::string& scope, const AuditEvent& why) = 0;
  // Every pause, by scope.
  virtual Result<std::vector<Pause>> ListPauses() = 0;
};

// The pause record of `store` when it keeps one (the SQLite and etcd stores do), else nullptr.
PauseStore* PauseStoreOf(StateStore& store);

}  // namespace icewarden
