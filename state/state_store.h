// StateStore: the durable record of regions, table ownership, failovers, the step journal
// and the audit log. Only the daemon talks to it; everything else goes through the API.
//
// Every mutating method is one atomic transaction: it either commits entirely or changes
// nothing, and a crash at any point leaves the store as before the call or as after it.
// Methods that change ownership or failovers commit durably (fsync) before they return;
// region health updates may trail a crash by the last few updates (they are re-derived
// from probes after a restart).
//
// Every mutating method except AppendAudit and PutStep takes the AuditEvent that explains
// it and appends it in the same transaction, so the audit log can never disagree with the
// state. Step records are their own journal (the executor's), and the failover
// transitions around them are audited.
//
// Conventions where a method says nothing else: an empty CompareAndSetOwnership batch is
// Ok and writes nothing; limit 0 means no limit; created_at 0 means now; a read-only store
// answers kFailedPrecondition to every write; ownership rows are never deleted (a deleted
// row would let a table be claimed again at epoch 1).
//
// Thread-safety: implementations serialise calls internally; a StateStore may be shared
// between threads.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "state/status.h"
#include "state/types.h"

namespace icewarden {

struct OwnershipQuery {
  std::optional<std::string> owner{};  // only tables owned by this region
  // Resume after this table (exclusive), in (namespace, name) order; for paging.
  std::optional<TableIdent> after{};
  std::size_t limit = 1000;  // at most this many rows; 0 means no limit
};

// What StateStore::WaitForChange saw.
struct StoreChange {
  enum class Kind {
    kCannotWait,  // this store cannot wait for a change (it returned at once): poll it
    kChanged,     // OwnershipRevision() differs from `since` now: read again
    kQuiet,       // max_wait passed with no change
    kUnreadable,  // the store cannot be vouched for now (why says why): refuse, do not guess
  };
  Kind kind = Kind::kCannotWait;
  std::string why{};
};

// A timer the store runs on its own clock (StateStore::StartTimer).
struct StoreTimer {
  std::string name{};
  std::chrono::milliseconds elapsed{0};  // since it was started, by the store's clock
  std::chrono::milliseconds ttl{0};      // how long it runs, as the store granted it
};

struct AuditQuery {
  std::int64_t after_seq = 0;  // events with seq > after_seq
  std::size_t limit = 100;
  std::optional<std::string> target{};  // only events about this target
};

class StateStore {
 public:
  virtual ~StateStore() = default;

  // ---- Regions ----
  // Inserts or replaces the region named region.name. Atomic; not necessarily durable
  // (see above). The audit event is appended in the same transaction.
  virtual Status PutRegion(const Region& region, const AuditEvent& why) = 0;
  virtual Result<std::optional<Region>> GetRegion(const std::string& name) = 0;
  // All regions, ordered by name.
  virtual Result<std::vector<Region>> ListRegions() = 0;

  // ---- Ownership ----
  virtual Result<std::optional<Ownership>> GetOwnership(const TableIdent& table) = 0;
  // Rows ordered by (namespace, name).
  virtual Result<std::vector<Ownership>> ListOwnership(const OwnershipQuery& query) = 0;
  // Number of tables per owning region, ordered by region name.
  virtual Result<std::vector<std::pair<std::string, std::int64_t>>> CountOwnershipByOwner() = 0;
  // Applies every change in one durable transaction, using compare-and-set on the epoch:
  // each table's current epoch must equal change.expected_epoch (0: no row yet), and the
  // new epoch is expected_epoch + 1. If any change does not match, nothing is written and
  // kConflict names the first table that did not match with its current epoch and owner.
  // The same table twice in one batch is kInvalidArgument. One audit event per batch.
  virtual Status CompareAndSetOwnership(std::span<const OwnershipChange> changes,
                                        const AuditEvent& why) = 0;

  // ---- Failovers ----
  // Inserts a new failover with version 1. kConflict if the id exists. Durable.
  virtual Status CreateFailover(const Failover& failover, const AuditEvent& why) = 0;
  // Replaces the failover if its stored version equals expected_version, writing
  // version expected_version + 1 (the passed failover.version is ignored). kNotFound if no
  // such id; kConflict if the version moved. Durable.
  virtual Status UpdateFailover(const Failover& failover, std::int64_t expected_version,
                                const AuditEvent& why) = 0;
  virtual Result<std::optional<Failover>> GetFailover(const std::string& id) = 0;
  // Newest first.
  virtual Result<std::vector<Failover>> ListFailovers(std::size_t limit) = 0;
  // Failovers whose phase is not terminal, oldest first.
  virtual Result<std::vector<Failover>> ListActiveFailovers() = 0;

  // ---- Step journal ----
  // Inserts or replaces the record keyed by (failover_id, step_id). Durable: the executor
  // writes it before and after an action runs and relies on it after a crash.
  virtual Status PutStep(const StepRecord& step) = 0;
  // In the order the steps were first recorded.
  virtual Result<std::vector<StepRecord>> ListSteps(const std::string& failover_id) = 0;

  // ---- Audit ----
  // Appends one event; the store assigns seq and, when event.at is 0, the time.
  // The log is append-only: nothing updates or deletes an event.
  virtual Status AppendAudit(const AuditEvent& event) = 0;
  // Events in seq order.
  virtual Result<std::vector<AuditEvent>> ListAudit(const AuditQuery& query) = 0;
  // The newest event's seq; 0 when the log is empty.
  virtual Result<std::int64_t> LastAuditSeq() = 0;

  // ---- Webhook deliveries ----
  // Records that a delivery was acted on, with its audit event, once: kConflict (and nothing
  // written) when delivery.key is recorded already. Durable: a re-delivery after a crash
  // must still be recognised.
  virtual Status RecordWebhookDelivery(const WebhookDelivery& delivery, const AuditEvent& why) = 0;
  virtual Result<std::optional<WebhookDelivery>> GetWebhookDelivery(const std::string& key) = 0;
  // The deliveries of one alert (WebhookDelivery::alert) from `source`, oldest first; every
  // delivery when both are empty.
  virtual Result<std::vector<WebhookDelivery>> ListWebhookDeliveries(const std::string& source,
                                                                     const std::string& alert) = 0;

  // ---- Timers ----
  // A span measured by the store's one clock, never a replica's (issue 30): decisions that
  // replicas with unequal clocks must agree on (a cooldown's end, an approval's expiry) ask
  // the store how long ago a timer started instead of comparing a stamp from another
  // machine's clock with their own. etcd runs it as a lease of `ttl` (whole seconds, rounded
  // up; etcd resets a lease's TTL when its own leader changes, which only lengthens a timer);
  // SQLite, one file on one host, by that host's clock.
  //
  // Starts the timer `name` for `ttl`; one already running under that name starts again
  // (elapsed back to 0): a retried write re-puts its timer, which may only lengthen it. Not
  // audited (a measure, not a record: the write it precedes is audited). kInvalidArgument for
  // an empty name or a ttl <= 0.
  virtual Status StartTimer(const std::string& name, std::chrono::milliseconds ttl) = 0;
  // The timers whose name starts with `prefix` that still run (elapsed < ttl), by name. An
  // expired timer is gone: it is never listed again.
  virtual Result<std::vector<StoreTimer>> ListTimers(const std::string& prefix) = 0;

  // ---- Limits ----
  // The most changes one CompareAndSetOwnership batch may hold; 0: no limit. (etcd bounds the
  // operations of one txn; callers that move many tables size their batches by this.)
  virtual std::size_t MaxOwnershipBatch() const { return 0; }
  // A number that is the same on two calls only if no table's ownership changed in between
  // (for callers that keep a listing and re-read only after a change); nullopt: this store
  // cannot tell cheaply, so list again.
  virtual std::optional<std::int64_t> OwnershipRevision() { return std::nullopt; }
  // Waits up to max_wait for OwnershipRevision() to differ from `since` (nullopt: the caller
  // has no revision, so any known revision is a change). A store that learns of changes as
  // they happen (etcd, by a watch) says so when they do; kUnreadable comes at once when
  // `since` is set and the store can no longer vouch for it. The default cannot wait.
  virtual StoreChange WaitForChange(std::optional<std::int64_t> since,
                                    std::chrono::milliseconds max_wait) {
    (void)since;
    (void)max_wait;
    return {};
  }
};

}  // namespace icewarden
