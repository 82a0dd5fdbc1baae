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

// "http://HOST:PORT/rest" (or https://) split into the server and the path; nullopt for
// anything else.
std::optional<std::pair<std::string, std::string>> SplitLocation(const std::string& url) {
  const std::size_t start = url.rfind("http://", 0) == 0    ? 7
                            : url.rfind("https://", 0) == 0 ? 8
                                                            : 0;
  if (start == 0) return std::nullopt;
  const std::size_t slash = url.find('/', start);
  if (slash == std::string::npos) return std::nullopt;
  return std::pair{url.substr(0, slash), url.substr(slash)};
}

// A client for `server` with the TLS settings of `o` (used only for https:// servers).
httplib::Client MakeClient(const ClientOptions& o, const std::string& server) {
  httplib::Client client = o.cert_file.empty() ? httplib::Client(server)
                                               : httplib::Client(server, o.cert_file, o.key_file);
  if (!o.ca_file.empty()) client.set_ca_cert_path(o.ca_file);
  return client;
}

// What a failed TLS call most likely needs, for the error line.
std::string TlsAdvice(const ClientOptions& o, const std::string& server, httplib::Error error) {
  if (server.rfind("https://", 0) != 0) return "";
  if (error == httplib::Error::SSLServerVerification)
    return o.ca_file.empty() ? "; pass the CA that signed the daemon's certificate with --cacert "
                               "or ICEWARDEN_CACERT"
                             : "; the daemon's certificate is not signed by --cacert " + o.ca_file +
                                   " or does not name the host in --server";
  // Under TLS 1.3 a refused client certificate shows after the handshake, as a failed read.
  if (error == httplib::Error::SSLConnection || error == httplib::Error::Read)
    return o.cert_file.empty() ? "; a daemon with api.tls.client_ca_file asks for a client "
                                 "certificate: pass --cert and --key"
                               : "; the daemon refused the handshake (is --cert " + o.cert_file +
                                     " signed by its api.tls.client_ca_file?)";
  return "";
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
    httplib::Client client = MakeClient(o, server);
    if (!client.is_valid()) {
      std::cerr << "icewarden: --server " << server
                << " is not a valid URL (expected http://HOST:PORT or https://HOST:PORT)\n";
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
      const std::string advice = TlsAdvice(o, server, res.error());
      std::cerr << "icewarden: cannot reach " << server << target << ": "
                << httplib::to_string(res.error())
                << (advice.empty() ? " (is `icewarden serve` running? set --server or "
                                     "ICEWARDEN_SERVER)"
                                   : advice)
                << "\n";
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
  httplib::Client client = MakeClient(o, o.server);
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
