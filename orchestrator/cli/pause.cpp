#include "orchestrator/cli/pause.h"

#include <iostream>
#include <nlohmann/json.hpp>

#include "orchestrator/cli/cli.h"
#include "orchestrator/cli/http.h"
#include "orchestrator/cli/text_table.h"

namespace icewarden {
namespace {

using nlohmann::json;

std::string Until(const json& p) {
  std::string s = FieldText(p, "expected_end");
  if (s == "-") return "until resumed";
  const auto overdue = p.value("overdue_seconds", 0);
  if (overdue > 0) s += " (overdue by " + std::to_string(overdue / 60) + " min)";
  return s;
}

}  // namespace

int CmdPause(const ClientOptions& o, const PauseOptions& p) {
  json req = {{"scope", p.scope}, {"reason", p.reason}};
  if (!p.for_duration.empty()) req["for"] = p.for_duration;
  ApiAnswer a = CallApi(o, "POST", "/api/v1/pauses", req.dump());
  if (a.exit_code != kExitOk) return a.exit_code;
  if (o.output == "json") {
    std::cout << a.body.dump(2) << "\n";
    return kExitOk;
  }
  const json& made = a.body["pause"];
  std::cout << "Paused " << FieldText(made, "scope") << " (" << Until(made)
            << "): webhooks and scheduled drills propose nothing there; probes, lag and "
               "operators' commands go on.\n"
            << "Lift it with: icewarden resume"
            << (p.scope == "all" ? std::string() : " --scope " + p.scope) << " --reason ...\n";
  return kExitOk;
}

int CmdResume(const ClientOptions& o, const std::string& scope, const std::string& reason) {
  json req = {{"scope", scope}, {"reason", reason}};
  ApiAnswer a = CallApi(o, "POST", "/api/v1/pauses/resume", req.dump());
  if (a.exit_code != kExitOk) return a.exit_code;
  if (o.output == "json") {
    std::cout << a.body.dump(2) << "\n";
    return kExitOk;
  }
  const json& was = a.body["resumed"];
  std::cout << "Resumed " << FieldText(was, "scope") << " (paused by " << FieldText(was, "by")
            << " since " << FieldText(was, "since") << ": " << FieldText(was, "reason") << ")\n";
  return kExitOk;
}

int CmdPauseList(const ClientOptions& o) {
  ApiAnswer a = CallApi(o, "GET", "/api/v1/pauses");
  if (a.exit_code != kExitOk) return a.exit_code;
  if (o.output == "json") {
    std::cout << a.body.dump(2) << "\n";
    return kExitOk;
  }
  const json& pauses = a.body["pauses"];
  if (!pauses.is_array() || pauses.empty()) {
    std::cout << "Nothing is paused: webhooks and scheduled drills may propose.\n";
    return kExitOk;
  }
  TextTable t({"SCOPE", "BY", "SINCE", "UNTIL", "REASON"});
  for (const json& p : pauses)
    t.AddRow({FieldText(p, "scope"), FieldText(p, "by"), FieldText(p, "since"), Until(p),
              FieldText(p, "reason")});
  t.Print(std::cout);
  return kExitOk;
}

}  // namespace icewarden
