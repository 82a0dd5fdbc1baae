// The drill routes of the HTTP API (drill_service.h does the work):
//
//   GET  /api/v1/drills                       {"drills": [...configured, last run], "runs": [...]}
//                                             ?limit=1..1000 (50)                 read_failovers
//   POST /api/v1/drills/{name}/runs           {mode?: plan|shadow|live} -> 201 {"run": ...}
//                                                                                 run_drill
//   GET  /api/v1/drills/runs/{id}             the run's report (drill_report.h)   read_failovers
//   POST /api/v1/drills/runs/{id}/notes       {text} -> 201 {"note": ...}         note_drill
//
// Bodies are JSON objects with only the fields listed; errors are the API's JSON errors
// (400 bad input, 404 unknown drill or run, 409 a slot already run).
// Thread-safety: as DrillService.
#pragma once

#include <string>

#include "orchestrator/api/api.h"

namespace icewarden {

class DrillService;
struct Caller;

ApiResponse HandleDrillRun(DrillService& service, const Caller& caller, const std::string& drill,
                           const std::string& body);
ApiResponse HandleDrillNote(DrillService& service, const Caller& caller, const std::string& run_id,
                            const std::string& body);
ApiResponse HandleDrillReport(DrillService& service, const std::string& run_id);
ApiResponse HandleDrillList(DrillService& service, std::size_t limit);

}  // namespace icewarden
