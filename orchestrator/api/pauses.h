// The pause routes of the HTTP API (orchestrator/failovers/automation_pause.h says what a
// pause does):
//
//   GET  /api/v1/pauses          {"pauses": [{scope, by, reason, since, expected_end,
//                                 overdue_seconds}]}                            read_failovers
//   POST /api/v1/pauses          {reason, scope?: "all", for?: "2h"} -> 201 {"pause": ...}
//                                pausing a scope again replaces its pause     pause_automation
//   POST /api/v1/pauses/resume   {reason, scope?: "all"} -> 200 {"resumed": ..., the pause}
//                                404 when the scope is not paused             pause_automation
//
// Times are RFC 3339 strings (null for no expected end). `for` is a whole number of s, m,
// h or d. Errors are the API's JSON errors; nothing is written for a refused request.
// Thread-safety: as the store.
#pragma once

#include <string>

#include "orchestrator/api/api.h"
#include "state/clock.h"

namespace icewarden {

class PauseStore;
struct Caller;
struct Config;

ApiResponse HandlePauseList(PauseStore* pauses, UnixMillis now);
ApiResponse HandlePause(PauseStore* pauses, const Config& config, const Caller& caller,
                        const std::string& body, UnixMillis now);
ApiResponse HandleResume(PauseStore* pauses, const Caller& caller, const std::string& body,
                         UnixMillis now);

}  // namespace icewarden
