// The catalog family's action factories: ownership.transfer (catalog_actions.cpp), and the
// checks verify.catalog_healthy, verify.replica_caught_up and fence.catalog_quiet
// (catalog_checks.cpp). registerCatalogActions (action_kinds.h) registers all four; tests make
// one alone.
#pragma once

#include <memory>

#include "actions/action.h"

namespace icewarden {

std::unique_ptr<Action> MakeOwnershipTransferAction(const ActionEnv& env);
std::unique_ptr<Action> MakeCatalogHealthyCheck(const ActionEnv& env);
std::unique_ptr<Action> MakeReplicaCaughtUpCheck(const ActionEnv& env);
std::unique_ptr<Action> MakeCatalogQuietFence(const ActionEnv& env);
// switchover.demotion_token (demotion_token.cpp)
std::unique_ptr<Action> MakeDemotionTokenAction(const ActionEnv& env);

}  // namespace icewarden
