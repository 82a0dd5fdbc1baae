// The CLI's one way to talk to the daemon: a request to the HTTP API that either returns the
// JSON body of a 2xx answer or says on stderr what went wrong and how to fix it.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "orchestrator/cli/client.h"

namespace icewarden {

struct ApiAnswer {
  int exit_code = 0;    // ExitCode: 0, 1 failed, 2 bad --server, 3 401/403
  int status = 0;       // HTTP status, 0 when nothing answered
  nlohmann::json body;  // the parsed body (also of an error answer), null when none
};

// `body` empty: no body (GET). A non-2xx answer is printed as "icewarden: ... answered 409:
// MESSAGE" unless `quiet`.
ApiAnswer CallApi(const ClientOptions& o, const std::string& method, const std::string& path,
                  const std::string& body = "", bool quiet = false);

}  // namespace icewarden
