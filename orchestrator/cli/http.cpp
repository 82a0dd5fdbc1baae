#include "orchestrator/cli/http.h"

#include <httplib.h>

#include <iostream>

#include "orchestrator/cli/cli.h"

namespace icewarden {

ApiAnswer CallApi(const ClientOptions& o, const std::string& method, const std::string& path,
                  const std::string& body, bool quiet) {
  ApiAnswer a;
  httplib::Client client(o.server);
  if (!client.is_valid()) {
    std::cerr << "icewarden: --server " << o.server
              << " is not a valid URL (expected http://HOST:PORT)\n";
    a.exit_code = kExitUsage;
    return a;
  }
  client.set_connection_timeout(o.timeout_seconds, 0);
  client.set_read_timeout(o.timeout_seconds, 0);
  httplib::Headers headers;
  if (!o.token.empty()) headers.emplace("Authorization", "Bearer " + o.token);
  httplib::Result res = method == "POST" ? client.Post(path, headers, body, "application/json")
                                         : client.Get(path, headers);
  if (!res) {
    std::cerr << "icewarden: cannot reach " << o.server << path << ": "
              << httplib::to_string(res.error())
              << " (is `icewarden serve` running? set --server or ICEWARDEN_SERVER)\n";
    a.exit_code = kExitFailed;
    return a;
  }
  a.status = res->status;
  a.body = nlohmann::json::parse(res->body, nullptr, /*allow_exceptions=*/false);
  if (a.body.is_discarded()) a.body = nullptr;
  if (res->status >= 200 && res->status < 300 && !a.body.is_null()) return a;
  a.exit_code = (res->status == 401 || res->status == 403) ? kExitUnauthorized : kExitFailed;
  if (quiet) return a;
  std::string message = res->body;
  if (a.body.is_object() && a.body.contains("error") && a.body["error"].is_object())
    message = a.body["error"].value("message", message);
  std::cerr << "icewarden: " << method << " " << path << " answered " << res->status << ": "
            << message << '\n';
  if (res->status == 401) std::cerr << "  pass a token with --token or ICEWARDEN_TOKEN\n";
  return a;
}

}  // namespace icewarden
