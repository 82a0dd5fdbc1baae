#include "orchestrator/api/failovers.h"

#include <nlohmann/json.hpp>

#include "orchestrator/api/command_body.h"
#include "orchestrator/failovers/failover_service.h"
#include "state/json_text.h"

namespace icewarden {
namespace {

using nlohmann::json;

ApiResponse Bad(const std::string& message) { return BadRequestResponse(message); }

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
      auto doc = ReadBody(
          body, {"kind", "to", "scope", "from", "route", "reason", "dry_run", "accept_data_loss"});
      if (!doc.ok()) return Bad(doc.status().message());
      ProposeRequest req;
      std::string kind = "failover";
      for (auto [key, out] : {std::pair{"kind", &kind},
                              {"to", &req.to},
                              {"scope", &req.scope},
                              {"from", &req.from},
                              {"route", &req.route},
                              {"reason", &req.reason},
                              {"accept_data_loss", &req.accept_data_loss}})
        if (Status s = StringField(*doc, key, out); !s.ok()) return Bad(s.message());
      if (kind != "failover" && kind != "switchover" && kind != "failback")
        return Bad("kind must be failover, switchover or failback, got '" + kind + "'");
      if (auto it = doc->find("dry_run"); it != doc->end()) {
        if (!it->is_boolean()) return Bad("dry_run must be true or false");
        req.dry_run = it->get<bool>();
      }
      if (kind == "failback") {
        // The way back: the region and the tables come from the failover being undone.
        if (!req.to.empty() || !req.from.empty())
          return Bad(
              "a failback takes no to or from: it returns the scope to the region its "
              "last failover left");
        if (req.scope.empty()) return Bad("scope is required");
        if (!req.route.empty())
          return Bad(
              "a failback takes no route: it runs the switchover route back to the "
              "region its last failover left");
        FailbackRequest back{req.scope, req.reason, req.accept_data_loss, req.dry_run};
        return Answer(service.Failback(caller, back), req.dry_run ? 200 : 201);
      }
      req.kind = *ParseFailoverKind(kind);
      for (auto [key, value] : {std::pair{"to", &req.to}, {"scope", &req.scope}})
        if (value->empty()) return Bad(std::string(key) + " is required");
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
