#include "orchestrator/cli/readiness.h"

#include <iostream>
#include <nlohmann/json.hpp>

#include "orchestrator/cli/cli.h"
#include "orchestrator/cli/http.h"
#include "orchestrator/cli/text_table.h"

namespace icewarden {
namespace {

using nlohmann::json;

}  // namespace

void PrintRouteReadiness(std::ostream& out, const json& r) {
  out << "Readiness of route " << FieldText(r, "route");
  if (r.contains("checked_at")) {
    out << " (checked " << FieldText(r, "checked_at");
    if (r.contains("age_ms") && r["age_ms"].is_number())
      out << ", " << r["age_ms"].get<long long>() / 1000 << " s ago";
    out << ")";
  }
  if (r.contains("guards")) out << ", templates and preflights";
  const json ready = r.value("ready", json());
  if (ready.is_boolean() && ready.get<bool>()) {
    out << ": ready\n";
    return;
  }
  out << (ready.is_boolean() ? ": NOT ready\n" : ": unknown\n");
  for (const json& reason : r.value("reasons", json::array()))
    out << "  - " << (reason.is_string() ? reason.get<std::string>() : reason.dump()) << "\n";
}

int CmdReadiness(const ClientOptions& o) {
  ApiAnswer a = CallApi(o, "GET", "/api/v1/readiness");
  if (a.exit_code != kExitOk) return a.exit_code;
  const bool all_ready = a.body.value("ready", false);
  if (o.output == "json") {
    std::cout << a.body.dump(2) << "\n";
    return all_ready ? kExitOk : kExitFailed;
  }
  TextTable t({"ROUTE", "KIND", "FROM", "TO", "SCOPE", "READY", "CHECKED", "REASONS"});
  const json routes = a.body.value("routes", json::array());
  for (const json& r : routes)
    t.AddRow({FieldText(r, "route"), FieldText(r, "kind"), FieldText(r, "from"), FieldText(r, "to"),
              FieldText(r, "scope"), r.value("ready", false) ? "yes" : "NO",
              FieldText(r, "checked_at"),
              std::to_string(r.value("reasons", json::array()).size())});
  t.Print(std::cout);
  for (const json& r : routes) {
    if (r.value("ready", false)) continue;
    std::cout << "\n";
    PrintRouteReadiness(std::cout, r);
  }
  return all_ready ? kExitOk : kExitFailed;
}

}  // namespace icewarden
