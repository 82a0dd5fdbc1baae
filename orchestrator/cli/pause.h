// The CLI's pause commands (POST /api/v1/pauses[/resume], GET /api/v1/pauses):
//
//   icewarden pause [--scope S] --reason R [--for 2h]   webhooks and scheduled drills
//                                                        propose nothing in S (default all)
//   icewarden resume [--scope S] --reason R             lift the pause of S
//   icewarden pauses                                    what is paused, by whom, until when
//
// Pause and resume act at once, without the confirmation failover commands ask for: a
// pause is the brake an operator reaches for mid-incident, and a resume names its scope.
#pragma once

#include <string>

#include "orchestrator/cli/client.h"

namespace icewarden {

struct PauseOptions {
  std::string scope = "all";
  std::string reason;
  std::string for_duration;  // "2h"; empty: until resumed, with no expected end
};

int CmdPause(const ClientOptions& o, const PauseOptions& p);
int CmdResume(const ClientOptions& o, const std::string& scope, const std::string& reason);
int CmdPauseList(const ClientOptions& o);

}  // namespace icewarden
