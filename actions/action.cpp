#include "actions/action.h"

#include <algorithm>
#include <nlohmann/json.hpp>

namespace icewarden {

ActionResult ActionResult::Succeeded(std::string reason, std::string detail_json) {
  return {Outcome::kSucceeded, std::move(reason), std::move(detail_json)};
}
ActionResult ActionResult::Failed(std::string reason, std::string detail_json) {
  return {Outcome::kFailed, std::move(reason), std::move(detail_json)};
}
ActionResult ActionResult::Unknown(std::string reason, std::string detail_json) {
  return {Outcome::kUnknown, std::move(reason), std::move(detail_json)};
}

const char* OutcomeName(ActionResult::Outcome o) {
  switch (o) {
    case ActionResult::Outcome::kSucceeded:
      return "succeeded";
    case ActionResult::Outcome::kFailed:
      return "failed";
    case ActionResult::Outcome::kUnknown:
      return "unknown";
  }
  return "unknown";
}

Result<std::string> Action::Capture(const nlohmann::json&, const ActionContext&) {
  return std::string();
}

ActionResult Action::Compensate(const nlohmann::json&, const nlohmann::json&,
                                const ActionContext&) {
  return ActionResult::Failed(std::string(kind()) + " has no compensation");
}

Status ActionRegistry::Register(std::unique_ptr<Action> action) {
  if (!action) return Status::InvalidArgument("cannot register a null action");
  if (Find(action->kind()) != nullptr)
    return Status::InvalidArgument("action kind '" + std::string(action->kind()) +
                                   "' is registered twice");
  actions_.push_back(std::move(action));
  return Status::Ok();
}

const Action* ActionRegistry::Find(std::string_view kind) const { return FindMutable(kind); }

Action* ActionRegistry::FindMutable(std::string_view kind) const {
  for (const auto& a : actions_)
    if (a->kind() == kind) return a.get();
  return nullptr;
}

std::vector<std::string> ActionRegistry::Kinds() const {
  std::vector<std::string> kinds;
  for (const auto& a : actions_) kinds.emplace_back(a->kind());
  std::sort(kinds.begin(), kinds.end());
  return kinds;
}

std::string ActionRegistry::UnknownKindMessage(std::string_view kind) const {
  std::string known;
  for (const auto& k : Kinds()) known += (known.empty() ? "" : ", ") + k;
  return "unknown action kind '" + std::string(kind) + "'; known kinds: " + known;
}

}  // namespace icewarden
