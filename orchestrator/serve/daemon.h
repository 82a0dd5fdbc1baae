// Daemon: everything `icewarden serve` builds from one config (the orchestrator, its action
// kinds and routes, the catalog watch, the failover service and runner, readiness, webhooks,
// drills, the split-brain watch and the API in front of them), so that a reload can build the
// next one beside the running one and swap them.
//
// What outlives a daemon is the process's (serve.cpp): the state store and the etcd term,
// the LiveView the probes fill, the dashboard's files, the HTTP listener and the record of
// reloads. A daemon holds pointers to those and owns the rest, including its own copy of the
// config, which every component refers to.
//
// Lifecycle: Build (nothing runs; a broken runbook, alert route or probe is an error with
// FILE:LINE:COL), Start (resumes every failover from its journal), Stop (steps in flight finish
// and are journaled, nothing new starts), then destruction. Handle may be called from any
// thread from Build on, also after Stop (the API answers from the store; commands that need
// the runner are picked up by the next daemon's Start, which resumes the journal).
// Thread-safety: Start and Stop from one thread; Handle and CountResponse from any.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "orchestrator/api/api.h"
#include "orchestrator/config/config.h"
#include "state/status.h"

namespace icewarden {

class Clock;
class Dashboard;
class LiveView;
struct ServeState;

// What a reload did, for the API and /metrics: the outcome of the latest attempt and when a
// config was last loaded successfully (the start counts as one).
struct ConfigReloadStatus {
  bool last_successful = true;
  UnixMillis last_success_at = 0;
};

struct DaemonInputs {
  ServeState* state = nullptr;
  LiveView* live = nullptr;
  std::shared_ptr<Clock> clock;
  const Dashboard* dashboard = nullptr;
  // /metrics' icewarden_config_last_reload_*; optional.
  std::function<ConfigReloadStatus()> reload_status;
  // POST /api/v1/config/reload: runs a reload and answers with its outcome; optional.
  std::function<ApiResponse(const std::string& actor)> reload;
};

class Daemon {
 public:
  // Builds every component from `config`; runs nothing. The errors (FILE:LINE:COL where the
  // config or a runbook says where) are appended to `errors`.
  static std::unique_ptr<Daemon> Build(Config config, const DaemonInputs& inputs,
                                       std::vector<std::string>* errors);
  ~Daemon();  // Stop()s
  Daemon(const Daemon&) = delete;
  Daemon& operator=(const Daemon&) = delete;

  // Starts the watch, the split-brain watch, the runner (resuming every active failover), the
  // drills and readiness; the lines to log (what start-up decided) are appended to `lines`.
  Status Start(std::vector<std::string>* lines);
  // Idempotent.
  void Stop();

  ApiResponse Handle(const ApiRequest& request);
  void CountResponse(int status);
  const Config& config() const;

 private:
  struct Parts;
  explicit Daemon(std::unique_ptr<Parts> parts);
  std::unique_ptr<Parts> parts_;
};

// The action kinds of `config` without what running them needs (`config validate`, and a
// reload checking a config before building it); the route table and alert routes read and
// validated. Errors as FILE:LINE:COL, appended to `errors`; false on any.
bool CheckRunbooks(const Config& config, std::vector<std::string>* errors);

}  // namespace icewarden
