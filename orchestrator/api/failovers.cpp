#include "orchestrator/api/failovers.h"

#include <nlohmann/json.hpp>

#include "orchestrator/failovers/failover_service.h"
#include "state/json_text.h"

namespace icewarden {
namespace {

using nlohmann::json;

ApiResponse Bad(const std::string& message) {
  return JsonErrorResponse(400, "bad_request", message);
}

// The body as an object holding only `allowed` fields; a string error otherwise.
Result<json> ReadBody(const std::string& body, const std::vector<std::string>& allowed) {
  if (body.empty()) return Status::InvalidArgument("the request needs a JSON object body");
  json doc = json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) return Status::InvalidArgument("the body is not valid JSON");
  if (!doc.is_object()) return Status::InvalidArgument("the body must be a JSON object");
  for (const auto& [key, value] : doc.items()) {
    if (std::find(allowed.begin(), allowed.end(), key) == allowed.end()) {
      std::string list;
      for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + a;
      return Status::InvalidArgument("unknown field '" + key + "'; this request takes " + list);
    }
  }
  return doc;
}

// A string field: absent is "", anything but a string is an error.
Status StringField(const json& doc, const std::string& key, std::string* out) {
  auto it = doc.find(key);
  if (it == doc.end() || it->is_null()) return Status::Ok();
  if (!it->is_string()) return Status::InvalidArgument(key + " must be a string");
  *out = it->get<std::string>();
  return Status::Ok();
}

int HttpStatusOf(const Status& s) {
  switch (s.code()) {
    case StatusCode::kInvalidArgument:
      return 400;
    case StatusCode::kNotFound:
      return 404;
    case StatusCode::kPermissionDenied:
      return 403;
    case StatusCode::kFailedPrecondition:
    case StatusCode::kConflict:
      return 409;
    case StatusCode::kUnavailable:
      return 503;
    default:
      return 500;
  }
}

const char* ErrorCodeOf(const Status& s) {
  switch (s.code()) {
    case StatusCode::kInvalidArgument:
      return "bad_request";
    case StatusCode::kNotFound:
      return "not_found";
    case StatusCode::kPermissionDenied:
      return "forbidden";
    case StatusCode::kFailedPrecondition:
      return "refused";
    case StatusCode::kConflict:
      return "conflict";
    case StatusCode::kUnavailable:
      return "unavailable";
    default:
      return "store_error";
  }
}

ApiResponse Answer(const CommandOutcome& out, int ok_status) {
  if (out.status.ok()) return JsonResponse(ok_status, out.body);
  json body = out.body.is_object() ? out.body : json::object();
  std::string code = ErrorCodeOf(out.status);
  if (body.contains("code")) {
    code = body["code"].get<std::string>();
    body.erase("code");
  }
  body["error"] = {{"code", code}, {"message", out.status.message()}};
  return JsonResponse(HttpStatusOf(out.status), body);
}

}  // namespace

ApiResponse HandleFailoverCommand(FailoverService& service, FailoverCommand command,
                                  const Caller& caller, const std::string& id,
                                  const std::string& body) {
  switch (command) {
    case FailoverCommand::kPropose: {
      auto doc = ReadBody(body, {"kind", "to", "scope", "from", "reason", "dry_run"});
      if (!doc.ok()) return Bad(doc.status().message());
      ProposeRequest req;
      std::string kind = "failover";
      for (auto [key, out] : {std::pair{"kind", &kind},
                              {"to", &req.to},
                              {"scope", &req.scope},
                              {"from", &req.from},
                              {"reason", &req.reason}})
        if (Status s = StringField(*doc, key, out); !s.ok()) return Bad(s.message());
      if (kind != "failover" && kind != "switchover")
        return Bad("kind must be failover or switchover, got '" + kind + "'");
      req.kind = *ParseFailoverKind(kind);
      for (auto [key, value] : {std::pair{"to", &req.to}, {"scope", &req.scope}})
        if (value->empty()) return Bad(std::string(key) + " is required");
      if (auto it = doc->find("dry_run"); it != doc->end()) {
        if (!it->is_boolean()) return Bad("dry_run must be true or false");
        req.dry_run = it->get<bool>();
      }
      CommandOutcome out = service.Propose(caller, req);
      return Answer(out, req.dry_run ? 200 : 201);
    }
    case FailoverCommand::kApprove: {
      auto doc = ReadBody(body, {"plan_hash", "reason", "accept_data_loss", "cooldown_override",
                                 "force_candidate"});
      if (!doc.ok()) return Bad(doc.status().message());
      ApproveRequest req;
      for (auto [key, out] : {std::pair{"plan_hash", &req.plan_hash},
                              {"reason", &req.reason},
                              {"accept_data_loss", &req.accept_data_loss},
                              {"cooldown_override", &req.cooldown_override},
                              {"force_candidate", &req.force_candidate}})
        if (Status s = StringField(*doc, key, out); !s.ok()) return Bad(s.message());
      return Answer(service.Approve(caller, id, req), 200);
    }
    case FailoverCommand::kConfirmFencing:
    case FailoverCommand::kAbort:
    case FailoverCommand::kAck: {
      const std::string field = command == FailoverCommand::kAck ? "comment" : "reason";
      auto doc = ReadBody(body, {field});
      if (!doc.ok()) return Bad(doc.status().message());
      std::string text;
      if (Status s = StringField(*doc, field, &text); !s.ok()) return Bad(s.message());
      if (text.empty()) return Bad(field + " is required: say why, for the audit log");
      if (command == FailoverCommand::kAck) return Answer(service.Ack(caller, id, text), 200);
      if (command == FailoverCommand::kAbort) return Answer(service.Abort(caller, id, text), 200);
      return Answer(service.ConfirmFencing(caller, id, text), 200);
    }
  }
  return JsonErrorResponse(500, "internal", "unknown command");
}

}  // namespace icewarden
