// FakeStore: an in-memory StateStore for tests that honours the interface's contracts
// (compare-and-set on epochs and failover versions, all-or-nothing batches, audit appended
// with every change, the documented orders) without durability.
//
// FailWith() makes every call fail with a given Status until cleared, to test how callers
// report store failures.
// Thread-safety: every call takes one mutex, like the real stores serialise.
#pragma once

#include <map>
#include <mutex>
#include <optional>
#include <utility>

#include "state/state_store.h"

namespace icewarden::testing {

class FakeStore final : public StateStore {
 public:
  // `clock` stamps updated_at/audit times and must outlive the store.
  explicit FakeStore(const Clock& clock) : clock_(clock) {}

  // Every later call returns `failure` (nullopt: back to normal).
  void FailWith(std::optional<Status> failure);

  Status PutRegion(const Region& region, const AuditEvent& why) override;
  Result<std::optional<Region>> GetRegion(const std::string& name) override;
  Result<std::vector<Region>> ListRegions() override;

  Result<std::optional<Ownership>> GetOwnership(const TableIdent& table) override;
  Result<std::vector<Ownership>> ListOwnership(const OwnershipQuery& query) override;
  Result<std::vector<std::pair<std::string, std::int64_t>>> CountOwnershipByOwner() override;
  Status CompareAndSetOwnership(std::span<const OwnershipChange> changes,
                                const AuditEvent& why) override;

  Status CreateFailover(const Failover& failover, const AuditEvent& why) override;
  Status UpdateFailover(const Failover& failover, std::int64_t expected_version,
                        const AuditEvent& why) override;
  Result<std::optional<Failover>> GetFailover(const std::string& id) override;
  Result<std::vector<Failover>> ListFailovers(std::size_t limit) override;
  Result<std::vector<Failover>> ListActiveFailovers() override;

  Status PutStep(const StepRecord& step) override;
  Result<std::vector<StepRecord>> ListSteps(const std::string& failover_id) override;

  Status AppendAudit(const AuditEvent& event) override;
  Result<std::vector<AuditEvent>> ListAudit(const AuditQuery& query) override;
  Result<std::int64_t> LastAuditSeq() override;

  Status RecordWebhookDelivery(const WebhookDelivery& delivery, const AuditEvent& why) override;
  Result<std::optional<WebhookDelivery>> GetWebhookDelivery(const std::string& key) override;
  Result<std::vector<WebhookDelivery>> ListWebhookDeliveries(const std::string& source,
                                                             const std::string& alert) override;

  // Timers run on `clock` (a FakeClock in tests: advance it to let them run).
  Status StartTimer(const std::string& name, std::chrono::milliseconds ttl) override;
  Result<std::vector<StoreTimer>> ListTimers(const std::string& prefix) override;

 private:
  // (namespace key, name): the (namespace, name) order of ListOwnership.
  using TableKey = std::pair<std::string, std::string>;
  static TableKey KeyOf(const TableIdent& t) { return {t.NamespaceKey(), t.name}; }
  void AppendLocked(AuditEvent event);

  const Clock& clock_;
  std::mutex mu_;
  std::optional<Status> failure_;
  std::map<std::string, Region> regions_;
  std::map<TableKey, Ownership> ownership_;
  std::map<std::string, Failover> failovers_;
  std::vector<std::string> failover_order_;               // ids in creation order
  std::map<std::string, std::vector<StepRecord>> steps_;  // in first-recorded order
  std::vector<AuditEvent> audit_;
  std::vector<WebhookDelivery> deliveries_;                            // in recorded order
  std::map<std::string, std::pair<UnixMillis, std::int64_t>> timers_;  // name -> (start, ttl ms)
};

}  // namespace icewarden::testing
