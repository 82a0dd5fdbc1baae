// The audit log's seal: every event carries the SHA-256 of the event before it
// (prev_sha256) and its own (sha256, over its fields and prev_sha256), so an event edited,
// removed or moved breaks the chain at that event. Both stores seal on append, inside the
// transaction that assigns seq: SQLite reads the last row's seal in its write transaction,
// etcd keeps the head's seal beside the seq in meta/audit_seq and compares that key.
//
// What the chain proves, and what it cannot alone: anyone who can rewrite the log can rewrite
// every seal after an edit too, and removing the newest events leaves a shorter chain that
// holds. Both are caught against an anchor, a (seq, sha256) pair recorded before: the log must
// still hold that event with that seal. `icewarden audit verify` prints the head to record
// elsewhere and takes an earlier one with --anchor; the daemon keeps the head of its previous
// pass as the anchor of the next (orchestrator/serve/audit_seal_watch.h).
//
// Events appended before the seal existed (schema 7 on SQLite, the counter without a seal on
// etcd) have neither field; they may only precede the first sealed event, and the report
// counts them.
// Thread-safety: AuditSealOf and VerifyAuditChain are plain functions (the store serialises
// itself); an AuditChainCheck is used by one thread.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "state/status.h"

namespace icewarden {

struct AuditEvent;
class StateStore;

// The lower-case hex SHA-256 of the event's seq, at, actor, source, action, target, reason,
// detail_json and prev_sha256, each length-prefixed (so no two events share an encoding).
std::string AuditSealOf(const AuditEvent& event);

// A (seq, sha256) pair the log must still hold: from `audit verify`'s output, written
// "SEQ:SHA256".
struct AuditAnchor {
  std::int64_t seq = 0;
  std::string sha256{};
};
// Parses "SEQ:SHA256" (64 hex digits); nullopt for anything else.
std::optional<AuditAnchor> ParseAuditAnchor(const std::string& text);

struct AuditChainReport {
  bool intact = true;
  std::int64_t events = 0;    // events read
  std::int64_t unsealed = 0;  // of them, written before the seal existed (a prefix)
  std::int64_t head_seq = 0;  // the newest event read, and its seal ("" when unsealed)
  std::string head_sha256{};
  std::int64_t broken_at = 0;  // the first event that does not hold (0: none)
  std::string problem{};       // what is wrong there, in words, with how to look
};

// A pass's report and when it ran (unix ms, on the checking process's clock): what the daemon
// keeps for /metrics.
struct AuditSealStatus {
  AuditChainReport report;
  std::int64_t checked_at = 0;
};

// Checks events fed in seq order; stops at the first break.
class AuditChainCheck {
 public:
  explicit AuditChainCheck(std::optional<AuditAnchor> anchor = std::nullopt);
  // False once the chain is broken (at this event or before).
  bool Add(const AuditEvent& event);
  // The report after the last event: also breaks the chain when the anchor was never reached
  // or held a different seal.
  AuditChainReport Finish();

 private:
  bool Break(std::int64_t seq, std::string problem);

  std::optional<AuditAnchor> anchor_;
  bool anchor_seen_ = false;
  AuditChainReport report_;
};

// Reads the whole log from `store` page by page and checks it. A store error is returned as
// it is (nothing was concluded); a broken chain is a report with intact = false.
Result<AuditChainReport> VerifyAuditChain(StateStore& store,
                                          std::optional<AuditAnchor> anchor = std::nullopt);

}  // namespace icewarden
