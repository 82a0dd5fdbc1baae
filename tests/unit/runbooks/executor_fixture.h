// Shared by the RunbookExecutor unit tests: a real SQLite store in memory, the fake actions
// (tests/fakes/scripted_action.h), transitions through the real failover machine, and builders
// for runbook steps whose behaviour is written into their params.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "runbooks/executor.h"
#include "state/sqlite_store.h"
#include "tests/fakes/fake_clock.h"
#include "tests/fakes/machine_transitions.h"
#include "tests/fakes/scripted_action.h"

namespace icewarden::testing {

using Json = nlohmann::json;
using namespace std::chrono_literals;

// A step that retries quickly: tests never sleep for long.
inline RunbookStep MakeStep(std::string id, std::string action, Json params = Json::object()) {
  RunbookStep s;
  s.id = std::move(id);
  s.action = std::move(action);
  s.params = std::move(params);
  s.timeout = 5s;
  s.retry.initial_backoff = 1ms;
  s.retry.max_backoff = 1ms;
  return s;
}

inline RunbookStep Failing(std::string id, std::string action = "fake.idem") {
  return MakeStep(std::move(id), std::move(action), Json{{"outcomes", {"failed"}}});
}

class ExecutorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto opened = OpenSqliteStore({.path = ":memory:"}, clock);
    ASSERT_TRUE(opened.ok()) << opened.status().ToString();
    store = std::move(opened).value();
    RegisterFakeActions(registry, log);
  }

  // Creates fo-1 in `phase` (see CreateTestFailover).
  void CreateFailover(FailoverPhase phase = FailoverPhase::kApproved, bool with_fencing = true) {
    auto created = CreateTestFailover(*store, "fo-1", phase, with_fencing);
    ASSERT_TRUE(created.ok()) << created.status().ToString();
  }

  ExecutionReport Drive(const Runbook& runbook) {
    if (!transitions) transitions = std::make_unique<MachineTransitions>(*store, clock, policy);
    ExecutorOptions options;
    options.policy = policy;
    options.jitter_seed = 7;
    options.sleep = [this](std::chrono::milliseconds d) { sleeps.push_back(d); };
    RunbookExecutor executor(*store, registry, *transitions, clock, options);
    TemplateBindings bindings;
    bindings.failover_id = "fo-1";
    Result<ExecutionReport> report = executor.Drive("fo-1", runbook, bindings);
    EXPECT_TRUE(report.ok()) << report.status().ToString();
    return report.ok() ? *report : ExecutionReport{};
  }

  Failover Stored() {
    auto f = store->GetFailover("fo-1");
    EXPECT_TRUE(f.ok() && f->has_value());
    return f.ok() && f->has_value() ? **f : Failover{};
  }

  std::vector<StepRecord> Journal() {
    auto steps = store->ListSteps("fo-1");
    EXPECT_TRUE(steps.ok());
    return steps.ok() ? *steps : std::vector<StepRecord>{};
  }

  StepRecord Record(const std::string& step_id) {
    for (const StepRecord& r : Journal())
      if (r.step_id == step_id) return r;
    ADD_FAILURE() << "no journal record " << step_id;
    return {};
  }

  // Writes a record as an earlier executor would have, for resume tests.
  void Journaled(const std::string& step_id, const std::string& section, const std::string& action,
                 StepState state, int attempt = 1, std::int64_t completion = 0,
                 const Json& before = nullptr) {
    StepRecord r;
    r.failover_id = "fo-1";
    r.step_id = step_id;
    r.section = section;
    r.action = action;
    r.state = state;
    r.attempt = attempt;
    r.reason = "journaled by the test";
    Json envelope{{"params", Json::object()}, {"detail", Json::object()}};
    if (completion > 0) envelope["completion"] = completion;
    if (!before.is_null()) envelope["before"] = before;
    r.result_json = envelope.dump();
    ASSERT_TRUE(store->PutStep(r).ok());
  }

  std::shared_ptr<FakeClock> clock = std::make_shared<FakeClock>();
  std::unique_ptr<StateStore> store;
  std::shared_ptr<ScriptedActionLog> log = std::make_shared<ScriptedActionLog>();
  ActionRegistry registry;
  FailoverPolicy policy;
  std::unique_ptr<MachineTransitions> transitions;
  std::vector<std::chrono::milliseconds> sleeps;
};

}  // namespace icewarden::testing
