#include "state/failover_transition.h"

#include <nlohmann/json.hpp>

#include "state/json_text.h"
#include "state/state_store.h"

namespace icewarden {

Result<FailoverDecision> ApplyAndRecordFailoverEvent(StateStore& store, const std::string& id,
                                                     const FailoverInput& input,
                                                     const FailoverPolicy& policy, UnixMillis now,
                                                     const std::string& source,
                                                     const FailoverAmendment& amend) {
  auto found = store.GetFailover(id);
  if (!found.ok()) return found.status();
  if (!found->has_value()) return Status::NotFound("no failover " + id);
  const Failover& current = **found;

  FailoverInput timed = input;
  if (timed.at == 0) timed.at = now;
  FailoverDecision decision = ApplyFailoverEvent(current, timed, policy);

  AuditEvent why;
  why.at = timed.at;
  why.actor = input.actor.empty() ? ActorKindName(input.actor_kind) : input.actor;
  why.source = source;
  why.action = std::string("failover.") + FailoverEventName(input.event) +
               (decision.accepted ? "" : ".refused");
  why.target = id;
  why.reason = decision.reason;
  why.detail_json = DumpJson(nlohmann::json{{"from", FailoverPhaseName(current.phase)},
                                            {"to", FailoverPhaseName(decision.next.phase)},
                                            {"actor_kind", ActorKindName(input.actor_kind)},
                                            {"input_reason", input.reason}});
  if (!decision.accepted) {
    if (Status s = store.AppendAudit(why); !s.ok()) return s;
    return decision;
  }
  if (amend) {
    const FailoverPhase phase = decision.next.phase;
    amend(decision.next);
    decision.next.phase = phase;
  }
  if (Status s = store.UpdateFailover(decision.next, current.version, why); !s.ok()) return s;
  decision.next.version = current.version + 1;
  return decision;
}

}  // namespace icewarden
