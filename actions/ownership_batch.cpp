#include "actions/ownership_batch.h"

#include <nlohmann/json.hpp>

#include "state/json_text.h"
#include "state/state_store.h"

namespace icewarden {
namespace {

constexpr int kMaxStoreAttempts = 4;

AuditEvent BatchAudit(const TransferSpec& spec, const ActionContext& ctx, std::size_t n,
                      int batch) {
  AuditEvent e;
  e.actor = spec.actor;
  e.source = "internal";
  e.action = "ownership.transfer";
  e.target = spec.scope.text;
  e.reason = (spec.why.empty() ? std::string("ownership.transfer") : spec.why) + ": failover " +
             spec.failover_id + " moves " + std::to_string(n) + " tables of " + spec.scope.text +
             " from " + spec.source + " to " + spec.target + " (batch " + std::to_string(batch) +
             ")";
  e.detail_json = DumpJson(nlohmann::json{{"failover_id", spec.failover_id},
                                          {"step_id", ctx.step_id},
                                          {"batch", batch},
                                          {"tables", n}});
  return e;
}

}  // namespace

BatchMove MoveOwnershipBatch(StateStore& store, const TransferSpec& spec, const ActionContext& ctx,
                             std::vector<Ownership> rows, int batches_before) {
  BatchMove out;
  for (int attempt = 1; !rows.empty(); ++attempt) {
    std::vector<OwnershipChange> changes;
    for (const auto& row : rows)
      changes.push_back({row.table, row.epoch, spec.target, spec.failover_id});
    ++out.transactions;
    Status s = store.CompareAndSetOwnership(
        changes, BatchAudit(spec, ctx, changes.size(), batches_before + out.transactions));
    if (s.ok()) {
      for (auto& row : rows) {
        row.epoch += 1;
        out.moved.push_back(std::move(row));
      }
      return out;
    }
    if (s.code() != StatusCode::kConflict || attempt >= kMaxStoreAttempts) {
      out.status = s;
      return out;
    }
    // Someone changed a row since it was listed: re-read each row and keep what is still ours.
    std::vector<Ownership> still;
    for (const auto& row : rows) {
      auto now = store.GetOwnership(row.table);
      if (!now.ok()) {
        out.status = now.status();
        return out;
      }
      if (!now->has_value()) {
        out.failed.push_back({row.table.ToString(), "no ownership row any more"});
      } else if ((*now)->owner == spec.source &&
                 (!spec.only_failover_id || (*now)->failover_id == *spec.only_failover_id)) {
        still.push_back(**now);
      } else if ((*now)->owner == spec.target && (*now)->failover_id == spec.failover_id) {
        out.already.push_back(**now);
      } else {
        out.failed.push_back({row.table.ToString(), "now owned by " + (*now)->owner + " at epoch " +
                                                        std::to_string((*now)->epoch) +
                                                        " (failover '" + (*now)->failover_id +
                                                        "')"});
      }
    }
    rows = std::move(still);
  }
  return out;
}

}  // namespace icewarden
