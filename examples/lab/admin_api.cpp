#include "examples/lab/admin_api.h"

#include <charconv>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "examples/lab/lab.h"

namespace icewarden::lab {
namespace {

using nlohmann::json;

void Reply(httplib::Response& res, int status, const json& body) {
  res.status = status;
  res.set_content(body.dump(2) + "\n", "application/json");
}

void Error(httplib::Response& res, int status, const std::string& message) {
  Reply(res, status, {{"error", message}});
}

// A route's handler, given the request body that OptionalBody() read ("" when none).
using BodyHandler =
    std::function<void(const httplib::Request&, const std::string& body, httplib::Response&)>;

// A handler for a route that works without a body, as the docs print them (`curl -X POST
// URL`, which sends no Content-Length). cpp-httplib 0.11 reads such a request's body until
// the client closes the connection; curl waits for the answer instead, so the read times out
// after 5 s and the request fails with 400 (which the error handler below used to call "no
// route"). A request with neither Content-Length nor Transfer-Encoding has no body (RFC 9112
// section 6.3), so the body is read only when one is declared; httplib dispatches
// content-reader routes before it reads the body itself.
httplib::Server::HandlerWithContentReader OptionalBody(BodyHandler handler) {
  return [handler = std::move(handler)](const httplib::Request& req, httplib::Response& res,
                                        const httplib::ContentReader& read) {
    std::string body;
    if (req.has_header("Content-Length") || req.has_header("Transfer-Encoding")) {
      // On failure httplib has set 400 or 413 (over the payload limit); the error handler
      // words the answer.
      if (!read([&body](const char* data, size_t n) {
            body.append(data, n);
            return true;
          })) {
        return;
      }
    }
    handler(req, body, res);
  };
}

void Post(httplib::Server& server, const std::string& pattern, BodyHandler handler) {
  server.Post(pattern, OptionalBody(std::move(handler)));
}

// The request's JSON object body ({} when empty); false after replying 400.
bool Body(const std::string& text, httplib::Response& res, json* body) {
  if (text.empty()) {
    *body = json::object();
    return true;
  }
  *body = json::parse(text, nullptr, false);
  if (body->is_discarded() || !body->is_object()) {
    Error(res, 400, "the body must be a JSON object");
    return false;
  }
  return true;
}

// Replies with the status: 200 and `ok` on success, 404 for an unknown region, else 400.
void Finish(httplib::Response& res, const LabStatus& status, const json& ok) {
  if (status.ok()) {
    Reply(res, 200, ok);
  } else {
    Error(res, status.message().rfind("unknown region", 0) == 0 ? 404 : 400, status.message());
  }
}

}  // namespace

void RegisterAdminRoutes(httplib::Server& server, Lab& lab) {
  server.Get("/lab/state", [&lab](const httplib::Request&, httplib::Response& res) {
    Reply(res, 200, lab.State());
  });
  Post(server, "/lab/regions/([^/]+)/stop",
       [&lab](const httplib::Request& req, const std::string&, httplib::Response& res) {
         std::string region = req.matches[1];
         Finish(res, lab.StopRegion(region), {{"region", region}, {"up", false}});
       });
  Post(server, "/lab/regions/([^/]+)/start",
       [&lab](const httplib::Request& req, const std::string&, httplib::Response& res) {
         std::string region = req.matches[1];
         Finish(res, lab.StartRegion(region),
                {{"region", region}, {"up", true}, {"url", lab.region_url(region)}});
       });
  Post(server, "/lab/regions/([^/]+)/faults",
       [&lab](const httplib::Request& req, const std::string& text, httplib::Response& res) {
         json body;
         if (!Body(text, res, &body)) return;
         std::string region = req.matches[1];
         auto status = lab.PatchFaults(region, body);
         Finish(res, status, status.ok() ? lab.State()["regions"][region] : json());
       });
  server.Delete("/lab/regions/([^/]+)/faults",
                [&lab](const httplib::Request& req, httplib::Response& res) {
                  std::string region = req.matches[1];
                  auto status = lab.ClearFaults(region);
                  Finish(res, status, status.ok() ? lab.State()["regions"][region] : json());
                });
  Post(server, "/lab/regions/([^/]+)/writes",
       [&lab](const httplib::Request& req, const std::string& text, httplib::Response& res) {
         json body;
         if (!Body(text, res, &body)) return;
         // Required: an empty body pausing (or resuming) by default would be a silent guess.
         if (!body.contains("paused") || !body["paused"].is_boolean()) {
           return Error(res, 400, "give {\"paused\":true} or {\"paused\":false}");
         }
         std::string region = req.matches[1];
         bool paused = body["paused"].get<bool>();
         Finish(res, lab.SetWritesPaused(region, paused),
                {{"region", region}, {"writes_paused", paused}});
       });
  Post(server, "/lab/regions/([^/]+)/rewind",
       [&lab](const httplib::Request& req, const std::string& text, httplib::Response& res) {
         json body;
         if (!Body(text, res, &body)) return;
         // A misspelt field must not widen the rewind to every table.
         for (const auto& field : body.items()) {
           if (field.key() != "table") {
             return Error(res, 400,
                          "unknown field " + field.key() + ": give no body or {\"table\":T}");
           }
         }
         std::optional<std::string> table;
         if (body.contains("table")) {
           if (!body["table"].is_string()) {
             return Error(res, 400, "table must be a dotted table name, like \"sales.orders\"");
           }
           table = body["table"].get<std::string>();
         }
         json result;
         Finish(res, lab.RewindRegion(req.matches[1], table, &result), result);
       });
  Post(server, "/lab/replication/pause",
       [&lab](const httplib::Request&, const std::string&, httplib::Response& res) {
         lab.PauseReplication();
         Reply(res, 200, lab.State()["replication"]);
       });
  Post(server, "/lab/replication/resume",
       [&lab](const httplib::Request&, const std::string&, httplib::Response& res) {
         lab.ResumeReplication();
         Reply(res, 200, lab.State()["replication"]);
       });
  Post(
      server, "/lab/replication",
      [&lab](const httplib::Request&, const std::string& text, httplib::Response& res) {
        json body;
        if (!Body(text, res, &body)) return;
        if (!body.contains("lag_ms") || !body["lag_ms"].is_number_integer() || body["lag_ms"] < 0) {
          return Error(res, 400, "lag_ms must be a non-negative integer");
        }
        lab.SetReplicationLagMs(body["lag_ms"].get<int>());
        Reply(res, 200, lab.State()["replication"]);
      });
  Post(server, "/lab/workload",
       [&lab](const httplib::Request&, const std::string& text, httplib::Response& res) {
         json body;
         if (!Body(text, res, &body)) return;
         json workload = lab.State()["workload"];
         if (body.contains("enabled") && !body["enabled"].is_boolean()) {
           return Error(res, 400, "enabled must be a boolean");
         }
         if (body.contains("interval_ms") &&
             (!body["interval_ms"].is_number_integer() || body["interval_ms"] < 10)) {
           return Error(res, 400, "interval_ms must be an integer of at least 10");
         }
         lab.SetWorkload(body.value("enabled", workload["enabled"].get<bool>()),
                         body.value("interval_ms", 0));
         Reply(res, 200, lab.State()["workload"]);
       });
  Post(server, "/lab/rogue-writer",
       [&lab](const httplib::Request&, const std::string& text, httplib::Response& res) {
         json body;
         if (!Body(text, res, &body)) return;
         if (!body.contains("region") || !body["region"].is_string()) {
           return Error(res, 400, "region must be a string");
         }
         auto status = lab.SetRogueWriter(body["region"], body.value("enabled", true));
         Finish(res, status, status.ok() ? lab.State()["workload"] : json());
       });
  Post(server, "/lab/ownership",
       [&lab](const httplib::Request&, const std::string& text, httplib::Response& res) {
         json body;
         if (!Body(text, res, &body)) return;
         LabStatus status = LabStatus::Ok();
         if (body.contains("default_owner") && body["default_owner"].is_string()) {
           status = lab.SetDefaultOwner(body["default_owner"]);
         } else if (body.contains("match") && body["match"].is_string() && body.contains("owner") &&
                    body["owner"].is_string()) {
           status = lab.SetOwnershipRule(body["match"], body["owner"]);
         } else {
           return Error(res, 400,
                        "give {\"match\":REGEX,\"owner\":REGION} or {\"default_owner\":REGION}");
         }
         Finish(res, status, status.ok() ? lab.State()["ownership"] : json());
       });
  server.Get("/lab/commits", [&lab](const httplib::Request& req, httplib::Response& res) {
    std::optional<std::string> table;
    if (req.has_param("table")) table = req.get_param_value("table");
    int64_t since = 0;
    if (req.has_param("since")) {
      const std::string text = req.get_param_value("since");
      auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), since);
      if (text.empty() || ec != std::errc() || end != text.data() + text.size() || since < 0) {
        return Error(res, 400, "since must be a non-negative integer");
      }
    }
    Reply(res, 200, lab.Commits(table, since));
  });
  // Registered last, so only what no route above matched: without these, an unknown POST, PUT
  // or PATCH with no body would wait for one (see OptionalBody) and fail with 400 after 5 s.
  auto no_route =
      OptionalBody([](const httplib::Request& req, const std::string&, httplib::Response& res) {
        Error(res, 404, "no route for " + req.method + " " + req.path);
      });
  server.Post(".*", no_route);
  server.Put(".*", no_route);
  server.Patch(".*", no_route);
  server.set_error_handler(
      httplib::Server::HandlerWithResponse([](const httplib::Request& req, httplib::Response& res) {
        if (!res.body.empty()) return httplib::Server::HandlerResponse::Unhandled;
        // httplib answers 404 for no route, 400 and 413 for a body it cannot read.
        std::string what = "no route for ";
        if (res.status == 413) what = "the body is too large: ";
        if (res.status == 400) what = "cannot read the request: ";
        Error(res, res.status, what + req.method + " " + req.path);
        return httplib::Server::HandlerResponse::Handled;
      }));
}

}  // namespace icewarden::lab
