// What the executor crash runner (tests/helpers/executor_crash_runner.cpp) and the crash
// test that kills it (tests/crash/runbooks/executor_crash_test.cpp) agree on.
//
// The runner drives failover kCrashFailoverId through one of two runbooks. Its actions
// append one line per effect to a side file, fsynced before they return: "RUN <record id>"
// for a run and "COMP <record id>" for an action's own compensation, so the test can count
// real effects independently of the journal.
#pragma once

#include <set>
#include <string>

namespace icewarden::testing {

inline constexpr const char* kCrashFailoverId = "fo-crash";
// rec.idem: idempotent, with compensation; rec.once: not idempotent, with compensation;
// rec.fail: not idempotent, always fails without an effect.
inline const std::set<std::string>& NonIdempotentCrashKinds() {
  static const std::set<std::string> kinds{"rec.once", "rec.fail"};
  return kinds;
}

// Variants: "complete" (3 fence, 3 promote, 2 verify in a parallel group: ends completed)
// and "rollback" (the third promote step fails: ends rolled back after compensation).

}  // namespace icewarden::testing
