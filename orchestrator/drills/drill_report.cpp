#include "orchestrator/drills/drill_report.h"

#include <algorithm>
#include <sstream>

#include "orchestrator/failovers/failover_report.h"
#include "state/clock.h"
#include "state/drill_store.h"
#include "state/state_store.h"

namespace icewarden {
namespace {

using nlohmann::json;

json At(UnixMillis t) { return t == 0 ? json(nullptr) : json(FormatUnixMillis(t)); }

json Span(UnixMillis a, UnixMillis b) {
  if (a == 0 || b == 0 || b < a) return nullptr;
  return b - a;
}

json Parsed(const std::string& text, json fallback) {
  json j = json::parse(text, nullptr, false);
  return j.is_discarded() ? fallback : j;
}

// First start and last finish of the steps `pick` selects.
json SpanOf(const std::vector<DrillStep>& steps, bool (*pick)(const DrillStep&)) {
  UnixMillis start = 0, end = 0;
  for (const DrillStep& s : steps) {
    if (!pick(s) || s.started_at == 0 || s.state == "skipped") continue;
    if (start == 0 || s.started_at < start) start = s.started_at;
    end = std::max(end, s.finished_at);
  }
  return Span(start, end);
}

std::string S(const json& j, const char* key) {
  if (!j.is_object() || !j.contains(key) || j[key].is_null()) return "-";
  return j[key].is_string() ? j[key].get<std::string>() : j[key].dump();
}

}  // namespace

json DrillRunJson(const DrillRun& r) {
  return {{"id", r.id},
          {"drill", r.drill},
          {"mode", r.mode},
          {"phase", DrillPhaseName(r.phase)},
          {"trigger", r.trigger},
          {"scheduled_for", At(r.scheduled_for)},
          {"verdict", r.verdict.empty() ? "pending" : r.verdict},
          {"verdict_reason", r.verdict_reason},
          {"failing_step", r.failing_step.empty() ? json(nullptr) : json(r.failing_step)},
          {"scope", r.scope},
          {"from", r.from},
          {"to", r.to},
          {"failover_id", r.failover_id.empty() ? json(nullptr) : json(r.failover_id)},
          {"failback_id", r.failback_id.empty() ? json(nullptr) : json(r.failback_id)},
          {"started_at", At(r.started_at)},
          {"finished_at", At(r.finished_at)}};
}

Result<json> BuildDrillReport(DrillStore& drills, StateStore& store, const std::string& run_id,
                              long long rto_target_ms) {
  auto run = drills.GetDrillRun(run_id);
  if (!run.ok()) return run.status();
  if (!run->has_value()) return Status::NotFound("no drill run with id '" + run_id + "'");
  const DrillRun& r = **run;
  auto steps = drills.ListDrillSteps(run_id);
  if (!steps.ok()) return steps.status();
  auto notes = drills.ListDrillNotes(run_id);
  if (!notes.ok()) return notes.status();
  const json result = Parsed(r.result_json, json::object());

  json report = {{"run", DrillRunJson(r)}};
  report["verdict"] = {
      {"result", r.verdict.empty() ? "pending" : r.verdict},
      {"reason", r.verdict_reason},
      {"failing_step", r.failing_step.empty() ? json(nullptr) : json(r.failing_step)}};
  json durations = {{"detection_ms", nullptr}, {"approval_ms", nullptr},
                    {"fencing_ms", nullptr},   {"transfer_ms", nullptr},
                    {"dns_ms", nullptr},       {"verification_ms", nullptr}};
  json measured_rto = nullptr;
  json rpo = result.value("rpo", json(nullptr));
  json step_list = json::array();
  json timeline = json::array();
  timeline.push_back(
      {{"at", At(r.started_at)}, {"event", "run started (" + r.mode + ", " + r.trigger + ")"}});

  if (r.mode == "shadow") {
    durations["fencing_ms"] =
        SpanOf(*steps, [](const DrillStep& s) { return s.section == "fence"; });
    durations["transfer_ms"] =
        SpanOf(*steps, [](const DrillStep& s) { return s.action.rfind("ownership.", 0) == 0; });
    durations["dns_ms"] =
        SpanOf(*steps, [](const DrillStep& s) { return s.action.rfind("dns.", 0) == 0; });
    durations["verification_ms"] =
        SpanOf(*steps, [](const DrillStep& s) { return s.section == "verify"; });
    // From the first step to the last verify step: how long the runbook takes end to end.
    UnixMillis first = 0, last = 0;
    bool all_ok = !steps->empty();
    for (const DrillStep& s : *steps) {
      if (s.state != "succeeded" && s.state != "skipped") all_ok = false;
      if (s.started_at != 0 && (first == 0 || s.started_at < first)) first = s.started_at;
      last = std::max(last, s.finished_at);
    }
    if (all_ok) measured_rto = Span(first, last);
  }
  for (const DrillStep& s : *steps) {
    step_list.push_back(
        {{"id", s.step_id},
         {"section", s.section},
         {"action", s.action},
         {"status", s.state},
         {"attempts", s.attempts},
         {"duration_ms", Span(s.started_at, s.finished_at)},
         {"error", s.error.empty() ? json(nullptr) : json(s.error)},
         {"cleanup", s.cleanup.empty() ? json(nullptr) : json(s.cleanup)},
         {"cleanup_reason", s.cleanup_reason.empty() ? json(nullptr) : json(s.cleanup_reason)},
         {"params", Parsed(s.params_json, json::object())}});
    if (s.started_at != 0)
      timeline.push_back({{"at", At(s.started_at)},
                          {"event", "step " + s.step_id + " (" + s.action + ") started"}});
    if (s.finished_at != 0)
      timeline.push_back({{"at", At(s.finished_at)},
                          {"event", "step " + s.step_id + " " + s.state +
                                        (s.error.empty() ? std::string() : ": " + s.error)}});
  }
  if (r.mode == "plan") {
    report["plan"] = result.value("plan", json(nullptr));
    report["guards"] = result.value("guards", json::array());
  }
  if (r.mode == "live") {
    for (auto [key, id] : {std::pair{"failover", r.failover_id}, {"failback", r.failback_id}}) {
      report[key] = nullptr;
      if (id.empty()) continue;
      auto fr = BuildFailoverReport(store, id);
      if (!fr.ok()) continue;
      report[key] = *fr;
      for (const json& t : (*fr).value("timeline", json::array()))
        timeline.push_back({{"at", t.value("at", json(nullptr))},
                            {"event", std::string(key) + " " + id + ": " + t.value("reason", "")}});
      for (const json& s : (*fr).value("steps", json::array())) {
        json item = s;
        item["id"] = std::string(key) + "/" + s.value("step", "");
        item["status"] = s.value("state", "");
        step_list.push_back(item);
      }
    }
    if (report["failover"].is_object()) {
      const json& d = report["failover"]["durations"];
      durations["detection_ms"] = d.value("detection_ms", json(nullptr));
      durations["approval_ms"] = d.value("decision_ms", json(nullptr));
      durations["fencing_ms"] = d.value("fencing_ms", json(nullptr));
      durations["transfer_ms"] = d.value("transfer_ms", json(nullptr));
      durations["dns_ms"] = d.value("dns_ms", json(nullptr));
      durations["verification_ms"] = d.value("verification_ms", json(nullptr));
      // A failover that rolled back recovered nothing: there is no RTO to hold against the
      // target (its rto_ms is the time until the rollback).
      if (report["failover"]["phases"].contains("completed"))
        measured_rto = d.value("rto_ms", json(nullptr));
      rpo = report["failover"].value("rpo", json(nullptr));
    }
  }
  for (const DrillNote& n : *notes)
    timeline.push_back({{"at", At(n.at)}, {"event", "note by " + n.by + ": " + n.text}});
  if (r.finished_at != 0)
    timeline.push_back({{"at", At(r.finished_at)},
                        {"event", "run finished: " + r.verdict + ": " + r.verdict_reason}});
  // ISO-8601 UTC strings sort as time; nulls last.
  std::stable_sort(timeline.begin(), timeline.end(), [](const json& a, const json& b) {
    if (a["at"].is_null() || b["at"].is_null()) return !a["at"].is_null() && b["at"].is_null();
    return a["at"].get<std::string>() < b["at"].get<std::string>();
  });
  json within = nullptr;
  if (measured_rto.is_number() && rto_target_ms > 0)
    within = measured_rto.get<long long>() <= rto_target_ms;
  report["rto"] = {{"target_ms", rto_target_ms > 0 ? json(rto_target_ms) : json(nullptr)},
                   {"measured_ms", measured_rto},
                   {"within_target", within}};
  report["rpo"] =
      rpo.is_object()
          ? json{{"measured_ms", rpo.value("worst_lag_ms", json(nullptr))}, {"detail", rpo}}
          : json{{"measured_ms", nullptr},
                 {"detail", "not measured: no lag round covered the scope"}};
  report["durations"] = durations;
  report["steps"] = step_list;
  report["timeline"] = timeline;
  json note_list = json::array();
  for (const DrillNote& n : *notes)
    note_list.push_back({{"at", At(n.at)}, {"by", n.by}, {"text", n.text}});
  report["notes"] = note_list;
  return report;
}

std::string RenderDrillReportText(const json& report) {
  std::ostringstream out;
  const json& run = report.value("run", json::object());
  const json& verdict = report.value("verdict", json::object());
  out << "drill run " << S(run, "id") << " (" << S(run, "drill") << ", " << S(run, "mode")
      << " mode, " << S(run, "phase") << ")\n";
  out << "  scope        " << S(run, "scope") << ": " << S(run, "from") << " -> " << S(run, "to")
      << "\n";
  out << "  trigger      " << S(run, "trigger") << "\n";
  out << "  started      " << S(run, "started_at") << "\n";
  out << "  finished     " << S(run, "finished_at") << "\n";
  out << "verdict        " << S(verdict, "result");
  if (S(verdict, "failing_step") != "-") out << " at step " << S(verdict, "failing_step");
  out << ": " << S(verdict, "reason") << "\n";
  const json& rto = report.value("rto", json::object());
  out << "RTO            target " << S(rto, "target_ms") << " ms, measured "
      << S(rto, "measured_ms") << " ms, within target " << S(rto, "within_target") << "\n";
  out << "RPO            measured " << S(report.value("rpo", json::object()), "measured_ms")
      << " ms\n";
  out << "durations (ms)\n";
  const json durations = report.value("durations", json::object());
  for (const auto& [k, v] : durations.items())
    out << "  " << k << std::string(k.size() < 18 ? 18 - k.size() : 1, ' ')
        << (v.is_null() ? "-" : v.dump()) << "\n";
  if (report.contains("guards") && report["guards"].is_array()) {
    out << "guards\n";
    for (const json& g : report["guards"])
      out << "  " << (g.value("ok", false) ? "ok    " : "FAILED") << " " << S(g, "guard") << ": "
          << S(g, "reason") << "\n";
  }
  if (report.contains("plan") && report["plan"].is_object()) {
    out << "plan\n";
    const json plan_steps = report["plan"].value("steps", json::array());
    for (const json& step : plan_steps)
      out << "  " << S(step, "number") << ". [" << S(step, "section") << "] " << S(step, "id")
          << " (" << S(step, "action") << "): " << S(step, "plan") << "\n";
  }
  out << "steps\n";
  for (const json& s : report.value("steps", json::array())) {
    out << "  " << S(s, "status") << " " << S(s, "id") << " (" << S(s, "action") << ")"
        << " attempts " << S(s, "attempts") << ", " << S(s, "duration_ms") << " ms";
    if (S(s, "error") != "-") out << ": " << S(s, "error");
    if (S(s, "cleanup") != "-") out << " [cleanup " << S(s, "cleanup") << "]";
    out << "\n";
  }
  out << "timeline\n";
  for (const json& t : report.value("timeline", json::array()))
    out << "  " << S(t, "at") << "  " << S(t, "event") << "\n";
  out << "notes\n";
  const json& notes = report.value("notes", json::array());
  if (notes.empty())
    out << "  (none; add one with: icewarden drill note " << S(run, "id") << " TEXT)\n";
  for (const json& n : notes)
    out << "  " << S(n, "at") << "  " << S(n, "by") << ": " << S(n, "text") << "\n";
  return out.str();
}

}  // namespace icewarden
