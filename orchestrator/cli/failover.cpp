#include "orchestrator/cli/failover.h"

#include <httplib.h>
#include <unistd.h>

#include <chrono>
#include <iostream>
#include <map>
#include <optional>
#include <ostream>
#include <thread>

#include "orchestrator/cli/cli.h"
#include "orchestrator/cli/http.h"
#include "orchestrator/cli/readiness.h"
#include "orchestrator/failovers/failover_report.h"

namespace icewarden {
namespace {

using nlohmann::json;

// "/api/v1/failovers/ID", the id percent-encoded: it is typed by a person.
std::string FailoverPath(const std::string& id) {
  return "/api/v1/failovers/" + httplib::detail::encode_query_param(id);
}

// The question on a terminal; exit 2 without one unless --yes.
int Confirm(const std::string& question, bool yes) {
  if (yes) return kExitOk;
  if (!isatty(STDIN_FILENO)) {
    std::cerr << "icewarden: refusing to change state without confirmation: stdin is not a "
                 "terminal; pass --yes to confirm\n";
    return kExitUsage;
  }
  std::cout << question << " [y/N] " << std::flush;
  std::string answer;
  std::getline(std::cin, answer);
  if (answer == "y" || answer == "Y" || answer == "yes") return kExitOk;
  std::cerr << "icewarden: not confirmed; nothing changed\n";
  return kExitFailed;
}

void PrintGuards(std::ostream& out, const json& guards) {
  for (const json& g : guards) {
    const char* mark = g.value("ok", false)       ? "ok    "
                       : g.value("waived", false) ? "waived"
                                                  : "FAILED";
    out << "  " << mark << " " << FieldText(g, "guard") << ": " << FieldText(g, "reason") << "\n";
  }
}

void PrintPlan(std::ostream& out, const json& plan) {
  for (const json& step : plan.value("steps", json::array()))
    out << "  " << step.value("number", 0) << ". [" << FieldText(step, "section") << "] "
        << FieldText(step, "id") << " (" << FieldText(step, "action")
        << "): " << FieldText(step, "plan") << "\n";
}

void PrintChange(std::ostream& out, const json& plan_body, const std::string& from,
                 const std::string& to, const std::string& scope) {
  out << "Moves write ownership of "
      << (plan_body.contains("tables") ? FieldText(plan_body, "tables") + " tables"
                                       : std::string("the tables"))
      << " of scope " << scope << " from " << from << " to " << to << "\n";
  if (plan_body.contains("plan_hash")) out << "Plan " << FieldText(plan_body, "plan_hash") << "\n";
  if (plan_body.contains("plan")) {
    out << "Runbook " << FieldText(plan_body["plan"], "runbook") << " steps:\n";
    PrintPlan(out, plan_body["plan"]);
  }
  out << "Guards now (the rpo guard is the RPO estimate):\n";
  PrintGuards(out, plan_body.value("guards", json::array()));
  // The route's standing readiness: what its steps' preflights found at the latest round.
  if (plan_body.contains("readiness")) PrintRouteReadiness(out, plan_body["readiness"]);
}

void PrintRefusal(const ApiAnswer& a) {
  if (!a.body.is_object()) return;
  if (a.body.contains("guards")) {
    std::cerr << "guards:\n";
    for (const json& g : a.body["guards"])
      if (!g.value("ok", false))
        std::cerr << "  " << (g.value("waived", false) ? "waived" : "FAILED") << " "
                  << FieldText(g, "guard") << ": " << FieldText(g, "reason") << "\n";
  }
  if (a.body.contains("allowed_events"))
    std::cerr << "in phase " << FieldText(a.body, "phase")
              << " it takes: " << a.body["allowed_events"].dump() << "\n";
}

}  // namespace

int CmdFailoverPropose(const ClientOptions& o, const ProposeOptions& p, bool yes) {
  json req = {{"kind", p.kind}, {"scope", p.scope}, {"reason", p.reason}, {"dry_run", true}};
  if (!p.to.empty()) req["to"] = p.to;
  if (!p.from.empty()) req["from"] = p.from;
  if (!p.route.empty()) req["route"] = p.route;
  if (!p.accept_data_loss.empty()) req["accept_data_loss"] = p.accept_data_loss;
  ApiAnswer dry = CallApi(o, "POST", "/api/v1/failovers", req.dump());
  if (dry.exit_code != kExitOk) {
    PrintRefusal(dry);
    return dry.exit_code;
  }
  const json& plan = dry.body.value("plan", json::object());
  if (o.output == "json" && p.dry_run) {
    std::cout << dry.body.dump(2) << "\n";
    return kExitOk;
  }
  // With --id-only, stdout carries the id alone (ID=$(icewarden failover propose ...)).
  // With --output json, stdout carries the JSON answer alone too.
  std::ostream& shown = p.id_only || o.output == "json" ? std::cerr : std::cout;
  // A failback's regions and tables come from the failover it undoes: show what the server
  // resolved.
  const json& planned = plan.value("failover", json::object());
  if (dry.body.contains("failback_of"))
    shown << "Failback of " << FieldText(dry.body, "failback_of") << ": a switchover of the "
          << dry.body.value("failback_tables", 0) << " tables it moved, back to "
          << FieldText(planned, "to") << "\n";
  PrintChange(shown, dry.body, FieldText(planned, "from"),
              p.to.empty() ? FieldText(planned, "to") : p.to,
              p.kind == "failback" ? FieldText(planned, "scope") : p.scope);
  if (p.dry_run) return kExitOk;
  if (int rc = Confirm("Propose this " + p.kind + "?", yes); rc != kExitOk) return rc;
  req["dry_run"] = false;
  ApiAnswer made = CallApi(o, "POST", "/api/v1/failovers", req.dump());
  if (made.exit_code != kExitOk) {
    PrintRefusal(made);
    return made.exit_code;
  }
  if (p.id_only) {
    std::cout << FieldText(made.body["failover"], "id") << "\n";
  } else if (o.output == "json") {
    std::cout << made.body.dump(2) << "\n";
  } else {
    std::cout << "Proposed " << FieldText(made.body["failover"], "id") << ": "
              << FieldText(made.body, "decision") << "\n";
    std::cout << "An approver approves it with: icewarden failover approve "
              << FieldText(made.body["failover"], "id") << "\n";
  }
  return kExitOk;
}

int CmdRegionOverlay(const ClientOptions& o, const std::string& region, bool fence,
                     const std::string& reason, bool yes) {
  const std::string verb = fence ? "fence" : "unfence";
  std::cout << (fence ? "Fence " : "Clear the fenced overlay of ") << region
            << (fence ? ": no failover will target it until it is unfenced\n"
                      : ": failovers may target it again\n");
  if (int rc = Confirm("Go ahead?", yes); rc != kExitOk) return rc;
  json req = {{"reason", reason}};
  ApiAnswer done = CallApi(
      o, "POST", "/api/v1/regions/" + httplib::detail::encode_query_param(region) + "/" + verb,
      req.dump());
  if (done.exit_code != kExitOk) {
    PrintRefusal(done);
    return done.exit_code;
  }
  std::cout << FieldText(done.body, "decision") << "\n";
  return kExitOk;
}

int CmdFailoverApprove(const ClientOptions& o, const std::string& id, const ApproveOptions& a,
                       bool yes) {
  ApiAnswer shown = CallApi(o, "GET", FailoverPath(id) + "?plan=true");
  if (shown.exit_code != kExitOk) return shown.exit_code;
  const json& f = shown.body;
  const json& now = f.value("plan_now", json::object());
  std::cout << "Approve " << id << ": " << FieldText(f, "kind") << " of " << FieldText(f, "scope")
            << " from " << FieldText(f, "from") << " to " << FieldText(f, "to") << " ("
            << FieldText(f, "phase") << ")\n";
  if (f.value("promotion_hold", json()).is_string())
    std::cout << "Held before promotion: " << FieldText(f, "promotion_hold") << "\n";
  PrintChange(std::cout, now, FieldText(f, "from"), FieldText(f, "to"), FieldText(f, "scope"));
  std::string plan_hash = FieldText(now, "plan_hash");
  if (plan_hash == "-") plan_hash = FieldText(f.value("plan", json::object()), "plan_hash");
  if (int rc = Confirm("Approve plan " + plan_hash + "?", yes); rc != kExitOk) return rc;
  json req = {{"plan_hash", plan_hash}, {"reason", a.reason}};
  if (!a.accept_data_loss.empty()) req["accept_data_loss"] = a.accept_data_loss;
  if (!a.cooldown_override.empty()) req["cooldown_override"] = a.cooldown_override;
  if (!a.force_candidate.empty()) req["force_candidate"] = a.force_candidate;
  ApiAnswer done = CallApi(o, "POST", FailoverPath(id) + "/approve", req.dump());
  if (done.exit_code != kExitOk) {
    PrintRefusal(done);
    return done.exit_code;
  }
  std::cout << FieldText(done.body, "decision") << "\n";
  return kExitOk;
}

int CmdFailoverSimple(const ClientOptions& o, const std::string& id, const std::string& kind,
                      const std::string& text, bool yes) {
  ApiAnswer shown = CallApi(o, "GET", FailoverPath(id));
  if (shown.exit_code != kExitOk) return shown.exit_code;
  const json& f = shown.body;
  const std::string verb = kind == "fencing-confirmation" ? "Confirm that " + FieldText(f, "from") +
                                                                " has stopped writing the scope of"
                           : kind == "abort" ? "Abort"
                                             : "Acknowledge";
  std::cout << verb << " " << id << " (" << FieldText(f, "kind") << " of " << FieldText(f, "scope")
            << " from " << FieldText(f, "from") << " to " << FieldText(f, "to") << ", now "
            << FieldText(f, "phase") << ")\n";
  if (int rc = Confirm("Go ahead?", yes); rc != kExitOk) return rc;
  json req = {{kind == "ack" ? "comment" : "reason", text}};
  ApiAnswer done = CallApi(o, "POST", FailoverPath(id) + "/" + kind, req.dump());
  if (done.exit_code != kExitOk) {
    PrintRefusal(done);
    return done.exit_code;
  }
  std::cout << FieldText(done.body, "decision") << "\n";
  return kExitOk;
}

int CmdFailoverReport(const ClientOptions& o, const std::string& id) {
  ApiAnswer r = CallApi(o, "GET", FailoverPath(id) + "/report");
  if (r.exit_code != kExitOk) return r.exit_code;
  if (o.output == "json") {
    std::cout << r.body.dump(2) << "\n";
  } else {
    std::cout << RenderFailoverReportText(r.body);
  }
  return kExitOk;
}

int CmdFailoverWatch(const ClientOptions& o, const std::string& id, int timeout_seconds,
                     int poll_ms) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_seconds);
  std::string phase;
  std::map<std::string, std::string> steps;  // step -> "state attempt"
  // Prints what changed since the last look; the exit code once the failover has ended.
  auto look = [&]() -> std::optional<int> {
    ApiAnswer a = CallApi(o, "GET", FailoverPath(id));
    if (a.exit_code != kExitOk) return a.exit_code;
    const json& f = a.body;
    if (FieldText(f, "phase") != phase) {
      phase = FieldText(f, "phase");
      std::cout << "phase " << phase << ": " << FieldText(f, "last_reason") << std::endl;
    }
    for (const json& s : f.value("steps", json::array())) {
      const std::string key = FieldText(s, "step_id");
      const std::string now = FieldText(s, "state") + " (attempt " + FieldText(s, "attempt") + ")";
      if (steps[key] == now) continue;
      steps[key] = now;
      std::cout << "  step " << FieldText(s, "section") << "/" << key << " "
                << FieldText(s, "action") << ": " << now << " " << FieldText(s, "reason")
                << std::endl;
    }
    if (phase == "completed") return kExitOk;
    if (phase == "aborted" || phase == "rolled_back" || phase == "needs_attention")
      return kExitFailed;
    return std::nullopt;
  };
  // Looks again on every event about this failover in GET /api/v1/events (its phase changes
  // and its steps), and after the stream broke or went quiet for a while (a daemon restart,
  // a proxy): a missed event costs a look, never a stale answer.
  std::string last_event_id;
  for (;;) {
    if (auto done = look()) return *done;
    const auto left = std::chrono::duration_cast<std::chrono::seconds>(
        deadline - std::chrono::steady_clock::now());
    if (timeout_seconds > 0 && left.count() <= 0) {
      std::cerr << "icewarden: " << id << " is still " << phase << " after " << timeout_seconds
                << "s\n";
      return kExitFailed;
    }
    const int window = timeout_seconds > 0 ? std::min<int>(static_cast<int>(left.count()), 10) : 10;
    std::optional<int> ended;
    const bool read = ReadEvents(o, last_event_id, std::max(1, window), [&](const ServerEvent& e) {
      json data = json::parse(e.data, nullptr, false);
      if (data.is_discarded()) return true;
      const bool ours = (e.type == "failover" && data.value("target", "") == id) ||
                        (e.type == "step" && data.value("failover_id", "") == id);
      if (!ours) return true;
      ended = look();
      return !ended;
    });
    if (ended) return *ended;
    if (!read) std::this_thread::sleep_for(std::chrono::milliseconds(poll_ms));
  }
}

}  // namespace icewarden
