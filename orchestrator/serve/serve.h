// `icewarden serve` and `icewarden config validate`: the commands that read a config file.
// serve.cpp keeps what lives as long as the process (the listener, the state store, the etcd
// term, the reload thread); daemon.h is everything built from one config; config_reload.h
// swaps one daemon for the next.
#pragma once

#include <string>

namespace icewarden {

struct ServeOptions {
  std::string config_path;
  std::string listen;      // overrides api.listen when set
  std::string state_path;  // overrides state.path when set
  std::string replica;     // overrides state.etcd.replica when set
  // Serve the dashboard's files from this directory, read at every request (development:
  // a change shows on reload), instead of the copies compiled in.
  std::string dashboard_dir;
  std::string log_format = "text";  // "text" | "json" (orchestrator/service/service.h)
};

// Runs the daemon until SIGINT/SIGTERM; SIGHUP reloads the config (config_reload.h). Returns
// an ExitCode (service.h).
int CmdServe(const ServeOptions& options);

// Prints every error and warning as FILE:LINE:COL: [warning: ]message on stderr; returns 0,
// or 2 on any error. A secret that cannot be read here is a warning, or with `strict` an
// error, as `serve` treats it.
int CmdConfigValidate(const std::string& path, bool strict);

}  // namespace icewarden
