// The webhook routes of the HTTP API: how a request is authenticated and handed to the
// WebhookReceiver (orchestrator/webhooks/webhooks.h), whose reply becomes the response.
//
//   POST /api/v1/webhooks/alertmanager   Authorization: a webhooks.alertmanager receiver's
//                                        bearer token or basic auth, or an API token whose
//                                        role may propose failovers (401 / 403 otherwise)
//   POST /api/v1/webhooks/generic/{name} no token: the HMAC signature authenticates it
// Thread-safety: as WebhookReceiver and TokenVerifier.
#pragma once

#include <string>

#include "orchestrator/api/api.h"

namespace icewarden {

class TokenVerifier;
class WebhookReceiver;

ApiResponse HandleAlertmanagerWebhook(WebhookReceiver& receiver, const TokenVerifier& tokens,
                                      const ApiRequest& request);
ApiResponse HandleGenericWebhook(WebhookReceiver& receiver, const std::string& name,
                                 const ApiRequest& request);

}  // namespace icewarden
