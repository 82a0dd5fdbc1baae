// The report of one failover, built from the store alone (the failover, its step journal
// and its audit events), so it reads the same during the failover, after it, and after a
// restart: a timeline of phases, the durations an incident review asks for (detection,
// decision, fencing, transfer, DNS, verification, total RTO), the RPO at promotion, the
// fencing evidence, approvals, every guard check, every step, and who did what.
// Thread-safety: pure functions over the store (which serialises itself).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "state/status.h"

namespace icewarden {

class StateStore;

// kNotFound for an unknown id.
Result<nlohmann::json> BuildFailoverReport(StateStore& store, const std::string& id);

// The report for people: sections of aligned text.
std::string RenderFailoverReportText(const nlohmann::json& report);

}  // namespace icewarden
