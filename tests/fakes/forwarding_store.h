// ForwardingStore: a StateStore that passes every call to another; test stores derive from it
// and override only the calls they observe or disturb.
// Thread-safety: as the wrapped store.
#pragma once

#include "state/state_store.h"

namespace icewarden::testing {

class ForwardingStore : public StateStore {
 public:
  explicit ForwardingStore(StateStore& inner) : inner_(inner) {}

  Status PutRegion(const Region& r, const AuditEvent& why) override {
    return inner_.PutRegion(r, why);
  }
  Result<std::optional<Region>> GetRegion(const std::string& name) override {
    return inner_.GetRegion(name);
  }
  Result<std::vector<Region>> ListRegions() override { return inner_.ListRegions(); }
  Result<std::optional<Ownership>> GetOwnership(const TableIdent& t) override {
    return inner_.GetOwnership(t);
  }
  Result<std::vector<Ownership>> ListOwnership(const OwnershipQuery& q) override {
    return inner_.ListOwnership(q);
  }
  Result<std::vector<std::pair<std::string, std::int64_t>>> CountOwnershipByOwner() override {
    return inner_.CountOwnershipByOwner();
  }
  Status CompareAndSetOwnership(std::span<const OwnershipChange> changes,
                                const AuditEvent& why) override {
    return inner_.CompareAndSetOwnership(changes, why);
  }
  Status CreateFailover(const Failover& f, const AuditEvent& why) override {
    return inner_.CreateFailover(f, why);
  }
  Status UpdateFailover(const Failover& f, std::int64_t expected_version,
                        const AuditEvent& why) override {
    return inner_.UpdateFailover(f, expected_version, why);
  }
  Result<std::optional<Failover>> GetFailover(const std::string& id) override {
    return inner_.GetFailover(id);
  }
  Result<std::vector<Failover>> ListFailovers(std::size_t limit) override {
    return inner_.ListFailovers(limit);
  }
  Result<std::vector<Failover>> ListActiveFailovers() override {
    return inner_.ListActiveFailovers();
  }
  Status PutStep(const StepRecord& step) override { return inner_.PutStep(step); }
  Result<std::vector<StepRecord>> ListSteps(const std::string& id) override {
    return inner_.ListSteps(id);
  }
  Status AppendAudit(const AuditEvent& e) override { return inner_.AppendAudit(e); }
  Result<std::vector<AuditEvent>> ListAudit(const AuditQuery& q) override {
    return inner_.ListAudit(q);
  }
  Result<std::int64_t> LastAuditSeq() override { return inner_.LastAuditSeq(); }
  Status RecordWebhookDelivery(const WebhookDelivery& d, const AuditEvent& why) override {
    return inner_.RecordWebhookDelivery(d, why);
  }
  Result<std::optional<WebhookDelivery>> GetWebhookDelivery(const std::string& key) override {
    return inner_.GetWebhookDelivery(key);
  }
  Result<std::vector<WebhookDelivery>> ListWebhookDeliveries(const std::string& source,
                                                             const std::string& alert) override {
    return inner_.ListWebhookDeliveries(source, alert);
  }
  Status StartTimer(const std::string& name, std::chrono::milliseconds ttl) override {
    return inner_.StartTimer(name, ttl);
  }
  Result<std::vector<StoreTimer>> ListTimers(const std::string& prefix) override {
    return inner_.ListTimers(prefix);
  }

 protected:
  StateStore& inner_;
};

}  // namespace icewarden::testing
