// Shared setup for the action tests: a registry with the http, alert, dns and control
// families, and contexts with a deadline and a cancellation flag.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "actions/action.h"
#include "actions/action_kinds.h"
#include "tests/fakes/fake_clock.h"

namespace icewarden::testing {

inline ActionEnv TestActionEnv(std::shared_ptr<Clock> clock = std::make_shared<FakeClock>()) {
  ActionEnv env;
  env.clock = std::move(clock);
  return env;
}

inline void RegisterTestedFamilies(ActionRegistry& r, const ActionEnv& env) {
  ASSERT_TRUE(registerHttpActions(r, env).ok());
  ASSERT_TRUE(registerAlertActions(r, env).ok());
  ASSERT_TRUE(registerDnsActions(r, env).ok());
  ASSERT_TRUE(registerControlActions(r, env).ok());
}

inline ActionContext TestContext(std::chrono::milliseconds timeout,
                                 const Cancellation* cancel = nullptr) {
  ActionContext ctx;
  ctx.failover_id = "fo-42";
  ctx.step_id = "notify";
  ctx.idempotency_key = "fo-42/notify";
  ctx.from = "us-east";
  ctx.to = "us-west";
  ctx.scope = "db.*";
  ctx.deadline = std::chrono::steady_clock::now() + timeout;
  ctx.cancel = cancel;
  return ctx;
}

// "path: message" for each error, in order.
inline std::vector<std::string> ErrorLines(const std::vector<ParamError>& errors) {
  std::vector<std::string> out;
  for (const auto& e : errors) out.push_back(e.path + ": " + e.message);
  return out;
}

inline std::vector<std::string> ErrorPaths(const std::vector<ParamError>& errors) {
  std::vector<std::string> out;
  for (const auto& e : errors) out.push_back(e.path);
  return out;
}

}  // namespace icewarden::testing
