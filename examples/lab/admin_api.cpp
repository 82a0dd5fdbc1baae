#include "examples/lab/admin_api.h"

#include <nlohmann/json.hpp>

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

// The request's JSON object body ({} when empty); false after replying 400.
bool Body(const httplib::Request& req, httplib::Response& res, json* body) {
  if (req.body.empty()) {
    *body = json::object();
    return true;
  }
  *body = json::parse(req.body, nullptr, false);
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
  server.Post("/lab/regions/([^/]+)/stop",
              [&lab](const httplib::Request& req, httplib::Response& res) {
                std::string region = req.matches[1];
                Finish(res, lab.StopRegion(region), {{"region", region}, {"up", false}});
              });
  server.Post("/lab/regions/([^/]+)/start",
              [&lab](const httplib::Request& req, httplib::Response& res) {
                std::string region = req.matches[1];
                Finish(res, lab.StartRegion(region),
                       {{"region", region}, {"up", true}, {"url", lab.region_url(region)}});
              });
  server.Post("/lab/regions/([^/]+)/faults",
              [&lab](const httplib::Request& req, httplib::Response& res) {
                json body;
                if (!Body(req, res, &body)) return;
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
  server.Post("/lab/replication/pause", [&lab](const httplib::Request&, httplib::Response& res) {
    lab.PauseReplication();
    Reply(res, 200, lab.State()["replication"]);
  });
  server.Post("/lab/replication/resume", [&lab](const httplib::Request&, httplib::Response& res) {
    lab.ResumeReplication();
    Reply(res, 200, lab.State()["replication"]);
  });
  server.Post("/lab/replication", [&lab](const httplib::Request& req, httplib::Response& res) {
    json body;
    if (!Body(req, res, &body)) return;
    if (!body.contains("lag_ms") || !body["lag_ms"].is_number_integer() || body["lag_ms"] < 0) {
      return Error(res, 400, "lag_ms must be a non-negative integer");
    }
    lab.SetReplicationLagMs(body["lag_ms"].get<int>());
    Reply(res, 200, lab.State()["replication"]);
  });
  server.Post("/lab/workload", [&lab](const httplib::Request& req, httplib::Response& res) {
    json body;
    if (!Body(req, res, &body)) return;
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
  server.Post("/lab/rogue-writer", [&lab](const httplib::Request& req, httplib::Response& res) {
    json body;
    if (!Body(req, res, &body)) return;
    if (!body.contains("region") || !body["region"].is_string()) {
      return Error(res, 400, "region must be a string");
    }
    auto status = lab.SetRogueWriter(body["region"], body.value("enabled", true));
    Finish(res, status, status.ok() ? lab.State()["workload"] : json());
  });
  server.Post("/lab/ownership", [&lab](const httplib::Request& req, httplib::Response& res) {
    json body;
    if (!Body(req, res, &body)) return;
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
  server.set_error_handler(
      httplib::Server::HandlerWithResponse([](const httplib::Request& req, httplib::Response& res) {
        if (!res.body.empty()) return httplib::Server::HandlerResponse::Unhandled;
        Error(res, res.status, "no route for " + req.method + " " + req.path);
        return httplib::Server::HandlerResponse::Handled;
      }));
}

}  // namespace icewarden::lab
