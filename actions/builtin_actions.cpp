#include "actions/action_kinds.h"

namespace icewarden {

// Every built-in family, explicitly; a name registered twice fails here, at start-up.
Status registerBuiltinActions(ActionRegistry& registry, const ActionEnv& env) {
  for (auto family : {registerHttpActions, registerAlertActions, registerDnsActions,
                      registerControlActions, registerCatalogActions}) {
    if (Status s = family(registry, env); !s.ok()) return s;
  }
  return Status::Ok();
}

}  // namespace icewarden
