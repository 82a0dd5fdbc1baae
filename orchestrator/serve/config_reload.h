// Reloading the config of a running `icewarden serve` (SIGHUP, POST /api/v1/config/reload):
// the file is read and checked as at start; a config with errors, or one that changes what
// only a restart can (the listener, the state backend), is refused and the running one kept.
// A good one is built into a new Daemon beside the running one, which is then stopped (steps
// in flight finish and are journaled) and the new one started (resuming the journal), as a
// restart would, without closing the listener, the store or the etcd term.
// Thread-safety: Reload runs one at a time (a mutex); Current and LastReload from any thread.
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "orchestrator/serve/daemon.h"

namespace icewarden {

// The settings of `running` that `next` changes and a reload cannot apply, each as
// "api.listen (127.0.0.1:8480 -> 127.0.0.1:9000)"; secrets are named, never shown.
std::vector<std::string> ChangesNeedingRestart(const Config& running, const Config& next);

struct ReloadOutcome {
  bool ok = false;
  std::vector<std::string> errors;  // FILE:LINE:COL ... when refused
  std::string summary;              // one sentence for the log and the API
};

class ConfigReloader {
 public:
  // `load` reads the config file again (with serve's command-line overrides applied);
  // `inputs` are what every daemon is built with. `current` is the running daemon.
  using Load = std::function<ConfigLoad()>;
  ConfigReloader(Load load, DaemonInputs inputs, std::unique_ptr<Daemon> current,
                 std::shared_ptr<Clock> clock);

  // The running daemon, held by the caller for the length of a request.
  std::shared_ptr<Daemon> Current() const;
  ConfigReloadStatus LastReload() const;

  // Reads and checks the file as Reload would (errors, settings that need a restart, the
  // runbooks and alert routes) without building anything: what the API answers at once,
  // before the reload itself runs on its own thread. A config that does not check out is a
  // refused reload (the metric and the audit log say so, as for Reload).
  ReloadOutcome Check(const std::string& actor);

  // Reads, checks, builds and swaps as described above. Audits the outcome.
  ReloadOutcome Reload(const std::string& actor);

  // Stops the running daemon (at shutdown).
  void StopCurrent();

 private:
  // The file read again and compared with `running`: nullopt, with the errors appended, when
  // it has errors or changes what needs a restart.
  std::optional<Config> Read(const Daemon& running, std::vector<std::string>* errors) const;
  // The outcome into the status and the audit log.
  void Record(const ReloadOutcome& out, const std::string& path, const std::string& actor);

  Load load_;
  DaemonInputs inputs_;
  std::shared_ptr<Clock> clock_;
  std::mutex reload_mu_;  // one reload at a time
  mutable std::mutex mu_;
  std::shared_ptr<Daemon> current_;  // guarded by mu_
  ConfigReloadStatus status_;        // guarded by mu_
};

}  // namespace icewarden
