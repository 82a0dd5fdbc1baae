// RouteTable: the config's failover routes with their runbooks loaded and validated, and
// the lookup a proposal uses to find its runbook.
//
// Every runbook is read once, when the daemon starts (and by `config validate`): an invalid
// one is an error at its FILE:LINE:COL and refuses the start, so a failover never discovers
// a broken runbook at 3 a.m. The runbook's content hash is kept with it and recorded on
// every failover that runs it.
// Thread-safety: immutable after Load; safe to share between threads.
#pragma once

#include <string>
#include <vector>

#include "orchestrator/config/config.h"
#include "runbooks/runbook.h"
#include "state/status.h"
#include "state/types.h"

namespace icewarden {

class ActionRegistry;

struct LoadedRoute {
  FailoverRouteConfig config;
  Runbook runbook;
  std::string runbook_hash;  // "sha256:<hex>" of the file's bytes
};

class RouteTable {
 public:
  RouteTable() = default;

  // Reads every route's runbook. On failure returns nothing and appends every problem to
  // `errors` ("FILE:LINE:COL: message", the runbook's own positions, or the config route's
  // position when the file cannot be read).
  static std::optional<RouteTable> Load(const Config& config, const ActionRegistry& registry,
                                        std::vector<std::string>* errors);

  // The first route whose kind, from, to and scope match, or nullptr.
  const LoadedRoute* Find(FailoverKind kind, const std::string& from, const std::string& to,
                          const std::string& scope) const;
  const LoadedRoute* Named(const std::string& name) const;
  // Whether `route` may move this kind, from, to and scope.
  static bool Covers(const LoadedRoute& route, FailoverKind kind, const std::string& from,
                     const std::string& to, const std::string& scope);
  const std::vector<LoadedRoute>& routes() const { return routes_; }

  // For tests: a table over routes already loaded.
  explicit RouteTable(std::vector<LoadedRoute> routes) : routes_(std::move(routes)) {}

 private:
  std::vector<LoadedRoute> routes_;
};

// "sha256:<64 hex digits>" of `bytes`.
std::string Sha256Tag(std::string_view bytes);

}  // namespace icewarden
