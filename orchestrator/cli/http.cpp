#include "orchestrator/cli/http.h"

#include <algorithm>
#include <chrono>

#include <httplib.h>

#include <iostream>
#include <optional>
#include <tuple>

#include "orchestrator/cli/cli.h"

namespace icewarden {

namespace {

// "http://HOST:PORT/rest" split into the server and the path; nullopt for anything else.
std::optional<std::pair<std::string, std::string>> SplitLocation(const std::string& url) {
  if (url.rfind("http://", 0) != 0) return std::nullopt;
  const std::size_t slash = url.find('/', 7);
  if (slash == std::string::npos) return std::nullopt;
  return std::pair{url.substr(0, slash), url.substr(slash)};
}

}  // namespace

ApiAnswer CallApi(const ClientOptions& o, const std::string& method, const std::string& path,
                  const std::string& body, bool quiet) {
  ApiAnswer a;
  std::string server = o.server;
  std::string target = path;
  httplib::Result res{nullptr, httplib::Error::Unknown};
  // A standby replica of an etcd-backed deployment answers 307 with the leader's address;
  // the request goes there as it was, token included (both are this deployment's replicas).
  for (int hop = 0;; ++hop) {
    httplib::Client client(server);
    if (!client.is_valid()) {
      std::cerr << "icewarden: --server " << server
                << " is not a valid URL (expected http://HOST:PORT)\n";
      a.exit_code = kExitUsage;
      return a;
    }
    client.set_connection_timeout(o.timeout_seconds, 0);
    client.set_read_timeout(o.timeout_seconds, 0);
    httplib::Headers headers;
    if (!o.token.empty()) headers.emplace("Authorization", "Bearer " + o.token);
    res = method == "POST" ? client.Post(target, headers, body, "application/json")
                           : client.Get(target, headers);
    if (!res) {
      std::cerr << "icewarden: cannot reach " << server << target << ": "
                << httplib::to_string(res.error())
                << " (is `icewarden serve` running? set --server or ICEWARDEN_SERVER)\n";
      a.exit_code = kExitFailed;
      return a;
    }
    if ((res->status != 307 && res->status != 308) || hop == 3) break;
    auto next = SplitLocation(res->get_header_value("Location"));
    if (!next) break;
    if (!quiet)
      std::cerr << "icewarden: " << server << " is a standby; asking " << next->first << '\n';
    std::tie(server, target) = *next;
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

namespace {
constexpr std::size_t kMaxEventBytes = 4 << 20;
}  // namespace

bool ReadEvents(const ClientOptions& o, std::string& last_event_id, int seconds,
                const std::function<bool(const ServerEvent&)>& on_event) {
  httplib::Client client(o.server);
  if (!client.is_valid()) return false;
  client.set_connection_timeout(o.timeout_seconds, 0);
  // Reading a stream that sends nothing for a while is normal: wake at `seconds` instead.
  client.set_read_timeout(std::max(1, seconds), 0);
  httplib::Headers headers{{"Accept", "text/event-stream"}};
  if (!o.token.empty()) headers.emplace("Authorization", "Bearer " + o.token);
  if (!last_event_id.empty()) headers.emplace("Last-Event-ID", last_event_id);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
  std::string pending;  // text not yet ending in a blank line
  ServerEvent event;
  bool stop = false, ok = true;
  auto res = client.Get(
      "/api/v1/events", headers,
      [&](const httplib::Response& r) {
        ok = r.status == 200;
        return ok;
      },
      [&](const char* data, size_t size) {
        pending.append(data, size);
        // The daemon's events are a few KiB; a line or an event past this is not one of them.
        if (pending.size() > kMaxEventBytes || event.data.size() > kMaxEventBytes) {
          ok = false;
          return false;
        }
        for (size_t nl; !stop && (nl = pending.find('\n')) != std::string::npos;) {
          std::string line = pending.substr(0, nl);
          pending.erase(0, nl + 1);
          if (!line.empty() && line.back() == '\r') line.pop_back();
          if (line.empty()) {  // the end of an event
            if (!event.data.empty() || !event.type.empty()) {
              if (!event.id.empty()) last_event_id = event.id;
              if (event.type.empty()) event.type = "message";
              stop = !on_event(event);
            }
            event = ServerEvent{};
            continue;
          }
          if (line[0] == ':') continue;  // a comment
          const size_t colon = line.find(':');
          std::string field = line.substr(0, colon);
          std::string value = colon == std::string::npos ? "" : line.substr(colon + 1);
          if (!value.empty() && value[0] == ' ') value.erase(0, 1);
          if (field == "id") event.id = value;
          if (field == "event") event.type = value;
          if (field == "data") event.data += (event.data.empty() ? "" : "\n") + value;
        }
        return !stop && std::chrono::steady_clock::now() < deadline;
      });
  return ok && (res || stop || std::chrono::steady_clock::now() >= deadline);
}

std::string FieldText(const nlohmann::json& j, const char* key) {
  if (!j.is_object() || !j.contains(key) || j[key].is_null()) return "-";
  if (j[key].is_string()) return j[key].get<std::string>();
  return j[key].dump();
}

}  // namespace icewarden
