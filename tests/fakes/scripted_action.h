// ScriptedAction: an Action whose behaviour a test writes into the step's params, and a log of
// everything fake actions did (runs, compensations, start and end order).
//
// Params understood by every fake action:
//   "outcomes": ["failed", "unknown", "succeeded", "throw"]  per attempt (per idempotency
//               key); the last one repeats; default ["succeeded"]
//   "delay_ms": N          blocks up to N ms per call, returning early (kUnknown, "cancelled")
//                          when the context is cancelled or expires
//   "compensate": "failed" | "unknown" | "succeeded"   outcome of Compensate (default succeeded)
//   "detail": {...}        detail_json of a success (Compensate gets it back as run_detail)
//   "capture": V           Capture returns {"captured": V, "call": N} (N counts Capture calls
//                          per idempotency key); "capture": "error" fails Capture
//
// Thread-safety: every method may be called from any thread.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "actions/action.h"

namespace icewarden::testing {

class ScriptedActionLog {
 public:
  struct Event {
    std::string what;             // "capture" | "start" | "end" | "compensate"
    std::string kind;             // action kind
    std::string step_id;          // ctx.step_id ("p1", "p1.compensate")
    std::string outcome;          // for "end" and "compensate": succeeded | failed | unknown
    nlohmann::json run_detail{};  // for "compensate"
    std::string before{};         // "start": ctx.before_json; "capture": what Capture returned
  };
  void Add(Event e);
  std::vector<Event> Events() const;
  // Step ids of every Run call, in the order they started (repeats included).
  std::vector<std::string> Runs() const;
  int RunCount(const std::string& step_id) const;
  // The steps undone, in order: Compensate calls and Runs of inline "X.compensate" records,
  // both as "X".
  std::vector<std::string> Undone() const;
  // "start p1", "end p1", "compensate p1" lines, in order.
  std::vector<std::string> Lines() const;

 private:
  mutable std::mutex mu_;
  std::vector<Event> events_;
};

class ScriptedAction final : public Action {
 public:
  ScriptedAction(std::string kind, bool idempotent, bool has_compensation,
                 std::shared_ptr<ScriptedActionLog> log);

  std::string_view kind() const override { return kind_; }
  bool idempotent() const override { return idempotent_; }
  std::vector<ParamError> Validate(const nlohmann::json& params) const override;
  std::string Plan(const nlohmann::json& params) const override;
  Result<std::string> Capture(const nlohmann::json& params, const ActionContext& ctx) override;
  ActionResult Run(const nlohmann::json& params, const ActionContext& ctx) override;
  bool has_compensation() const override { return has_compensation_; }
  ActionResult Compensate(const nlohmann::json& params, const nlohmann::json& run_detail,
                          const ActionContext& ctx) override;

 private:
  std::string kind_;
  bool idempotent_;
  bool has_compensation_;
  std::shared_ptr<ScriptedActionLog> log_;
  std::mutex mu_;
  std::map<std::string, int> calls_;     // by idempotency key
  std::map<std::string, int> captures_;  // by idempotency key
};

// Registers the usual fakes into `registry`, sharing `log`:
//   fake.idem        idempotent, with compensation
//   fake.once        not idempotent, with compensation
//   fake.nocomp      idempotent, no compensation
//   fake.once_nocomp not idempotent, no compensation
void RegisterFakeActions(ActionRegistry& registry, const std::shared_ptr<ScriptedActionLog>& log);

}  // namespace icewarden::testing
