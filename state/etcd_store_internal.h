// The etcd StateStore class, shared by the files that implement it: etcd_store.cpp (writes,
// regions, ownership, audit, webhook deliveries) and etcd_failovers.cpp (failovers, the step
// journal, drill runs). Not for callers: they get a StateStore from OpenEtcdStore.
//
// Thread-safety: every public method takes mu_; private methods expect it held.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "state/drill_store.h"
#include "state/etcd_records.h"
#include "state/etcd_store.h"
#include "state/etcd_watch.h"
#include "state/pause_store.h"
#include "state/store_checks.h"

namespace icewarden {

class EtcdStore final : public StateStore, public DrillStore, public PauseStore {
 public:
  EtcdStore(std::shared_ptr<EtcdClient> etcd, EtcdStoreOptions options,
            std::shared_ptr<Clock> clock);

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

  Status CreateDrillRun(const DrillRun& run, const AuditEvent& why) override;
  Status UpdateDrillRun(const DrillRun& run, std::int64_t expected_version,
                        const AuditEvent& why) override;
  Result<std::optional<DrillRun>> GetDrillRun(const std::string& id) override;
  Result<std::vector<DrillRun>> ListDrillRuns(const std::string& drill, std::size_t limit) override;
  Result<UnixMillis> LastScheduledSlot(const std::string& drill) override;
  Status PutDrillStep(const DrillStep& step) override;
  Result<std::vector<DrillStep>> ListDrillSteps(const std::string& run_id) override;
  Status AddDrillNote(const DrillNote& note, const AuditEvent& why) override;
  Result<std::vector<DrillNote>> ListDrillNotes(const std::string& run_id) override;
  Status PutPause(const Pause& pause, const AuditEvent& why) override;
  Status DeletePause(const std::string& scope, const AuditEvent& why) override;
  Result<std::vector<Pause>> ListPauses() override;
  Status StartTimer(const std::string& name, std::chrono::milliseconds ttl) override;
  Result<std::vector<StoreTimer>> ListTimers(const std::string& prefix) override;

  // Two of a txn's operations are the audit event and its counter.
  std::size_t MaxOwnershipBatch() const override { return options_.max_txn_ops - 2; }

  // The watch's revision (etcd_watch.h) while it can vouch for it, once a caller waits on it.
  std::optional<std::int64_t> OwnershipRevision() override;
  StoreChange WaitForChange(std::optional<std::int64_t> since,
                            std::chrono::milliseconds max_wait) override;

  // Reads the audit counter (and so checks that etcd answers).
  Status Start();

 private:
  // One txn: `compares` are the method's own condition; `why`, when set, is appended with the
  // next seq, and `with_seq` adds ops that need that seq.
  struct Write {
    std::vector<EtcdCompare> compares;
    std::vector<EtcdOp> ops;
    const AuditEvent* why = nullptr;
    std::function<std::vector<EtcdOp>(std::int64_t seq)> with_seq{};
  };
  // true: applied; false: one of write.compares did not hold (the caller reads again and
  // says why). kFailedPrecondition when the fence refused it or the store is read-only.
  Result<bool> Commit(const Write& write, const std::string& what);
  Status ReadCounter();
  // The value at `key`, if any.
  Result<std::optional<EtcdKeyValue>> Get(const std::string& key);
  // The record at `key`, if any.
  template <typename T>
  Result<std::optional<T>> Read(const std::string& key) {
    auto kv = Get(key);
    if (!kv.ok()) return kv.status();
    if (!kv->has_value()) return std::optional<T>();
    T out;
    if (Status s = etcd_records::Decode((*kv)->key, (*kv)->value, out); !s.ok()) return s;
    return std::optional<T>(std::move(out));
  }
  // Every key in [start, end) in key order, page by page, until `take` returns false.
  Status Scan(std::string start, const std::string& end,
              const std::function<bool(EtcdKeyValue&)>& take);
  // Every key under prefix_ + space, in key order.
  Result<std::vector<EtcdKeyValue>> All(const std::string& space);

  std::string Key(std::string_view space, std::string_view rest) const;
  std::string OwnKey(const TableIdent& table) const;
  std::string CounterKey() const { return Key("meta", "audit_seq"); }

  std::mutex mu_;
  std::shared_ptr<EtcdClient> etcd_;
  const EtcdStoreOptions options_;
  std::shared_ptr<Clock> clock_;
  struct Counter {
    std::int64_t seq = 0;
    std::int64_t mod_revision = 0;  // 0: the key does not exist yet
    std::string head_sha256{};      // the seal of event `seq` ("" before the seal existed)
  };
  std::optional<Counter> counter_;  // unset: read it before the next audited write
  // Started by the first WaitForChange: only readers that keep a picture of the store (the
  // gateway) hold a stream open; the daemon never waits.
  EtcdWatch& Watch();
  std::once_flag watch_once_;
  std::unique_ptr<EtcdWatch> watch_;
  std::atomic<bool> watching_{false};  // WaitForChange was called: watch_ is there
};

// The decimal digits of n, zero-padded to 20: keys in numeric order.
std::string Padded(std::int64_t n);
EtcdOp PutOp(std::string key, std::string value);
EtcdCompare Absent(std::string key);
EtcdCompare Unchanged(std::string key, std::int64_t mod_revision);

}  // namespace icewarden
