#include "orchestrator/cli/drill.h"

#include <httplib.h>

#include <chrono>
#include <iostream>
#include <thread>

#include "orchestrator/cli/cli.h"
#include "orchestrator/cli/http.h"
#include "orchestrator/cli/text_table.h"
#include "orchestrator/drills/drill_report.h"

namespace icewarden {
namespace {

using nlohmann::json;

std::string Enc(const std::string& s) { return httplib::detail::encode_query_param(s); }

int PrintReport(const ClientOptions& o, const json& report) {
  if (o.output == "json") {
    std::cout << report.dump(2) << "\n";
  } else {
    std::cout << RenderDrillReportText(report);
  }
  const std::string verdict = FieldText(report.value("verdict", json::object()), "result");
  return verdict == "failed" ? kExitFailed : kExitOk;
}

}  // namespace

int CmdDrillRun(const ClientOptions& o, const std::string& name, const std::string& mode, bool wait,
                int timeout_seconds) {
  json body = json::object();
  if (!mode.empty()) body["mode"] = mode;
  ApiAnswer started = CallApi(o, "POST", "/api/v1/drills/" + Enc(name) + "/runs", body.dump());
  if (started.exit_code != kExitOk) return started.exit_code;
  const std::string id = FieldText(started.body.value("run", json::object()), "id");
  if (!wait) {
    if (o.output == "json") {
      std::cout << started.body.dump(2) << "\n";
    } else {
      std::cout << id << "\n";
    }
    return kExitOk;
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_seconds);
  for (;;) {
    ApiAnswer r = CallApi(o, "GET", "/api/v1/drills/runs/" + Enc(id));
    if (r.exit_code != kExitOk) return r.exit_code;
    const std::string phase = FieldText(r.body.value("run", json::object()), "phase");
    if (phase == "finished" || phase == "waiting") {
      if (phase == "waiting" && o.output != "json")
        std::cerr << "icewarden: drill run " << id << " proposed failover "
                  << FieldText(r.body["run"], "failover_id")
                  << ": it waits for an approver (icewarden failover approve ...); follow it "
                     "with: icewarden drill report "
                  << id << "\n";
      return PrintReport(o, r.body);
    }
    if (timeout_seconds > 0 && std::chrono::steady_clock::now() >= deadline) {
      std::cerr << "icewarden: drill run " << id << " is still " << phase << " after "
                << timeout_seconds << "s; see: icewarden drill report " << id << "\n";
      return kExitFailed;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
  }
}

int CmdDrillList(const ClientOptions& o) {
  ApiAnswer r = CallApi(o, "GET", "/api/v1/drills");
  if (r.exit_code != kExitOk) return r.exit_code;
  if (o.output == "json") {
    std::cout << r.body.dump(2) << "\n";
    return kExitOk;
  }
  TextTable drills({"DRILL", "ROUTE", "MODE", "SCHEDULE", "TIME ZONE", "LAST RUN", "VERDICT"});
  for (const json& d : r.body.value("drills", json::array())) {
    const json last = d.value("last_run", json(nullptr));
    drills.AddRow({FieldText(d, "name"), FieldText(d, "route"), FieldText(d, "mode"),
                   FieldText(d, "schedule"), FieldText(d, "time_zone"),
                   last.is_object() ? FieldText(last, "id") : "-",
                   last.is_object() ? FieldText(last, "verdict") : "-"});
  }
  drills.Print(std::cout);
  const json runs = r.body.value("runs", json::array());
  if (!runs.empty()) {
    std::cout << "\n";
    TextTable list({"RUN", "DRILL", "MODE", "PHASE", "VERDICT", "STARTED", "TRIGGER"});
    for (const json& run : runs)
      list.AddRow({FieldText(run, "id"), FieldText(run, "drill"), FieldText(run, "mode"),
                   FieldText(run, "phase"), FieldText(run, "verdict"), FieldText(run, "started_at"),
                   FieldText(run, "trigger")});
    list.Print(std::cout);
  }
  return kExitOk;
}

int CmdDrillReport(const ClientOptions& o, const std::string& id) {
  ApiAnswer r = CallApi(o, "GET", "/api/v1/drills/runs/" + Enc(id));
  if (r.exit_code != kExitOk) return r.exit_code;
  PrintReport(o, r.body);
  return kExitOk;
}

int CmdDrillNote(const ClientOptions& o, const std::string& id, const std::string& text) {
  ApiAnswer r =
      CallApi(o, "POST", "/api/v1/drills/runs/" + Enc(id) + "/notes", json{{"text", text}}.dump());
  if (r.exit_code != kExitOk) return r.exit_code;
  if (o.output == "json") {
    std::cout << r.body.dump(2) << "\n";
  } else {
    std::cout << "note added to drill run " << id << "\n";
  }
  return kExitOk;
}

}  // namespace icewarden
