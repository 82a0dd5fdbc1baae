#include "orchestrator/failovers/failover_report.h"

#include <algorithm>
#include <map>
#include <optional>
#include <sstream>

#include "health/replication_lag.h"
#include "state/clock.h"
#include "state/record_json.h"
#include "state/state_store.h"

namespace icewarden {
namespace {

using nlohmann::json;

constexpr std::size_t kMaxAuditEvents = 10'000;

json Parsed(const std::string& text, json fallback) {
  json doc = json::parse(text, nullptr, false);
  return doc.is_discarded() ? fallback : doc;
}

json Duration(std::optional<UnixMillis> from, std::optional<UnixMillis> to) {
  if (!from || !to || *to < *from) return nullptr;
  return *to - *from;
}

std::string Ms(const json& v) {
  if (!v.is_number()) return "-";
  return FormatLagDuration(std::chrono::milliseconds(v.get<long long>()));
}

// What a switchover's demotion-token step recorded: the token (the old owner's snapshot per
// table, first 100 shown), and how long the target took to reach it.
json DemotionTokenJson(const StepRecord& s, const json& result) {
  constexpr std::size_t kShown = 100;
  const json before = result.value("before", json::object());
  const json detail = result.value("detail", json::object());
  json tables = json::array();
  const json all = before.value("tables", json::array());
  for (std::size_t i = 0; i < all.size() && i < kShown; ++i)
    tables.push_back({{"table", all[i].value("table", "")},
                      {"snapshot_id", all[i].value("snapshot_id", json(nullptr))}});
  const json captured = before.value("captured_at", json(nullptr));
  return {{"step", s.step_id},
          {"state", StepStateName(s.state)},
          {"owner", before.value("owner", "")},
          {"target", before.value("target", "")},
          {"captured_at",
           captured.is_number() ? json(FormatUnixMillis(captured.get<UnixMillis>())) : json()},
          {"tables", all.size()},
          {"token", tables},
          {"token_truncated", all.size() > kShown},
          {"waited_ms", detail.value("waited_ms", json(nullptr))},
          {"reason", s.reason}};
}

// A completed switchover moved ownership only once the target was at the token of every
// table: nothing was lost. Otherwise the RPO at promotion is the measure (null here).
json LostCommits(const Failover& f, const json& demotion) {
  if (f.kind != FailoverKind::kSwitchover || !demotion.is_object()) return nullptr;
  if (demotion.value("state", "") != "succeeded") return nullptr;
  return 0;
}

}  // namespace

Result<json> BuildFailoverReport(StateStore& store, const std::string& id) {
  auto found = store.GetFailover(id);
  if (!found.ok()) return found.status();
  if (!found->has_value()) return Status::NotFound("no failover " + id);
  const Failover& f = **found;
  auto steps = store.ListSteps(id);
  if (!steps.ok()) return steps.status();
  AuditQuery q;
  q.target = id;
  q.limit = kMaxAuditEvents;
  auto events = store.ListAudit(q);
  if (!events.ok()) return events.status();

  // When each phase was entered: the first accepted transition into it.
  std::map<std::string, UnixMillis> entered;
  entered["proposed"] = f.created_at;
  json timeline = json::array();
  json people = json::array();
  for (const AuditEvent& e : *events) {
    json detail = Parsed(e.detail_json, json::object());
    const bool refused = e.action.ends_with(".refused");
    json item = {{"at", FormatUnixMillis(e.at)}, {"at_unix_ms", e.at},
                 {"action", e.action},           {"actor", e.actor},
                 {"source", e.source},           {"reason", e.reason}};
    if (detail.contains("to") && !refused && detail["to"].is_string()) {
      const std::string phase = detail["to"].get<std::string>();
      item["phase"] = phase;
      if (!entered.count(phase)) entered[phase] = e.at;
    }
    timeline.push_back(item);
    if (e.actor != "executor" && e.actor != "orchestrator")
      people.push_back({{"who", e.actor},
                        {"what", e.action},
                        {"when", FormatUnixMillis(e.at)},
                        {"from", e.source},
                        {"why", e.reason}});
  }
  auto at = [&](const std::string& phase) -> std::optional<UnixMillis> {
    auto it = entered.find(phase);
    if (it == entered.end()) return std::nullopt;
    return it->second;
  };

  json split_brain = json::array();
  for (const AuditEvent& e : *events)
    if (e.action == "split_brain.detected")
      split_brain.push_back({{"at", FormatUnixMillis(e.at)},
                             {"reason", e.reason},
                             {"detail", Parsed(e.detail_json, json::object())}});

  json step_list = json::array();
  json demotion = nullptr;
  std::optional<UnixMillis> transfer_start, transfer_end, dns_start, dns_end;
  for (const StepRecord& s : *steps) {
    json result = Parsed(s.result_json, json::object());
    if (s.action == "switchover.demotion_token" && s.section == "promote")
      demotion = DemotionTokenJson(s, result);
    json item = {{"step", s.step_id},
                 {"section", s.section},
                 {"action", s.action},
                 {"state", StepStateName(s.state)},
                 {"attempts", s.attempt},
                 {"reason", s.reason},
                 {"duration_ms", Duration(s.started_at, s.finished_at)}};
    if (s.started_at) item["started_at"] = FormatUnixMillis(s.started_at);
    if (s.finished_at) item["finished_at"] = FormatUnixMillis(s.finished_at);
    step_list.push_back(std::move(item));
    auto widen = [&](std::optional<UnixMillis>& a, std::optional<UnixMillis>& b) {
      if (s.started_at && (!a || s.started_at < *a)) a = s.started_at;
      if (s.finished_at && (!b || s.finished_at > *b)) b = s.finished_at;
    };
    if (s.section == "compensate") continue;
    if (s.action == "ownership.transfer") widen(transfer_start, transfer_end);
    if (s.action == "dns.rfc2136") widen(dns_start, dns_end);
  }

  const std::optional<UnixMillis> detected =
      f.detected_at ? std::optional<UnixMillis>(f.detected_at) : std::nullopt;
  const std::optional<UnixMillis> start = detected ? detected : at("proposed");
  const std::optional<UnixMillis> end = at("completed") ? at("completed") : at("rolled_back");
  json durations = {
      {"detection_ms", Duration(detected, at("proposed"))},
      {"decision_ms", Duration(at("proposed"), at("approved"))},
      {"fencing_ms", Duration(at("fencing"), at("fenced"))},
      {"transfer_ms", Duration(transfer_start, transfer_end)},
      {"dns_ms", Duration(dns_start, dns_end)},
      {"verification_ms", Duration(at("verifying"), at("completed"))},
      {"machine_ms", Duration(at("approved"), at("completed"))},
      {"rto_ms", Duration(start, end)},
  };
  json phases = json::object();
  for (const auto& [phase, t] : entered) phases[phase] = FormatUnixMillis(t);

  json failover_json = FailoverJson(f);
  json report = {
      {"failover", failover_json},
      {"phases", phases},
      {"durations", durations},
      {"rpo", Parsed(f.rpo_json, json::object())},
      {"demotion_token", demotion},
      {"lost_commits", LostCommits(f, demotion)},
      {"split_brain", split_brain},
      {"fencing", f.fencing ? json{{"kind", FencingKindName(f.fencing->kind)},
                                   {"by", f.fencing->by},
                                   {"reason", f.fencing->reason},
                                   {"at", FormatUnixMillis(f.fencing->at)},
                                   {"evidence", Parsed(f.fencing->evidence_json, json::object())}}
                            : json(nullptr)},
      {"approvals", failover_json["approvals"]},
      {"guard_checks", Parsed(f.guard_checks_json, json::array())},
      {"steps", step_list},
      {"timeline", timeline},
      {"people", people}};
  return report;
}

std::string RenderFailoverReportText(const json& r) {
  std::ostringstream out;
  const json& f = r.value("failover", json::object());
  out << "Failover " << f.value("id", "") << " (" << f.value("kind", "")
      << "): " << f.value("scope", "") << " from " << f.value("from", "") << " to "
      << f.value("to", "") << "\n";
  out << "  phase    " << f.value("phase", "") << "\n";
  out << "  runbook  " << f.value("runbook", "") << "\n";
  if (f.contains("plan") && f["plan"].is_object() && f["plan"]["plan_hash"].is_string())
    out << "  plan     " << f["plan"]["plan_hash"].get<std::string>() << "\n";
  out << "  reason   " << f.value("reason", "") << "\n\nDurations\n";
  const json& d = r.value("durations", json::object());
  for (const auto& [key, label] : std::vector<std::pair<std::string, std::string>>{
           {"detection_ms", "detection (unreachable -> proposal)"},
           {"decision_ms", "decision (proposal -> approval)"},
           {"fencing_ms", "fencing"},
           {"transfer_ms", "ownership transfer"},
           {"dns_ms", "DNS"},
           {"verification_ms", "verification"},
           {"machine_ms", "machine (approval -> completed)"},
           {"rto_ms", "total RTO"}})
    out << "  " << label << std::string(label.size() < 38 ? 38 - label.size() : 1, ' ')
        << Ms(d.value(key, json())) << "\n";
  const json& rpo = r.value("rpo", json::object());
  out << "\nRPO at promotion\n";
  // A switchover's loss is what the demotion token says; the lag below was measured when
  // promotion began, before the wait closed it.
  const bool by_token = r.value("lost_commits", json()).is_number();
  if (by_token)
    out << "  " << r["lost_commits"].get<long long>()
        << " commits lost: the target was at the demotion token of every table before "
           "ownership moved\n  measured when promotion began, before the demotion-token wait:\n";
  if (rpo.contains("worst_lag_ms")) {
    out << "  worst lag " << Ms(rpo["worst_lag_ms"]) << ", " << rpo.value("missing_commits", 0)
        << " commits the new owner lacked over " << rpo.value("tables_in_scope", 0) << " tables"
        << (rpo.value("complete", false) ? "" : " (incomplete: some lags were only bounded)")
        << "\n";
    for (const json& t : rpo.value("tables", json::array())) {
      if (t.value("missing_commits", 0) == 0) continue;
      out << "    " << t.value("table", "") << ": " << t.value("missing_commits", 0)
          << " commits, lag " << Ms(t.value("lag_ms", json())) << ", bound "
          << Ms(t.value("bound_ms", json())) << "\n";
    }
  } else {
    out << "  not promoted\n";
  }
  const json& token = r.value("demotion_token", json());
  if (token.is_object()) {
    out << "\nDemotion token\n  " << token.value("tables", 0) << " tables of "
        << token.value("owner", "") << " captured at "
        << (token["captured_at"].is_string() ? token["captured_at"].get<std::string>() : "-")
        << "; " << token.value("target", "") << " waited " << Ms(token.value("waited_ms", json()))
        << ": " << token.value("state", "") << ": " << token.value("reason", "") << "\n";
  }
  for (const json& sb : r.value("split_brain", json::array()))
    out << "\nSPLIT BRAIN at " << sb.value("at", "") << ": " << sb.value("reason", "") << "\n";
  out << "\nFencing\n";
  if (r["fencing"].is_object()) {
    out << "  " << r["fencing"].value("kind", "") << " by " << r["fencing"].value("by", "")
        << " at " << r["fencing"].value("at", "") << ": " << r["fencing"].value("reason", "")
        << "\n";
  } else {
    out << "  not confirmed\n";
  }
  out << "\nApprovals\n";
  for (const json& a : r.value("approvals", json::array()))
    out << "  " << a.value("by", "") << " at "
        << (a.contains("at") && a["at"].is_string() ? a["at"].get<std::string>() : std::string("-"))
        << ": " << a.value("reason", "") << "\n";
  out << "\nGuard checks\n";
  for (const json& c : r.value("guard_checks", json::array())) {
    out << "  " << c.value("point", "") << " by " << c.value("by", "") << "\n";
    for (const json& g : c.value("results", json::array()))
      out << "    "
          << (g.value("ok", false)       ? "ok    "
              : g.value("waived", false) ? "waived"
                                         : "FAILED")
          << " " << g.value("guard", "") << ": " << g.value("reason", "") << "\n";
  }
  out << "\nSteps\n";
  for (const json& s : r.value("steps", json::array()))
    out << "  " << s.value("section", "") << "/" << s.value("step", "") << " ("
        << s.value("action", "") << ") " << s.value("state", "") << ", " << s.value("attempts", 0)
        << " attempt(s), " << Ms(s.value("duration_ms", json())) << ": " << s.value("reason", "")
        << "\n";
  out << "\nTimeline\n";
  for (const json& e : r.value("timeline", json::array()))
    out << "  " << e.value("at", "") << "  " << e.value("actor", "") << "  "
        << e.value("action", "") << "  " << e.value("reason", "") << "\n";
  return out.str();
}

}  // namespace icewarden
