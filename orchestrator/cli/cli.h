// The icewarden command line: `icewarden <noun> <verb>`.
//
// Exit codes, the same for every command: 0 ok, 1 the operation failed, 2 usage or
// validation error, 3 not authorized. Read commands talk to a running daemon over the
// HTTP API (--server, --token or ICEWARDEN_TOKEN) and print --output table|json.
#pragma once

#include "orchestrator/service/service.h"  // ExitCode

namespace icewarden {

int RunCli(int argc, char** argv);

}  // namespace icewarden
