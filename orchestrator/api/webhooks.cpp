#include "orchestrator/api/webhooks.h"

#include <optional>

#include "orchestrator/api/auth.h"
#include "orchestrator/webhooks/webhooks.h"

namespace icewarden {
namespace {

ApiResponse FromWebhook(const WebhookReply& reply) {
  ApiResponse res;
  res.status = reply.status;
  res.body = reply.body;
  return res;
}

WebhookRequest ToWebhook(const ApiRequest& req) {
  return WebhookRequest{req.headers, req.body, req.remote};
}

// Both schemes: Alertmanager's http_config can send either.
ApiResponse Unauthorized(const std::string& message) {
  ApiResponse res = JsonErrorResponse(401, "unauthorized", message);
  res.headers.emplace_back("WWW-Authenticate", "Bearer realm=\"icewarden\"");
  res.headers.emplace_back("WWW-Authenticate", "Basic realm=\"icewarden\"");
  return res;
}

}  // namespace

ApiResponse HandleAlertmanagerWebhook(WebhookReceiver& receiver, const TokenVerifier& tokens,
                                      const ApiRequest& request) {
  auto header = request.headers.find("authorization");
  if (header == request.headers.end())
    return Unauthorized(
        "missing credentials: send the bearer token or basic auth of a webhooks.alertmanager "
        "receiver (Alertmanager's http_config authorization or basic_auth)");
  if (header->second.size() > kApiMaxAuthorizationBytes)
    return Unauthorized("Authorization header is too long");
  std::optional<std::string> who = receiver.AuthenticateAlertmanager(header->second);
  if (!who) {
    // An API token works too, when its role may propose: the webhook proposes, so a viewer's
    // token must not make it.
    if (auto token = BearerToken(header->second)) {
      if (auto principal = tokens.Verify(*token)) {
        if (!RoleAllows(principal->role, Permission::kProposeFailover))
          return JsonErrorResponse(403, "forbidden",
                                   "token '" + principal->name +
                                       "' may not post alerts (they may propose failovers); "
                                       "that needs the " +
                                       RolesAllowedTo(Permission::kProposeFailover) +
                                       " role, or a webhooks.alertmanager receiver's credentials");
        who = "token:" + principal->name;
      }
    }
  }
  if (!who)
    return Unauthorized(
        "invalid webhook credentials: neither a webhooks.alertmanager receiver's bearer token "
        "or basic auth nor an API token");
  return FromWebhook(receiver.HandleAlertmanager(*who, ToWebhook(request)));
}

ApiResponse HandleGenericWebhook(WebhookReceiver& receiver, const std::string& name,
                                 const ApiRequest& request) {
  return FromWebhook(receiver.HandleGeneric(name, ToWebhook(request)));
}

}  // namespace icewarden
