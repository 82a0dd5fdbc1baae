// The state record `serve` runs on, by state.backend: the SQLite file, or a share of an etcd
// record among replicas (issue 12), where this replica first stands by until it leads.
// Thread-safety: called once, from serve's thread.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "orchestrator/cluster/leadership.h"
#include "orchestrator/cluster/replica_views.h"
#include "state/state_store.h"

namespace icewarden {

struct Config;
struct HttpServerOptions;
class Clock;
class LiveView;

struct ServeState {
  std::unique_ptr<Leadership> leadership;  // etcd: the term this replica holds; else null
  std::unique_ptr<ReplicaViews> views;     // etcd: every replica's view, this one's published
  std::unique_ptr<StateStore> store;       // after `leadership`: destroyed first
  std::string description;                 // for the "serving" line and the logs
};

// sqlite: opens (creating) the file. etcd: starts publishing this replica's view of the
// regions from `live`, and, until this replica holds the leader key, probes every region into
// `live` and serves the standby answers on `http`'s address; then opens the store with every
// write fenced by the term, and starts keeping the term (on_lost when it ends). From there the
// leader's CatalogWatch feeds `live`. nullopt: a signal stopped the replica while it stood by.
// `live` must outlive the returned state.
Result<std::optional<ServeState>> OpenServeState(
    const Config& config, const HttpServerOptions& http, std::shared_ptr<Clock> clock,
    LiveView& live, std::function<void(const std::string& why)> on_lost);

}  // namespace icewarden
