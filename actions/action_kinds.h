// The built-in action families, each registered by its own file. registerBuiltinActions
// (builtin_actions.cpp) calls them all; tests may register one family alone.
#pragma once

#include "actions/action.h"

namespace icewarden {

Status registerHttpActions(ActionRegistry& r, const ActionEnv& env);  // http.request, fence.http
Status registerAlertActions(ActionRegistry& r,
                            const ActionEnv& env);  // alert.webhook, alert.alertmanager
Status registerDnsActions(ActionRegistry& r, const ActionEnv& env);      // dns.rfc2136, verify.dns
Status registerControlActions(ActionRegistry& r, const ActionEnv& env);  // wait
// ownership.transfer, verify.catalog_healthy, verify.replica_caught_up, fence.catalog_quiet,
// verify.ownership_markers, switchover.demotion_token
Status registerCatalogActions(ActionRegistry& r, const ActionEnv& env);

}  // namespace icewarden
