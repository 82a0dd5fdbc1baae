// The failover commands of the HTTP API: the JSON bodies they take, and how a command's
// outcome becomes a response. Pure functions over FailoverService; api.cpp routes to them.
//
//   POST /api/v1/failovers                        {kind?, to, scope, from?, route?, reason,
//                                                  accept_data_loss?, dry_run?}
//   POST /api/v1/failovers/{id}/approve           {plan_hash, reason?, accept_data_loss?,
//                                                  cooldown_override?, force_candidate?}
//   POST /api/v1/failovers/{id}/fencing-confirmation  {reason}
//   POST /api/v1/failovers/{id}/abort             {reason}
//   POST /api/v1/failovers/{id}/ack               {comment}
//
// A body must be a JSON object with only the fields listed (400 names an unknown one).
// Refusals keep the error shape {"error":{"code","message"}} and add what explains them:
// "guards" (each guard's result), "allowed_events" and "phase" (a command the phase does not
// take), "plan" and "plan_hash" (a changed plan). 409 for a guard, a phase or a changed plan;
// 201 for a created failover, 200 otherwise.
// Thread-safety: as FailoverService.
#pragma once

#include <string>

#include "orchestrator/api/api.h"

namespace icewarden {

class FailoverService;
struct Caller;

enum class FailoverCommand { kPropose, kApprove, kConfirmFencing, kAbort, kAck };

class QueryParams;
class ReadinessBoard;

// The reads:
//   GET /api/v1/failovers ?limit=1..1000 (100) &active=true: newest first
//   GET /api/v1/failovers/{id} ?plan=true: one failover with its step journal ("steps"), and
//     with plan=true the plan, hash, guards and readiness as they stand now ("plan_now");
//     while it waits in fencing, "evidence_wait" says what the evidence lacks
//   GET /api/v1/failovers/{id}/report: timeline, durations, RPO, evidence, steps
// `service` and `readiness` may be null (no plan_now, no evidence_wait).
ApiResponse HandleFailoverList(StateStore& store, const QueryParams& query);
ApiResponse HandleFailoverDetail(StateStore& store, FailoverService* service,
                                 const ReadinessBoard* readiness, const std::string& id,
                                 const QueryParams& query, UnixMillis now);
ApiResponse HandleFailoverReport(StateStore& store, const std::string& id);

ApiResponse HandleFailoverCommand(FailoverService& service, FailoverCommand command,
                                  const Caller& caller, const std::string& id,
                                  const std::string& body);

}  // namespace icewarden
