// The SQLite StateStore class, shared by the files that implement it: sqlite_store.cpp
// (opening, regions, ownership, audit), sqlite_failovers.cpp (failovers, step journal) and
// sqlite_webhooks.cpp (webhook deliveries) and sqlite_drills.cpp (drill runs).
// Not for callers: they get a StateStore from OpenSqliteStore (sqlite_store.h).
//
// Thread-safety: every public method takes mu_; private methods expect it held.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include "state/drill_store.h"
#include "state/pause_store.h"
#include "state/sqlite_db.h"
#include "state/state_store.h"
#include "state/store_checks.h"

namespace icewarden {

// What a crash may cost a transaction. The StateStore contract lets region health trail a
// crash (it is re-derived from probes), and health updates are the one frequent write, so
// they skip the fsync; everything else is the durable record of decisions and must not.
enum class Durability {
  kTrailing,  // synchronous=NORMAL: in WAL mode, committed but fsynced only at checkpoint
  kDurable,   // synchronous=FULL: the WAL is fsynced before COMMIT returns
};

// Cached statements are shared, so every use must reset it, or the statement would keep
// its read transaction (and the WAL snapshot) open until the next use.
class ResetOnExit {
 public:
  explicit ResetOnExit(SqliteStatement* s) : s_(s) {}
  ~ResetOnExit() { s_->Reset(); }
  ResetOnExit(const ResetOnExit&) = delete;
  ResetOnExit& operator=(const ResetOnExit&) = delete;

 private:
  SqliteStatement* s_;
};

// SQLite reads a negative LIMIT as "no limit"; the StateStore uses 0 for that.
inline std::int64_t SqlLimit(std::size_t limit) {
  return limit == 0 ? -1 : static_cast<std::int64_t>(limit);
}

class SqliteStore final : public StateStore, public DrillStore, public PauseStore {
 public:
  SqliteStore(SqliteConnection db, std::shared_ptr<Clock> clock, bool read_only)
      : db_(std::move(db)), clock_(std::move(clock)), read_only_(read_only) {}

  std::optional<std::int64_t> OwnershipRevision() override;

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

 private:
  // The prepared statement for `sql`, compiled on first use and kept for the life of the
  // store: the compare-and-set loop runs one statement per table, and compiling it each
  // time would cost more than executing it.
  Result<SqliteStatement*> Statement(const std::string& sql, std::string_view what);
  // Sets the fsync policy (only between transactions: SQLite ignores a change of
  // synchronous inside one) and starts a write transaction.
  Status BeginWrite(SqliteWriteTransaction& txn, Durability durability, std::string_view what);
  // Appends inside the caller's transaction.
  Status InsertAudit(const AuditEvent& event);
  Status OwnershipConflict(const OwnershipChange& change, const std::string& namespace_key,
                           std::size_t batch_size);
  Result<std::optional<Ownership>> ReadOwnershipRow(const std::string& namespace_key,
                                                    const std::string& name);
  Result<std::vector<Failover>> QueryFailovers(const std::string& sql, std::int64_t limit);

  std::mutex mu_;  // serialises every call: one connection, one thread at a time
  SqliteConnection db_;
  std::shared_ptr<Clock> clock_;
  const bool read_only_;
  Durability synchronous_ = Durability::kDurable;  // what OpenSqliteStore set
  std::int64_t ownership_commits_ = 0;             // this connection's committed ownership batches
  // Declared after db_ so that the statements are finalized before the connection closes.
  std::map<std::string, SqliteStatement, std::less<>> statements_;
};

}  // namespace icewarden
