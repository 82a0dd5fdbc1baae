// The CLI's drill commands: run, list, report, note (docs/drills.md).
//
//   icewarden drill run NAME [--mode plan|shadow|live] [--no-wait]
//       starts a run; unless --no-wait, follows it until it finishes (or, for a live run,
//       until it waits for a person's approval) and prints its report. Exit 0 when the run
//       passed (or waits), 1 when it failed.
//   icewarden drill list
//   icewarden drill report ID
//   icewarden drill note ID TEXT
// Every command takes --output table|json; json prints the API's body unchanged.
#pragma once

#include <string>

#include "orchestrator/cli/client.h"

namespace icewarden {

int CmdDrillRun(const ClientOptions& o, const std::string& name, const std::string& mode, bool wait,
                int timeout_seconds);
int CmdDrillList(const ClientOptions& o);
int CmdDrillReport(const ClientOptions& o, const std::string& id);
int CmdDrillNote(const ClientOptions& o, const std::string& id, const std::string& text);

}  // namespace icewarden
