// ownership.transfer, and registerCatalogActions for the whole catalog family (the checks live
// in catalog_checks.cpp).
#include <nlohmann/json.hpp>

#include "actions/action_kinds.h"
#include "actions/catalog_checks.h"
#include "actions/catalog_scope.h"
#include "actions/ownership_transfer.h"
#include "actions/param_reader.h"
#include "actions/preflight.h"

namespace icewarden {

namespace {

struct TransferParams {
  std::optional<std::string> scope;  // default: the failover's scope
  bool write_catalog_properties = true;
  int concurrency = 64;
  int batch_size = 500;
};

TransferParams ParseTransferParams(const nlohmann::json& params, std::vector<ParamError>* errors) {
  CheckParamKeys(params, {"scope", "write_catalog_properties", "concurrency", "batch_size"},
                 errors);
  TransferParams p;
  p.scope = StringParam(params, "scope", errors);
  if (p.scope) {
    auto parsed = CatalogScope::Parse(*p.scope);
    if (!parsed.ok()) errors->push_back({"scope", parsed.status().message()});
  }
  if (auto v = BoolParam(params, "write_catalog_properties", errors))
    p.write_catalog_properties = *v;
  if (auto v = IntParam(params, "concurrency", 1, 256, errors))
    p.concurrency = static_cast<int>(*v);
  if (auto v = IntParam(params, "batch_size", 1, 10'000, errors))
    p.batch_size = static_cast<int>(*v);
  return p;
}

// Turns a report into the step's result. Partial effects are kUnknown: the action is idempotent,
// so running it again continues where this run stopped.
ActionResult ToResult(const TransferSpec& spec, const TransferReport& r, const char* verb) {
  std::string detail = r.ToJson(spec);
  std::string what = std::string(verb) + " " + std::to_string(r.moved) + " tables of " +
                     spec.scope.text + " from " + spec.source + " to " + spec.target;
  if (r.complete()) {
    if (r.moved == 0 && r.already_moved == 0)
      return ActionResult::Succeeded("no table of " + spec.scope.text + " is owned by " +
                                         spec.source + " in the store: nothing to move",
                                     detail);
    std::string reason = what + " (epochs +1)";
    if (r.already_moved > 0)
      reason += "; " + std::to_string(r.already_moved) + " were already moved by this failover";
    if (spec.write_catalog_properties)
      reason += "; markers in " + spec.target + ": " + std::to_string(r.markers_written) +
                " written, " + std::to_string(r.markers_present) + " already there";
    return ActionResult::Succeeded(reason, detail);
  }
  std::string why;
  if (r.expired) {
    why = "stopped by the deadline or cancellation";
  } else if (r.store_error) {
    why = "state store: " + r.store_error->ToString();
  } else {
    why = std::to_string(r.failed) + " tables not done";
    if (!r.first_errors.empty())
      why += ", first " + r.first_errors.front().table + ": " + r.first_errors.front().error;
  }
  if (r.applied() || r.already_moved > 0)
    return ActionResult::Unknown(what + ", then " + why + "; running the step again resumes",
                                 detail);
  return ActionResult::Failed("moved nothing: " + why, detail);
}

class OwnershipTransferAction final : public Action, public ActionPreflight {
 public:
  explicit OwnershipTransferAction(ActionEnv env) : env_(std::move(env)) {}

  // Readiness: the region gaining ownership accepts our credentials (it gets the markers and
  // takes the writes).
  std::vector<std::string> Preflight(const nlohmann::json& params,
                                     const ActionContext& ctx) const override {
    std::vector<ParamError> errors;
    ParseTransferParams(params, &errors);
    if (!errors.empty()) return {"ownership.transfer: " + FirstParamError(errors)};
    if (auto why = CatalogAcceptsUs(env_, ctx.to, ctx)) return {*why};
    return {};
  }

  std::string_view kind() const override { return "ownership.transfer"; }
  bool idempotent() const override { return true; }
  bool has_compensation() const override { return true; }

  std::vector<ParamError> Validate(const nlohmann::json& params) const override {
    std::vector<ParamError> errors;
    ParseTransferParams(params, &errors);
    return errors;
  }

  std::string Plan(const nlohmann::json& params) const override {
    std::vector<ParamError> errors;
    TransferParams p = ParseTransferParams(params, &errors);
    std::string scope = p.scope ? *p.scope : "the failover's scope";
    std::string plan = "move every table of " + scope +
                       " owned by the 'from' region to the 'to' region in the state store "
                       "(compare-and-set, epoch +1, batches of " +
                       std::to_string(p.batch_size) + ")";
    if (p.write_catalog_properties)
      plan +=
          ", then set icewarden.owner/icewarden.epoch in the 'to' region's catalog "
          "(up to " +
          std::to_string(p.concurrency) + " commits in flight)";
    else
      plan += "; catalog markers are not written";
    return plan;
  }

  ActionResult Run(const nlohmann::json& params, const ActionContext& ctx) override {
    auto spec = MakeSpec(params, ctx);
    if (!spec.ok()) return ActionResult::Failed(spec.status().message());
    spec->why = "ownership.transfer";
    TransferReport report = TransferOwnership(*spec, env_, ctx);
    return ToResult(*spec, report, "moved");
  }

  // Moves back what this failover moved (rows owned by `to` whose failover id is this one),
  // with another epoch bump, and writes the markers in the 'from' region's catalog again.
  ActionResult Compensate(const nlohmann::json& params, const nlohmann::json&,
                          const ActionContext& ctx) override {
    auto spec = MakeSpec(params, ctx);
    if (!spec.ok()) return ActionResult::Failed(spec.status().message());
    std::swap(spec->source, spec->target);
    spec->only_failover_id = ctx.failover_id;
    spec->why = "compensation of ownership.transfer";
    TransferReport report = TransferOwnership(*spec, env_, ctx);
    return ToResult(*spec, report, "moved back");
  }

 private:
  Result<TransferSpec> MakeSpec(const nlohmann::json& params, const ActionContext& ctx) const {
    std::vector<ParamError> errors;
    TransferParams p = ParseTransferParams(params, &errors);
    if (!errors.empty()) return Status::InvalidArgument(FirstParamError(errors));
    if (ctx.from.empty() || ctx.to.empty() || ctx.from == ctx.to)
      return Status::InvalidArgument("ownership.transfer needs two different regions, from '" +
                                     ctx.from + "' and to '" + ctx.to + "'");
    if (ctx.failover_id.empty())
      return Status::InvalidArgument("ownership.transfer needs a failover id");
    auto scope = CatalogScope::Parse(p.scope ? *p.scope : ctx.scope);
    if (!scope.ok()) return scope.status();
    if (scope->kind == CatalogScope::Kind::kOwner && scope->owner_region() != ctx.from)
      return Status::InvalidArgument("scope " + scope->text + " names region '" +
                                     scope->owner_region() + "', but the failover moves from '" +
                                     ctx.from + "'");
    TransferSpec spec;
    spec.scope = *scope;
    spec.source = ctx.from;
    spec.target = ctx.to;
    spec.failover_id = ctx.failover_id;
    spec.write_catalog_properties = p.write_catalog_properties;
    spec.concurrency = p.concurrency;
    spec.batch_size = static_cast<std::size_t>(p.batch_size);
    return spec;
  }

  ActionEnv env_;
};

}  // namespace

std::unique_ptr<Action> MakeOwnershipTransferAction(const ActionEnv& env) {
  return std::make_unique<OwnershipTransferAction>(env);
}

Status registerCatalogActions(ActionRegistry& r, const ActionEnv& env) {
  for (auto* make :
       {&MakeOwnershipTransferAction, &MakeCatalogHealthyCheck, &MakeReplicaCaughtUpCheck,
        &MakeCatalogQuietFence, &MakeOwnershipMarkersCheck, &MakeDemotionTokenAction}) {
    if (Status s = r.Register((*make)(env)); !s.ok()) return s;
  }
  return Status::Ok();
}

}  // namespace icewarden
