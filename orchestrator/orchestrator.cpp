#include "orchestrator/orchestrator.h"

#include "state/failover_transition.h"

#include <nlohmann/json.hpp>
#include <set>

#include "orchestrator/config/config.h"
#include "state/clock.h"
#include "state/state_store.h"

namespace icewarden {

Orchestrator::Orchestrator(const Config& config, StateStore& store, std::shared_ptr<Clock> clock)
    : config_(config), store_(store), clock_(std::move(clock)) {}

Result<std::vector<Decision>> Orchestrator::Start() {
  std::vector<Decision> decisions;
  auto known = store_.ListRegions();
  if (!known.ok()) return known.status();
  std::set<std::string> recorded;
  for (const auto& r : *known) recorded.insert(r.name);

  for (const auto& rc : config_.regions) {
    if (recorded.count(rc.name)) continue;
    Region region;
    region.name = rc.name;
    region.health = RegionHealth::kDegraded;
    region.since = clock_->Now();
    region.reason = rc.name + " degraded: new in config, awaiting " +
                    std::to_string(rc.probe.rise) + " passed probe rounds";
    AuditEvent why;
    why.at = region.since;
    why.actor = "orchestrator";
    why.source = "config:" + config_.source_path;
    why.action = "region.record";
    why.target = rc.name;
    why.reason = region.reason;
    if (Status s = store_.PutRegion(region, why); !s.ok()) return s;
    decisions.push_back({rc.name, region.reason});
  }

  std::set<std::string> configured;
  for (const auto& rc : config_.regions) configured.insert(rc.name);
  for (const auto& name : recorded)
    if (!configured.count(name))
      decisions.push_back({name, name + " kept: recorded in the state store but not in the config; "
                                        "its tables keep their owner until moved"});
  return decisions;
}

FailoverPolicy Orchestrator::Policy() const {
  FailoverPolicy policy;
  policy.two_person_approval = config_.policies.two_person_approval;
  policy.accepted_fencing.clear();
  for (const auto& name : config_.policies.fencing_evidence)
    if (auto kind = ParseFencingKind(name)) policy.accepted_fencing.push_back(*kind);
  return policy;
}

Result<FailoverDecision> Orchestrator::ApplyToFailover(
    const std::string& id, const FailoverInput& input, const std::string& source,
    const std::function<void(Failover&)>& amend) {
  return ApplyAndRecordFailoverEvent(store_, id, input, Policy(), clock_->Now(), source, amend);
}

Status Orchestrator::RecordRegionHealth(const HealthDecision& decision, const std::string& source) {
  if (!decision.accepted || !decision.changed) return Status::Ok();
  AuditEvent why;
  why.at = decision.next.since != 0 ? decision.next.since : clock_->Now();
  why.action = std::string("region.") + RegionHealthName(decision.next.health);
  // An overlay change (fence, maintenance) leaves the health and its `since` as they were: it
  // is audited as what it is, at the time it happened.
  auto stored = store_.GetRegion(decision.next.name);
  if (stored.ok() && stored->has_value()) {
    const Region& was = **stored;
    const char* overlay =
        was.fenced != decision.next.fenced
            ? (decision.next.fenced ? "region.fenced" : "region.unfenced")
        : was.maintenance != decision.next.maintenance
            ? (decision.next.maintenance ? "region.maintenance" : "region.maintenance_ended")
            : nullptr;
    if (overlay != nullptr && was.health == decision.next.health) {
      why.at = clock_->Now();
      why.action = overlay;
    }
  }
  why.actor = source;
  why.source = source;
  why.target = decision.next.name;
  why.reason = decision.reason;
  return store_.PutRegion(decision.next, why);
}

}  // namespace icewarden
