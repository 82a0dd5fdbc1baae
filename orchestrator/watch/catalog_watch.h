// CatalogWatch: the daemon's observation loop. One thread runs an io_context with, per
// region, a probe scheduler feeding the HealthTracker, and a replication-lag round every
// policies.lag_interval. Health changes go to the Orchestrator (which persists and audits
// them); lag reports and probe rounds go to the LiveView for the API. Data flows one way:
// nothing here acts on what it sees.
//
// Thread-safety: Create/Start/Stop from one thread (the daemon's main thread); everything
// else happens on the watch's own thread.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "state/region_health_machine.h"
#include "state/status.h"

namespace icewarden {

class Clock;
class LiveView;
class Orchestrator;
class StateStore;
struct Config;

class CatalogWatch {
 public:
  // Builds every region's catalog clients and probes from the config. Fails with
  // kInvalidArgument when a probe cannot be built from its settings (a config error).
  // `config`, `store`, `orchestrator` and `live` must outlive the watch.
  static Result<std::unique_ptr<CatalogWatch>> Create(const Config& config, StateStore& store,
                                                      Orchestrator& orchestrator,
                                                      std::shared_ptr<Clock> clock, LiveView& live);
  ~CatalogWatch();  // stops and joins

  // Several replicas (issue 12): asks, for a region whose round got no answer at all, whether
  // the other replicas agree it is gone; a reason means they do not, and the region goes no
  // further than degraded (HealthInput::not_unreachable_because). Called on the watch's
  // thread; set before Start. Unset: this replica's own rounds decide, as with one replica.
  using QuorumCheck = std::function<std::string(const std::string& region)>;
  void SetUnreachableQuorum(QuorumCheck check);

  void Start();
  // Stops probing and lag rounds, lets the loop finish what is in flight (bounded), and
  // joins the thread. Idempotent.
  void Stop();

  // Applies an event from outside the probes (a webhook's suspicion, or its lifting) on the
  // watch's thread, so that the HealthTracker's record stays the one the machine last
  // produced, and persists a change before returning. Waits at most 5 s for the loop;
  // kUnavailable when it did not answer (or the watch is not running), kNotFound for a
  // region the watch does not probe, the store's error when the change could not be saved.
  // A suspected region is probed at a quarter of its interval until its suspicion is lifted.
  // The change is audited as `actor` (e.g. "webhook:generic/ci").
  Result<HealthDecision> ApplyHealthEvent(const std::string& region, const HealthInput& input,
                                          const std::string& actor);

 private:
  struct Loop;
  explicit CatalogWatch(std::unique_ptr<Loop> loop);
  std::unique_ptr<Loop> loop_;
};

}  // namespace icewarden
