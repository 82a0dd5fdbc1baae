#include "orchestrator/api/audit.h"

#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <vector>

#include "orchestrator/api/command_body.h"
#include "orchestrator/api/query.h"
#include "state/record_json.h"

namespace icewarden {
namespace {

using nlohmann::json;

// Audit events read per store call, and at most per request, when filtering by action or
// actor (which the store does not index).
constexpr std::size_t kAuditScanBatch = 1000;
constexpr std::size_t kMaxAuditScan = 20000;

}  // namespace

ApiResponse HandleAuditList(StateStore& store, const QueryParams& query) {
  AuditQuery q;
  auto after = query.Integer("after_seq", 0, 0, std::numeric_limits<std::int64_t>::max());
  if (!after.ok()) return BadRequestResponse(after.status().message());
  q.after_seq = *after;
  auto limit = query.Integer("limit", kListPageDefault, 1, kListPageMax);
  if (!limit.ok()) return BadRequestResponse(limit.status().message());
  const auto want = static_cast<std::size_t>(*limit);
  auto target = query.Text("target", "target=fo-20261129-0001");
  if (!target.ok()) return BadRequestResponse(target.status().message());
  q.target = *target;
  auto action = query.Text("action", "action=failover.approve or action=failover.");
  if (!action.ok()) return BadRequestResponse(action.status().message());
  auto actor = query.Text("actor", "actor=approver");
  if (!actor.ok()) return BadRequestResponse(actor.status().message());
  // An action ending in '.' is a prefix: "failover." is every failover event.
  auto matches = [&](const AuditEvent& e) {
    if (*actor && e.actor != **actor) return false;
    if (!*action) return true;
    const std::string& a = **action;
    return a.back() == '.' ? e.action.rfind(a, 0) == 0 : e.action == a;
  };
  // The store filters by target; action and actor are read through in batches, at most
  // kMaxAuditScan events a request: a page may then hold fewer than `limit` events, and
  // next_after_seq says where to go on.
  const bool scan = *action || *actor;
  std::vector<AuditEvent> events;
  std::int64_t scanned_to = q.after_seq;
  bool more = false;
  for (std::size_t scanned = 0;;) {
    q.limit = scan ? kAuditScanBatch : want + 1;
    q.after_seq = scanned_to;
    auto batch = store.ListAudit(q);
    if (!batch.ok()) return StoreErrorResponse(batch.status());
    for (AuditEvent& e : *batch) {
      if (events.size() == want) {  // one more match than the page: there is a next page
        more = more || matches(e);
        if (more) break;
      } else if (matches(e)) {
        events.push_back(std::move(e));
      }
      scanned_to = e.seq;
      ++scanned;
    }
    if (more || batch->size() < q.limit) break;
    if (!scan) break;
    if (scanned >= kMaxAuditScan) {
      more = true;
      break;
    }
  }
  json list = json::array();
  for (const AuditEvent& e : events) list.push_back(AuditEventJson(e));
  json next = nullptr;
  if (more) next = scan ? json(scanned_to) : json(events.back().seq);
  // The newest seq, so that a reader can start at the end (the dashboard shows the newest
  // events first): seqs are dense, so after_seq=last_seq-N is the newest N events.
  auto last = store.LastAuditSeq();
  if (!last.ok()) return StoreErrorResponse(last.status());
  return JsonResponse(
      200, {{"events", std::move(list)}, {"next_after_seq", std::move(next)}, {"last_seq", *last}});
}

}  // namespace icewarden
