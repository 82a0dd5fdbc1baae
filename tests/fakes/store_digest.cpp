#include "tests/fakes/store_digest.h"

#include <nlohmann/json.hpp>

#include "state/json_text.h"

namespace icewarden::testing {

std::string StoreDigest(StateStore& store, bool with_audit) {
  using nlohmann::json;
  json d;
  d["regions"] = json::array();
  // Locals: a range-for over a temporary Result's value would dangle.
  const auto regions = store.ListRegions();
  const auto ownership = store.ListOwnership({});
  const auto failovers = store.ListFailovers(0);
  const auto deliveries = store.ListWebhookDeliveries("", "");
  for (const Region& r : *regions) d["regions"].push_back({r.name, r.health, r.reason});
  for (const Ownership& o : *ownership)
    d["ownership"].push_back({o.table.ToString(), o.owner, o.epoch});
  for (const Failover& f : *failovers) {
    d["failovers"].push_back({f.id, f.version, FailoverPhaseName(f.phase), f.approvals.size()});
    d["steps"][f.id] = store.ListSteps(f.id)->size();
  }
  for (const WebhookDelivery& w : *deliveries)
    d["webhook_deliveries"].push_back({w.key, w.effect, w.failover_id});
  if (with_audit) d["audit"] = store.ListAudit({0, 0, std::nullopt})->size();
  return DumpJson(d);
}

}  // namespace icewarden::testing
