#include "orchestrator/watch/table_discovery.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <vector>

#include "orchestrator/config/config.h"
#include "state/state_store.h"

namespace icewarden {
namespace {

// Tables claimed per transaction.
constexpr std::size_t kClaimChunk = 5000;

}  // namespace

std::optional<std::string> TableDiscovery::OwnerOf(const TableIdent& t) {
  auto found = store_.GetOwnership(t);
  if (found.ok() && found->has_value()) return (*found)->owner;
  if (found.ok()) unclaimed_.insert(t);
  return config_.OwnerFor(t.ToString());
}

void TableDiscovery::ClaimDiscovered() {
  std::vector<TableIdent> tables(unclaimed_.begin(), unclaimed_.end());
  unclaimed_.clear();
  for (std::size_t at = 0; at < tables.size(); at += kClaimChunk) {
    std::vector<OwnershipChange> changes;
    for (std::size_t i = at; i < std::min(tables.size(), at + kClaimChunk); ++i)
      changes.push_back({tables[i], 0, config_.OwnerFor(tables[i].ToString()), ""});
    AuditEvent why;
    why.actor = "orchestrator";
    why.source = "catalog discovery";
    why.action = "ownership.claim";
    why.target = std::to_string(changes.size()) + " tables";
    why.reason =
        "found in the catalogs with no recorded owner; owner assigned by the config's "
        "ownership rules at epoch 1";
    Status s = store_.CompareAndSetOwnership(changes, why);
    if (!s.ok())
      spdlog::warn("claiming discovered tables: {}", s.ToString());
    else
      spdlog::info("claimed {} discovered tables by the ownership rules", changes.size());
  }
}

}  // namespace icewarden
