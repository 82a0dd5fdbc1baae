// Domain types shared by every folder: regions, table ownership, failovers, the step
// journal and the audit log. Plain values with no behaviour beyond naming and parsing;
// the rules that move them live in the state machines (region_health_machine.h,
// failover_machine.h) and the StateStore (state_store.h).
// Thread-safety: plain values.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "state/clock.h"

namespace icewarden {

// ---- Regions ------------------------------------------------------------------------------

enum class RegionHealth { kHealthy, kDegraded, kUnreachable };

const char* RegionHealthName(RegionHealth h);
std::optional<RegionHealth> ParseRegionHealth(std::string_view s);

struct Region {
  std::string name{};  // "us-east-1"
  RegionHealth health = RegionHealth::kHealthy;
  // Administrative overlays, set only by the orchestrator or an operator, never by a probe.
  bool fenced = false;
  bool maintenance = false;
  int consecutive_failures = 0;   // probe rounds failed in a row (for fall)
  int consecutive_successes = 0;  // probe rounds passed in a row (for rise)
  std::string reason{};           // why it is in its current state, for people
  UnixMillis since = 0;           // when it entered its current health state
};

// ---- Tables and ownership -----------------------------------------------------------------

// An Iceberg table identifier: a (possibly nested) namespace and a name.
struct TableIdent {
  std::vector<std::string> namespace_levels{};  // {"sales", "eu"}
  std::string name{};                           // "orders"

  // "sales.eu.orders": for people and for pattern matching.
  std::string ToString() const;
  // Namespace levels joined by the unit separator 0x1F, as the REST spec encodes them.
  std::string NamespaceKey() const;
  // Parses "a.b.table" (the last dot separates the name). Empty levels are an error.
  static std::optional<TableIdent> Parse(std::string_view dotted);
  // Inverse of NamespaceKey().
  static std::vector<std::string> SplitNamespaceKey(std::string_view key);

  friend bool operator==(const TableIdent&, const TableIdent&) = default;
  friend auto operator<=>(const TableIdent&, const TableIdent&) = default;
};

// For unordered containers of tables: over 10,000s of tables a hash lookup is far cheaper
// than the ordered comparison of namespace vectors a std::set or std::map makes.
struct TableIdentHash {
  std::size_t operator()(const TableIdent& t) const;
};

// The epoch is the fencing token: bumped by every ownership change, never decreasing.
using Epoch = std::int64_t;

struct Ownership {
  TableIdent table{};
  std::string owner{};  // region name
  Epoch epoch = 0;      // >= 1 once recorded
  UnixMillis updated_at = 0;
  std::string failover_id{};  // the failover that last moved it; empty for the initial claim
};

// One compare-and-set on a table's ownership.
struct OwnershipChange {
  TableIdent table{};
  // The epoch the caller last saw. 0 means "the table must not have an owner yet".
  Epoch expected_epoch = 0;
  std::string new_owner{};
  std::string failover_id{};  // may be empty
};

// ---- Failovers ----------------------------------------------------------------------------

enum class FailoverPhase {
  kProposed,
  kApproved,
  kFencing,
  kFenced,
  kPromoting,
  kVerifying,
  kCompleted,
  kAborted,
  kFailed,
  kCompensating,
  kRolledBack,
  kNeedsAttention,
};

const char* FailoverPhaseName(FailoverPhase p);
std::optional<FailoverPhase> ParseFailoverPhase(std::string_view s);
// Completed, aborted, rolled back: nothing more will happen. needs_attention is not
// terminal: a person must look, and the failover still holds its scope.
bool IsTerminal(FailoverPhase p);

enum class FailoverKind { kFailover, kSwitchover, kDrill };
const char* FailoverKindName(FailoverKind k);
std::optional<FailoverKind> ParseFailoverKind(std::string_view s);

struct Approval {
  std::string by{};  // the approver's identity (token name)
  std::string reason{};
  UnixMillis at = 0;
  // The plan the approver was shown (FailoverPlanRef::plan_hash): an approval is for that
  // plan only, like applying a saved terraform plan.
  std::string plan_hash{};
  UnixMillis expires_at = 0;  // 0: never (approvals recorded before approval_ttl existed)
};

enum class FencingKind {
  kEvidenceSteps,        // every fence step succeeded and a quiet window saw no new commit
  kEvidenceUnreachable,  // old region unreachable from a quorum of vantage points long enough
  kOperator,             // a person confirmed, with a reason
  // every fence step succeeded, one of them a gateway.fence that every configured catalog
  // gateway confirmed (closed, nothing in flight to the old owner), and the config says that
  // writers reach the old owner's catalog only through those gateways (docs/gateway.md)
  kGatewayClosed,
};
const char* FencingKindName(FencingKind k);
std::optional<FencingKind> ParseFencingKind(std::string_view s);

struct FencingConfirmation {
  FencingKind kind = FencingKind::kOperator;
  std::string by{};      // who or what confirmed
  std::string reason{};  // required for kOperator; the evidence summary otherwise
  UnixMillis at = 0;
  // What was observed, as a JSON object: per table the old owner's last snapshot id and
  // when it was seen, the quiet window or the silence, who confirmed.
  std::string evidence_json = "{}";
};

// What a failover runs: the config route that chose the runbook, the runbook's content
// hash and bound parameters, and the hash of the whole plan (kind, scope, from, to,
// runbook hash, parameters) that approvals are bound to.
struct FailoverPlanRef {
  std::string route{};         // the config route's name
  std::string runbook_hash{};  // "sha256:<hex>" of the runbook file's bytes
  std::string plan_hash{};     // "sha256:<hex>"
  std::string params_json = "{}";
};

// The failover after the fact: who acknowledged it, which lifts its anti-flap block early.
struct FailoverAck {
  std::string by{};
  std::string comment{};
  UnixMillis at = 0;
};

struct Failover {
  std::string id{};  // "fo-20261129-0001"-style, unique
  FailoverKind kind = FailoverKind::kFailover;
  std::string scope{};  // "namespace:eu.*", "tables:a.b,c.d", "owner:us-east-1"
  std::string from{};   // region losing ownership
  std::string to{};     // region gaining ownership
  std::string runbook{};
  FailoverPhase phase = FailoverPhase::kProposed;
  std::string proposed_by{};
  std::string reason{};  // why it was proposed
  std::vector<Approval> approvals{};
  std::optional<FencingConfirmation> fencing{};
  std::optional<std::string> accept_data_loss{};  // the reason, when guards on lag are waived
  std::string last_reason{};                      // the reason of the latest transition
  FailoverPlanRef plan{};
  // Non-empty: the guard check just before promotion failed with this reason, and nothing
  // is promoted until an approver re-approves (which checks the guards again) or someone
  // aborts.
  std::string promotion_hold{};
  // Every guard evaluation, a JSON array of {point, at, results: [{guard, ok, reason}]},
  // point one of proposal | approval | promotion.
  std::string guard_checks_json = "[]";
  // When the region losing ownership became unreachable, if it was at proposal: where the
  // report's detection time starts. 0: not known (a planned move, or it was healthy).
  UnixMillis detected_at = 0;
  // The RPO at promotion: a JSON object {worst_lag_ms, tables: [{table, missing_commits,
  // lag_ms, bound}], complete}.
  std::string rpo_json = "{}";
  std::optional<FailoverAck> ack{};
  UnixMillis created_at = 0;
  UnixMillis updated_at = 0;
  // Bumped by every persisted change; UpdateFailover compares it (optimistic concurrency).
  std::int64_t version = 0;
};

// ---- Step journal -------------------------------------------------------------------------

enum class StepState { kPending, kRunning, kSucceeded, kFailed, kCompensating, kCompensated };
const char* StepStateName(StepState s);
std::optional<StepState> ParseStepState(std::string_view s);

struct StepRecord {
  std::string failover_id{};
  std::string step_id{};  // unique within the failover's runbook
  std::string section{};  // "fence" | "promote" | "verify" | "compensate"
  std::string action{};   // action kind, e.g. "dns.rfc2136"
  StepState state = StepState::kPending;
  int attempt = 0;
  std::string reason{};       // the outcome, for people
  std::string result_json{};  // the action's structured result, "{}" when none
  UnixMillis started_at = 0;
  UnixMillis finished_at = 0;

  // failover id + step id: what makes an action's effect idempotent across retries and
  // restarts.
  std::string IdempotencyKey() const { return failover_id + "/" + step_id; }
};

// ---- Audit --------------------------------------------------------------------------------

struct AuditEvent {
  std::int64_t seq = 0;  // assigned by the store on append; strictly increasing
  UnixMillis at = 0;
  std::string actor{};   // token name, "probe", "executor", "webhook:alertmanager"
  std::string source{};  // where from: "127.0.0.1:53412", "cli", "internal"
  std::string action{};  // "failover.approve", "ownership.set", "region.health"
  std::string target{};  // "fo-...", "us-east-1", "sales.orders"
  std::string reason{};  // why, in words
  std::string detail_json = "{}";
  // The seal (state/audit_seal.h), set by the store on append: the previous event's sha256,
  // and this event's, over its fields and prev_sha256. Both empty on events appended before
  // the seal existed.
  std::string prev_sha256{};
  std::string sha256{};
};

// ---- Webhook deliveries -------------------------------------------------------------------

// One alert (or generic event) a webhook delivered and what icewarden did about it. Alerting
// systems deliver at least once and re-send; the key is what makes a re-delivery a no-op.
struct WebhookDelivery {
  // Unique: "alertmanager:<sha256 of groupKey, fingerprint, startsAt, status>" or
  // "generic/<name>:<signature>".
  std::string key{};
  std::string source{};       // "alertmanager" | "generic/<name>"
  std::string alert{};        // the alert's fingerprint or the event's id
  std::string status{};       // "firing" | "resolved"
  std::string starts_at{};    // as the sender wrote it (RFC 3339)
  std::string effect{};       // mark_suspect | propose_failover | lift_suspect | withdraw | none
  std::string region{};       // the region the effect was about; may be empty
  std::string failover_id{};  // the proposal the alert opened or withdrew; may be empty
  std::string outcome{};      // one sentence: what was decided
  UnixMillis received_at = 0;
};

}  // namespace icewarden
