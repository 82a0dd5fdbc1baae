// The catalog family's action factories: ownership.transfer (catalog_actions.cpp), the checks
// verify.catalog_healthy, verify.replica_caught_up (catalog_checks.cpp), fence.catalog_quiet
// (catalog_quiet_fence.cpp), verify.ownership_markers (ownership_markers_check.cpp) and
// switchover.demotion_token. registerCatalogActions (action_kinds.h) registers them all; tests
// make one alone.
#pragma once

#include <memory>

#include "actions/action.h"

namespace icewarden {

std::unique_ptr<Action> MakeOwnershipTransferAction(const ActionEnv& env);
std::unique_ptr<Action> MakeCatalogHealthyCheck(const ActionEnv& env);
std::unique_ptr<Action> MakeReplicaCaughtUpCheck(const ActionEnv& env);
std::unique_ptr<Action> MakeCatalogQuietFence(const ActionEnv& env);
std::unique_ptr<Action> MakeOwnershipMarkersCheck(const ActionEnv& env);
// switchover.demotion_token (demotion_token.cpp)
std::unique_ptr<Action> MakeDemotionTokenAction(const ActionEnv& env);

}  // namespace icewarden
