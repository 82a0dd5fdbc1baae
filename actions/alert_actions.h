// The alert family: alert.webhook (generic JSON, Slack-compatible or PagerDuty Events v2)
// and alert.alertmanager (a postable alert for Prometheus Alertmanager's v2 API).
// registerAlertActions (alert_actions.cpp) registers both; each kind lives in its own file.
// Thread-safety: the actions are stateless.
#pragma once

#include <memory>
#include <string>

#include "actions/action.h"

namespace icewarden {

std::unique_ptr<Action> MakeAlertWebhookAction(const ActionEnv& env);
std::unique_ptr<Action> MakeAlertmanagerAction(const ActionEnv& env);

// "sha256=<lowercase hex HMAC-SHA256 of body keyed with secret>": the X-Icewarden-Signature
// header of a signed webhook.
std::string WebhookSignature(const std::string& secret, const std::string& body);

}  // namespace icewarden
