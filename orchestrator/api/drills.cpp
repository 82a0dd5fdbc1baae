#include "orchestrator/api/drills.h"

#include <nlohmann/json.hpp>

#include "orchestrator/api/command_body.h"
#include "orchestrator/drills/drill_service.h"

namespace icewarden {
namespace {

using nlohmann::json;

ApiResponse Answer(const CommandOutcome& out, int ok_status) {
  if (out.status.ok()) return JsonResponse(ok_status, out.body);
  return JsonErrorResponse(HttpStatusOf(out.status), ErrorCodeOf(out.status), out.status.message());
}

ApiResponse FromStatus(const Status& s) {
  return JsonErrorResponse(HttpStatusOf(s), ErrorCodeOf(s), s.message());
}

}  // namespace

ApiResponse HandleDrillRun(DrillService& service, const Caller& caller, const std::string& drill,
                           const std::string& body) {
  // An empty body means the drill's configured mode.
  auto doc = ReadBody(body.empty() ? "{}" : body, {"mode"});
  if (!doc.ok()) return BadRequestResponse(doc.status().message());
  std::string mode;
  if (Status s = StringField(*doc, "mode", &mode); !s.ok()) return BadRequestResponse(s.message());
  if (!mode.empty() && mode != "plan" && mode != "shadow" && mode != "live") {
    std::string got = "mode must be plan, shadow or live, got '";
    got += mode.substr(0, 64);  // echoed, so bounded
    if (mode.size() > 64) got += "...";
    got += "'";
    return BadRequestResponse(got);
  }
  return Answer(service.Run(caller, {drill, mode, 0}), 201);
}

ApiResponse HandleDrillNote(DrillService& service, const Caller& caller, const std::string& run_id,
                            const std::string& body) {
  auto doc = ReadBody(body, {"text"});
  if (!doc.ok()) return BadRequestResponse(doc.status().message());
  std::string text;
  if (Status s = StringField(*doc, "text", &text); !s.ok()) return BadRequestResponse(s.message());
  if (text.empty()) return BadRequestResponse("text is required: the note itself");
  return Answer(service.Note(caller, run_id, text), 201);
}

ApiResponse HandleDrillReport(DrillService& service, const std::string& run_id) {
  auto report = service.Report(run_id);
  if (!report.ok()) return FromStatus(report.status());
  return JsonResponse(200, *report);
}

ApiResponse HandleDrillList(DrillService& service, std::size_t limit) {
  auto list = service.List(limit);
  if (!list.ok()) return FromStatus(list.status());
  return JsonResponse(200, *list);
}

}  // namespace icewarden
