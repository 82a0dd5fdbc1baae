#include "tests/fakes/scripted_action.h"

#include <chrono>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <thread>

namespace icewarden::testing {
namespace {

ActionResult Outcome(const std::string& name, const std::string& reason,
                     const nlohmann::json& detail) {
  if (name == "failed") return ActionResult::Failed(reason + " failed");
  if (name == "unknown") return ActionResult::Unknown(reason + " had an unknown outcome");
  if (name == "throw") throw std::runtime_error(reason + " threw");
  return ActionResult::Succeeded(reason + " succeeded", detail.dump());
}

// Waits up to delay_ms; false when the context ended the wait first.
bool Delay(const nlohmann::json& params, const ActionContext& ctx) {
  const int ms = params.value("delay_ms", 0);
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
  while (std::chrono::steady_clock::now() < until) {
    if (ctx.expired()) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

}  // namespace

void ScriptedActionLog::Add(Event e) {
  std::lock_guard lock(mu_);
  events_.push_back(std::move(e));
}

std::vector<ScriptedActionLog::Event> ScriptedActionLog::Events() const {
  std::lock_guard lock(mu_);
  return events_;
}

std::vector<std::string> ScriptedActionLog::Runs() const {
  std::vector<std::string> out;
  for (const Event& e : Events())
    if (e.what == "start") out.push_back(e.step_id);
  return out;
}

int ScriptedActionLog::RunCount(const std::string& step_id) const {
  int n = 0;
  for (const std::string& s : Runs()) n += s == step_id ? 1 : 0;
  return n;
}

std::vector<std::string> ScriptedActionLog::Undone() const {
  static const std::string kSuffix = ".compensate";
  std::vector<std::string> out;
  for (const Event& e : Events()) {
    const bool inline_undo =
        e.what == "start" && e.step_id.size() > kSuffix.size() && e.step_id.ends_with(kSuffix);
    if (e.what == "compensate" || inline_undo)
      out.push_back(e.step_id.substr(0, e.step_id.size() - kSuffix.size()));
  }
  return out;
}

std::vector<std::string> ScriptedActionLog::Lines() const {
  std::vector<std::string> out;
  for (const Event& e : Events()) out.push_back(e.what + " " + e.step_id);
  return out;
}

ScriptedAction::ScriptedAction(std::string kind, bool idempotent, bool has_compensation,
                               std::shared_ptr<ScriptedActionLog> log)
    : kind_(std::move(kind)),
      idempotent_(idempotent),
      has_compensation_(has_compensation),
      log_(std::move(log)) {}

std::vector<ParamError> ScriptedAction::Validate(const nlohmann::json&) const { return {}; }

std::string ScriptedAction::Plan(const nlohmann::json& params) const {
  return kind_ + " " + params.dump();
}

Result<std::string> ScriptedAction::Capture(const nlohmann::json& params,
                                            const ActionContext& ctx) {
  if (!params.contains("capture")) return std::string();
  if (params["capture"] == "error") {
    log_->Add({"capture", kind_, ctx.step_id, "failed", nlohmann::json(), ""});
    return Status::Unavailable("the fake could not read the state");
  }
  int call;
  {
    std::lock_guard lock(mu_);
    call = ++captures_[ctx.idempotency_key];
  }
  std::string captured = nlohmann::json{{"captured", params["capture"]}, {"call", call}}.dump();
  log_->Add({"capture", kind_, ctx.step_id, "succeeded", nlohmann::json(), captured});
  return captured;
}

ActionResult ScriptedAction::Run(const nlohmann::json& params, const ActionContext& ctx) {
  int call;
  {
    std::lock_guard lock(mu_);
    call = calls_[ctx.idempotency_key]++;
  }
  log_->Add({"start", kind_, ctx.step_id, "", nlohmann::json(), ctx.before_json});
  nlohmann::json outcomes = params.value("outcomes", nlohmann::json::array({"succeeded"}));
  std::string name =
      outcomes.empty()
          ? "succeeded"
          : outcomes.at(std::min<std::size_t>(call, outcomes.size() - 1)).get<std::string>();
  ActionResult result;
  if (!Delay(params, ctx)) {
    result = ActionResult::Unknown(ctx.step_id + " cancelled");
  } else {
    try {
      result = Outcome(name, ctx.step_id, params.value("detail", nlohmann::json::object()));
    } catch (...) {
      log_->Add({"end", kind_, ctx.step_id, "threw", nlohmann::json()});
      throw;
    }
  }
  log_->Add({"end", kind_, ctx.step_id, OutcomeName(result.outcome), nlohmann::json()});
  return result;
}

ActionResult ScriptedAction::Compensate(const nlohmann::json& params,
                                        const nlohmann::json& run_detail,
                                        const ActionContext& ctx) {
  ActionResult result = Outcome(params.value("compensate", "succeeded"),
                                "compensating " + ctx.step_id, nlohmann::json::object());
  log_->Add({"compensate", kind_, ctx.step_id, OutcomeName(result.outcome), run_detail});
  return result;
}

void RegisterFakeActions(ActionRegistry& registry, const std::shared_ptr<ScriptedActionLog>& log) {
  (void)registry.Register(std::make_unique<ScriptedAction>("fake.idem", true, true, log));
  (void)registry.Register(std::make_unique<ScriptedAction>("fake.once", false, true, log));
  (void)registry.Register(std::make_unique<ScriptedAction>("fake.nocomp", true, false, log));
  (void)registry.Register(std::make_unique<ScriptedAction>("fake.once_nocomp", false, false, log));
}

}  // namespace icewarden::testing
