#include "actions/alert_actions.h"

#include "actions/action_kinds.h"

namespace icewarden {

Status registerAlertActions(ActionRegistry& r, const ActionEnv& env) {
  Status s = r.Register(MakeAlertWebhookAction(env));
  if (!s.ok()) return s;
  return r.Register(MakeAlertmanagerAction(env));
}

}  // namespace icewarden
