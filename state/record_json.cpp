#include "state/record_json.h"

#include <nlohmann/json.hpp>

#include "state/failover_machine.h"

namespace icewarden {
namespace {

using nlohmann::json;

void PutTime(json& obj, const std::string& key, UnixMillis t) {
  obj[key] = t == 0 ? json(nullptr) : json(FormatUnixMillis(t));
  obj[key + "_unix_ms"] = t == 0 ? json(nullptr) : json(t);
}

json NullIfEmpty(const std::string& s) { return s.empty() ? json(nullptr) : json(s); }

// Stored JSON documents are returned as JSON; a document that does not parse is returned
// as the string it is rather than hidden.
json EmbeddedJson(const std::string& text) {
  if (text.empty()) return json::object();
  json parsed = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (parsed.is_discarded()) return json(text);
  return parsed;
}

json ApprovalJson(const Approval& a) {
  json j{{"by", a.by}, {"reason", a.reason}, {"plan_hash", NullIfEmpty(a.plan_hash)}};
  PutTime(j, "at", a.at);
  PutTime(j, "expires_at", a.expires_at);
  return j;
}

json FencingJson(const FencingConfirmation& f) {
  json j{{"kind", FencingKindName(f.kind)},
         {"by", f.by},
         {"reason", f.reason},
         {"evidence", EmbeddedJson(f.evidence_json)}};
  PutTime(j, "at", f.at);
  return j;
}

}  // namespace

json RegionJson(const Region& r) {
  json j{{"name", r.name},
         {"health", RegionHealthName(r.health)},
         {"fenced", r.fenced},
         {"maintenance", r.maintenance},
         {"reason", r.reason},
         {"consecutive_failures", r.consecutive_failures},
         {"consecutive_successes", r.consecutive_successes}};
  PutTime(j, "since", r.since);
  return j;
}

json OwnershipJson(const Ownership& o) {
  json j{{"table", o.table.ToString()},
         {"namespace", o.table.namespace_levels},
         {"name", o.table.name},
         {"owner", o.owner},
         {"epoch", o.epoch},
         {"failover_id", NullIfEmpty(o.failover_id)}};
  PutTime(j, "updated_at", o.updated_at);
  return j;
}

json AllowedEventsJson(FailoverPhase phase) {
  json out = json::array();
  for (FailoverEvent e : AllowedEvents(phase)) out.push_back(FailoverEventName(e));
  return out;
}

json FailoverJson(const Failover& f) {
  json approvals = json::array();
  for (const Approval& a : f.approvals) approvals.push_back(ApprovalJson(a));
  json j{{"id", f.id},
         {"kind", FailoverKindName(f.kind)},
         {"scope", f.scope},
         {"from", f.from},
         {"to", f.to},
         {"runbook", f.runbook},
         {"phase", FailoverPhaseName(f.phase)},
         {"proposed_by", f.proposed_by},
         {"reason", f.reason},
         {"approvals", std::move(approvals)},
         {"fencing", f.fencing ? FencingJson(*f.fencing) : json(nullptr)},
         {"accept_data_loss", f.accept_data_loss ? json(*f.accept_data_loss) : json(nullptr)},
         {"last_reason", f.last_reason},
         {"plan",
          {{"route", NullIfEmpty(f.plan.route)},
           {"runbook_hash", NullIfEmpty(f.plan.runbook_hash)},
           {"plan_hash", NullIfEmpty(f.plan.plan_hash)},
           {"params", EmbeddedJson(f.plan.params_json)}}},
         {"promotion_hold", NullIfEmpty(f.promotion_hold)},
         {"guard_checks", EmbeddedJson(f.guard_checks_json)},
         {"rpo", EmbeddedJson(f.rpo_json)},
         {"version", f.version}};
  if (f.ack) {
    j["ack"] = {{"by", f.ack->by}, {"comment", f.ack->comment}};
    PutTime(j["ack"], "at", f.ack->at);
  } else {
    j["ack"] = nullptr;
  }
  PutTime(j, "detected_at", f.detected_at);
  PutTime(j, "created_at", f.created_at);
  PutTime(j, "updated_at", f.updated_at);
  return j;
}

json StepJson(const StepRecord& s) {
  json j{{"step_id", s.step_id},
         {"section", s.section},
         {"action", s.action},
         {"state", StepStateName(s.state)},
         {"attempt", s.attempt},
         {"reason", s.reason},
         {"result", EmbeddedJson(s.result_json)}};
  PutTime(j, "started_at", s.started_at);
  PutTime(j, "finished_at", s.finished_at);
  return j;
}

json AuditEventJson(const AuditEvent& e) {
  json j{{"seq", e.seq},
         {"actor", e.actor},
         {"source", e.source},
         {"action", e.action},
         {"target", e.target},
         {"reason", e.reason},
         {"detail", EmbeddedJson(e.detail_json)}};
  PutTime(j, "at", e.at);
  if (!e.sha256.empty()) {
    j["prev_sha256"] = e.prev_sha256;
    j["sha256"] = e.sha256;
  }
  return j;
}

std::string ErrorJson(std::string_view code, std::string_view message) {
  return DumpJson(json{{"error", {{"code", code}, {"message", message}}}});
}

}  // namespace icewarden
