// The JSON shapes of the records: how regions, ownership, failovers, steps and audit events
// look on the wire, to the API, the failover service's answers, reports, the CLI and the
// dashboard. One place, below all of them, so every reader sees the same field names.
//
// Every timestamp appears twice: "<field>" as RFC 3339 UTC with milliseconds and
// "<field>_unix_ms" as an integer; both are null when the time is unknown (0).
// Thread-safety: pure functions.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>

#include "state/json_text.h"  // DumpJson, for the API's callers
#include "state/types.h"

namespace icewarden {

// {name, health, fenced, maintenance, reason, since, since_unix_ms, consecutive_failures,
//  consecutive_successes}
nlohmann::json RegionJson(const Region& region);

// {table: "a.b.t", namespace: ["a","b"], name, owner, epoch, updated_at,
//  updated_at_unix_ms, failover_id (null when empty)}
nlohmann::json OwnershipJson(const Ownership& ownership);

// Everything in Failover: id, kind, scope, from, to, runbook, phase, proposed_by, reason,
// approvals [{by, reason, at}], fencing ({kind, by, reason, at} or null),
// accept_data_loss (reason or null), last_reason, created_at, updated_at, version.
nlohmann::json FailoverJson(const Failover& failover);

// The events a failover in `phase` takes, by name: ["approve", "abort", ...], for refusals.
nlohmann::json AllowedEventsJson(FailoverPhase phase);

// {step_id, section, action, state, attempt, reason, result, started_at, finished_at};
// result is the stored result JSON, or the raw string when it does not parse.
nlohmann::json StepJson(const StepRecord& step);

// {seq, at, actor, source, action, target, reason, detail}; detail as for StepJson.
nlohmann::json AuditEventJson(const AuditEvent& event);

// {"error":{"code":CODE,"message":MESSAGE}}
std::string ErrorJson(std::string_view code, std::string_view message);

}  // namespace icewarden
