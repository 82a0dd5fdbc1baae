#include "state/sqlite_records.h"
#include "state/json_text.h"

#include <nlohmann/json.hpp>

namespace icewarden {
namespace {

using nlohmann::json;

Status CorruptValue(std::string_view what, std::string_view value) {
  return Status::Internal("the state database holds " + std::string(what) + " '" +
                          std::string(value) + "' that this build does not understand");
}

// nlohmann reports type mismatches by throwing; the exceptions stop here so that a damaged
// document becomes a Status, as everywhere else in the store.
Result<std::vector<Approval>> ApprovalsFromJson(const std::string& text) {
  try {
    json doc = json::parse(text);
    std::vector<Approval> out;
    for (const json& a : doc) {
      Approval approval{a.at("by").get<std::string>(), a.at("reason").get<std::string>(),
                        a.at("at").get<UnixMillis>()};
      approval.plan_hash = a.value("plan_hash", "");
      approval.expires_at = a.value("expires_at", UnixMillis{0});
      out.push_back(std::move(approval));
    }
    return out;
  } catch (const json::exception&) {
    return CorruptValue("the approvals document", text);
  }
}

Result<FencingConfirmation> FencingFromJson(const std::string& text) {
  try {
    json doc = json::parse(text);
    std::string kind_name = doc.at("kind").get<std::string>();
    std::optional<FencingKind> kind = ParseFencingKind(kind_name);
    if (!kind) return CorruptValue("the fencing kind", kind_name);
    FencingConfirmation f{*kind, doc.at("by").get<std::string>(),
                          doc.at("reason").get<std::string>(), doc.at("at").get<UnixMillis>()};
    if (auto it = doc.find("evidence"); it != doc.end()) f.evidence_json = DumpJson(*it);
    return f;
  } catch (const json::exception&) {
    return CorruptValue("the fencing document", text);
  }
}

// The failover fields added after schema 1, in one JSON column (annex_json): what a failover
// runs and what it observed on the way. Absent keys read as the defaults.
Status ReadAnnex(const std::string& text, Failover& f) {
  try {
    json doc = json::parse(text);
    if (auto p = doc.find("plan"); p != doc.end()) {
      f.plan.route = p->value("route", "");
      f.plan.runbook_hash = p->value("runbook_hash", "");
      f.plan.plan_hash = p->value("plan_hash", "");
      f.plan.params_json = DumpJson(p->value("params", json::object()));
    }
    f.promotion_hold = doc.value("promotion_hold", "");
    f.guard_checks_json = DumpJson(doc.value("guard_checks", json::array()));
    f.detected_at = doc.value("detected_at", UnixMillis{0});
    f.rpo_json = DumpJson(doc.value("rpo", json::object()));
    if (auto a = doc.find("ack"); a != doc.end()) {
      f.ack = FailoverAck{a->at("by").get<std::string>(), a->value("comment", ""),
                          a->at("at").get<UnixMillis>()};
    }
    return Status::Ok();
  } catch (const json::exception&) {
    return CorruptValue("the failover annex document", text);
  }
}

json ParsedOr(const std::string& text, json fallback) {
  json doc = json::parse(text, nullptr, /*allow_exceptions=*/false);
  return doc.is_discarded() ? fallback : doc;
}

}  // namespace

std::string FailoverAnnexToJson(const Failover& f) {
  json doc = {{"plan",
               {{"route", f.plan.route},
                {"runbook_hash", f.plan.runbook_hash},
                {"plan_hash", f.plan.plan_hash},
                {"params", ParsedOr(f.plan.params_json, json::object())}}},
              {"promotion_hold", f.promotion_hold},
              {"guard_checks", ParsedOr(f.guard_checks_json, json::array())},
              {"detected_at", f.detected_at},
              {"rpo", ParsedOr(f.rpo_json, json::object())}};
  if (f.ack) doc["ack"] = {{"by", f.ack->by}, {"comment", f.ack->comment}, {"at", f.ack->at}};
  return DumpJson(doc);
}

Result<Region> ReadRegion(const SqliteStatement& row) {
  Region r;
  r.name = row.ColumnText(0);
  std::string health = row.ColumnText(1);
  std::optional<RegionHealth> parsed = ParseRegionHealth(health);
  if (!parsed) return CorruptValue("the region health", health);
  r.health = *parsed;
  r.fenced = row.ColumnInt(2) != 0;
  r.maintenance = row.ColumnInt(3) != 0;
  r.consecutive_failures = static_cast<int>(row.ColumnInt(4));
  r.consecutive_successes = static_cast<int>(row.ColumnInt(5));
  r.reason = row.ColumnText(6);
  r.since = row.ColumnInt(7);
  return r;
}

Ownership ReadOwnership(const SqliteStatement& row) {
  Ownership o;
  o.table.namespace_levels = TableIdent::SplitNamespaceKey(row.ColumnText(0));
  o.table.name = row.ColumnText(1);
  o.owner = row.ColumnText(2);
  o.epoch = row.ColumnInt(3);
  o.updated_at = row.ColumnInt(4);
  o.failover_id = row.ColumnText(5);
  return o;
}

Result<Failover> ReadFailover(const SqliteStatement& row) {
  Failover f;
  f.id = row.ColumnText(0);
  std::string kind = row.ColumnText(1);
  std::optional<FailoverKind> parsed_kind = ParseFailoverKind(kind);
  if (!parsed_kind) return CorruptValue("the failover kind", kind);
  f.kind = *parsed_kind;
  f.scope = row.ColumnText(2);
  f.from = row.ColumnText(3);
  f.to = row.ColumnText(4);
  f.runbook = row.ColumnText(5);
  std::string phase = row.ColumnText(6);
  std::optional<FailoverPhase> parsed_phase = ParseFailoverPhase(phase);
  if (!parsed_phase) return CorruptValue("the failover phase", phase);
  f.phase = *parsed_phase;
  f.proposed_by = row.ColumnText(7);
  f.reason = row.ColumnText(8);
  Result<std::vector<Approval>> approvals = ApprovalsFromJson(row.ColumnText(9));
  if (!approvals.ok()) return approvals.status();
  f.approvals = std::move(approvals).value();
  if (!row.ColumnIsNull(10)) {
    Result<FencingConfirmation> fencing = FencingFromJson(row.ColumnText(10));
    if (!fencing.ok()) return fencing.status();
    f.fencing = std::move(fencing).value();
  }
  if (!row.ColumnIsNull(11)) f.accept_data_loss = row.ColumnText(11);
  f.last_reason = row.ColumnText(12);
  f.created_at = row.ColumnInt(13);
  f.updated_at = row.ColumnInt(14);
  f.version = row.ColumnInt(15);
  if (Status s = ReadAnnex(row.ColumnText(16), f); !s.ok()) return s;
  return f;
}

Result<StepRecord> ReadStep(const SqliteStatement& row) {
  StepRecord s;
  s.failover_id = row.ColumnText(0);
  s.step_id = row.ColumnText(1);
  s.section = row.ColumnText(2);
  s.action = row.ColumnText(3);
  std::string state = row.ColumnText(4);
  std::optional<StepState> parsed = ParseStepState(state);
  if (!parsed) return CorruptValue("the step state", state);
  s.state = *parsed;
  s.attempt = static_cast<int>(row.ColumnInt(5));
  s.reason = row.ColumnText(6);
  s.result_json = row.ColumnText(7);
  s.started_at = row.ColumnInt(8);
  s.finished_at = row.ColumnInt(9);
  return s;
}

AuditEvent ReadAudit(const SqliteStatement& row) {
  AuditEvent e;
  e.seq = row.ColumnInt(0);
  e.at = row.ColumnInt(1);
  e.actor = row.ColumnText(2);
  e.source = row.ColumnText(3);
  e.action = row.ColumnText(4);
  e.target = row.ColumnText(5);
  e.reason = row.ColumnText(6);
  e.detail_json = row.ColumnText(7);
  e.prev_sha256 = row.ColumnText(8);
  e.sha256 = row.ColumnText(9);
  return e;
}

std::string ApprovalsToJson(const std::vector<Approval>& approvals) {
  json doc = json::array();
  for (const Approval& a : approvals)
    doc.push_back(json{{"by", a.by},
                       {"reason", a.reason},
                       {"at", a.at},
                       {"plan_hash", a.plan_hash},
                       {"expires_at", a.expires_at}});
  return DumpJson(doc);
}

std::string FencingToJson(const FencingConfirmation& fencing) {
  return DumpJson(json{{"kind", FencingKindName(fencing.kind)},
                       {"by", fencing.by},
                       {"reason", fencing.reason},
                       {"at", fencing.at},
                       {"evidence", ParsedOr(fencing.evidence_json, json::object())}});
}

std::string_view JsonOrEmptyObject(std::string_view json_text) {
  return json_text.empty() ? std::string_view("{}") : json_text;
}

bool IsValidJson(std::string_view json_text) { return json::accept(json_text); }

}  // namespace icewarden
