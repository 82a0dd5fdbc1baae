// The CLI's one way to talk to the daemon: a request to the HTTP API that either returns the
// JSON body of a 2xx answer or says on stderr what went wrong and how to fix it.
#pragma once

#include <functional>
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

// One server-sent event of GET /api/v1/events.
struct ServerEvent {
  std::string id, type, data;  // type "message" when the event named none
};

// Reads GET /api/v1/events (after `last_event_id` when set) for at most `seconds`, calling
// `on_event` for each event until it returns false. Returns false when the stream could not
// be opened or broke (the caller reconnects); `last_event_id` follows the events read.
bool ReadEvents(const ClientOptions& o, std::string& last_event_id, int seconds,
                const std::function<bool(const ServerEvent&)>& on_event);

// A field of an API answer as text for a table: a string as it is, anything else as JSON,
// "-" when absent or null.
std::string FieldText(const nlohmann::json& j, const char* key);

}  // namespace icewarden
