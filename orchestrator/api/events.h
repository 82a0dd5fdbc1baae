// GET /api/v1/events: what changes, as server-sent events, for the dashboard and
// `icewarden failover watch`.
//
// The stream is a view over the audit log, the one durable record of every change (region
// health, failover phases, readiness, drills, webhooks, people's commands): each audit event
// becomes one SSE event whose id is its seq, so a client that reconnects with Last-Event-ID
// (or ?after=SEQ) resumes exactly after the last event it saw, also across a daemon restart.
// Runbook steps are journaled, not audited; they are state, so the stream sends each active
// failover's steps whenever one changes (event `step`, id the latest audit seq), and on
// (re)connection the current steps of every active failover, so a client never misses where
// a failover is.
//
// Event types: `region` (region.*), `failover` (failover.*), `readiness` (readiness.*),
// `drill` (drill.*), `automation` (automation.pause and .resume), `audit` (the rest), and
// `step`. A principal who may not read the audit
// log (viewer) gets each event's seq, at, action and target, without actor, reason or detail.
// Thread-safety: one stream belongs to one connection; Poll() reads the store.
#pragma once

#include <cstdint>
#include <memory>

#include "orchestrator/api/api.h"

namespace icewarden {

class ApiStream;
class Clock;
class QueryParams;
class StateStore;

struct EventStreamOptions {
  std::int64_t after_seq = -1;  // -1: from now on (the first event is the next appended)
  bool full_audit = false;      // the principal may read the audit log
  int keepalive_polls = 150;    // an SSE comment after this many empty polls (15 s at 100 ms)
};

std::shared_ptr<ApiStream> MakeEventStream(StateStore& store, EventStreamOptions options);

// GET /api/v1/events: the stream from Last-Event-ID or ?after=SEQ, else from now on; 400 for
// a Last-Event-ID this stream never sent. `full_audit`: the caller may read the audit log.
ApiResponse HandleEventStream(StateStore& store, bool full_audit, const QueryParams& query,
                              const ApiRequest& request);

}  // namespace icewarden
