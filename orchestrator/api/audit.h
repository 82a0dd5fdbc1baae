// GET /api/v1/audit: the audit log in seq order, one page at a time.
//   ?after_seq=N &limit=1..1000 (100) &target=ID &action=A (a trailing '.' is a prefix:
//   action=failover.) &actor=NAME
//   {"events":[...], "next_after_seq": N | null, "last_seq": N}
// The store filters by target; action and actor are read through in batches, at most 20,000
// events a request, so a page may hold fewer than `limit` events and next_after_seq says where
// to go on.
// Thread-safety: as the StateStore.
#pragma once

#include "orchestrator/api/api.h"

namespace icewarden {

class QueryParams;

ApiResponse HandleAuditList(StateStore& store, const QueryParams& query);

}  // namespace icewarden
