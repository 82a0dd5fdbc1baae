// CrashPointStore: a StateStore that forwards to another and calls a hook around every
// failover and step-journal write (UpdateFailover, PutStep), numbering them 1, 2, ... .
// Crash tests use the hook to kill the process exactly at a write boundary: just before
// write N reaches the store, or just after it has.
// Thread-safety: as the wrapped store; the hook may run on any thread.
#pragma once

#include <atomic>
#include <functional>

#include "state/state_store.h"

namespace icewarden::testing {

class CrashPointStore final : public StateStore {
 public:
  // before: true just before write `n`, false just after it returned.
  using Hook = std::function<void(int n, bool before)>;
  CrashPointStore(StateStore& inner, Hook hook) : inner_(inner), hook_(std::move(hook)) {}

  int writes() const { return writes_.load(); }

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
    return Around([&] { return inner_.UpdateFailover(f, expected_version, why); });
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
  Status PutStep(const StepRecord& step) override {
    return Around([&] { return inner_.PutStep(step); });
  }
  Result<std::vector<StepRecord>> ListSteps(const std::string& id) override {
    return inner_.ListSteps(id);
  }
  Status AppendAudit(const AuditEvent& e) override { return inner_.AppendAudit(e); }
  Result<std::vector<AuditEvent>> ListAudit(const AuditQuery& q) override {
    return inner_.ListAudit(q);
  }

 private:
  template <typename F>
  Status Around(F&& write) {
    const int n = ++writes_;
    hook_(n, true);
    Status s = write();
    hook_(n, false);
    return s;
  }

  StateStore& inner_;
  Hook hook_;
  std::atomic<int> writes_{0};
};

}  // namespace icewarden::testing
