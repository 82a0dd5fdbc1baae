#include "orchestrator/api/pauses.h"

#include <charconv>
#include <nlohmann/json.hpp>

#include "orchestrator/api/command_body.h"
#include "orchestrator/failovers/automation_pause.h"
#include "orchestrator/failovers/failover_service.h"
#include "state/pause_store.h"
#include "state/record_json.h"

namespace icewarden {
namespace {

using nlohmann::json;

// A pause longer than this is a decision to turn automation off, which belongs in the config.
constexpr std::int64_t kMaxPauseMillis = 30LL * 24 * 3600 * 1000;

ApiResponse NoPauses() {
  return JsonErrorResponse(503, "unavailable", "this state store keeps no pauses");
}

Result<std::int64_t> ParseFor(const std::string& text) {
  const std::string example = "; give a whole number of s, m, h or d, e.g. \"2h\"";
  std::int64_t n = 0;
  const auto [end, err] = std::from_chars(text.data(), text.data() + text.size(), n);
  const std::string_view unit(end, static_cast<std::size_t>(text.data() + text.size() - end));
  std::int64_t scale = 0;
  if (unit == "s") scale = 1000;
  if (unit == "m") scale = 60 * 1000;
  if (unit == "h") scale = 3600 * 1000;
  if (unit == "d") scale = 24 * 3600 * 1000;
  if (err != std::errc() || scale == 0 || n <= 0)
    return Status::InvalidArgument("for: '" + text.substr(0, 64) + "' is not a duration" + example);
  if (n > kMaxPauseMillis / scale)
    return Status::InvalidArgument("for: at most 30d; a longer pause is a change of the config");
  return n * scale;
}

json PauseJson(const Pause& p, UnixMillis now) {
  return {{"scope", p.scope},
          {"by", p.by},
          {"reason", p.reason},
          {"since", FormatUnixMillis(p.since)},
          {"expected_end",
           p.expected_end == 0 ? json(nullptr) : json(FormatUnixMillis(p.expected_end))},
          {"overdue_seconds", PauseOverdueMillis(p, now) / 1000}};
}

ApiResponse Refused(const Status& s) {
  return JsonErrorResponse(HttpStatusOf(s), ErrorCodeOf(s), s.message());
}

AuditEvent Why(const Caller& caller, std::string action, const std::string& scope,
               std::string reason, UnixMillis now) {
  AuditEvent why;
  why.at = now;
  why.actor = caller.name;
  why.source = caller.source;
  why.action = std::move(action);
  why.target = scope;
  why.reason = std::move(reason);
  return why;
}

}  // namespace

ApiResponse HandlePauseList(PauseStore* pauses, UnixMillis now) {
  if (pauses == nullptr) return NoPauses();
  auto listed = pauses->ListPauses();
  if (!listed.ok()) return Refused(listed.status());
  json out = json::array();
  for (const Pause& p : *listed) out.push_back(PauseJson(p, now));
  return JsonResponse(200, json{{"pauses", out}});
}

ApiResponse HandlePause(PauseStore* pauses, const Config& config, const Caller& caller,
                        const std::string& body, UnixMillis now) {
  if (pauses == nullptr) return NoPauses();
  auto doc = ReadBody(body, {"scope", "reason", "for"});
  if (!doc.ok()) return BadRequestResponse(doc.status().message());
  Pause p;
  p.scope = "all";
  std::string for_text;
  for (auto [key, out] : {std::pair{"scope", &p.scope}, {"reason", &p.reason}, {"for", &for_text}})
    if (Status s = StringField(*doc, key, out); !s.ok()) return BadRequestResponse(s.message());
  if (Status s = CheckReason("a pause", p.reason, true); !s.ok()) return Refused(s);
  if (Status s = CheckPauseScope(p.scope, config); !s.ok()) return Refused(s);
  if (!for_text.empty()) {
    auto ms = ParseFor(for_text);
    if (!ms.ok()) return Refused(ms.status());
    p.expected_end = now + *ms;
  }
  p.by = caller.name;
  p.since = now;
  std::string reason = p.reason;
  if (p.expected_end != 0) reason += " (expected until " + FormatUnixMillis(p.expected_end) + ")";
  if (Status s = pauses->PutPause(p, Why(caller, "automation.pause", p.scope, reason, now));
      !s.ok())
    return Refused(s);
  return JsonResponse(201, json{{"pause", PauseJson(p, now)}});
}

ApiResponse HandleResume(PauseStore* pauses, const Caller& caller, const std::string& body,
                         UnixMillis now) {
  if (pauses == nullptr) return NoPauses();
  auto doc = ReadBody(body, {"scope", "reason"});
  if (!doc.ok()) return BadRequestResponse(doc.status().message());
  std::string scope = "all", reason;
  if (Status s = StringField(*doc, "scope", &scope); !s.ok())
    return BadRequestResponse(s.message());
  if (Status s = StringField(*doc, "reason", &reason); !s.ok())
    return BadRequestResponse(s.message());
  if (Status s = CheckReason("a resume", reason, true); !s.ok()) return Refused(s);
  auto listed = pauses->ListPauses();
  if (!listed.ok()) return Refused(listed.status());
  const Pause* found = nullptr;
  for (const Pause& p : *listed)
    if (p.scope == scope) found = &p;
  if (found == nullptr) {
    // Appended piece by piece: GCC 12 at -O3 misreads `"..." + std::string&&` (-Wrestrict).
    std::string message = "'";
    message.append(scope.substr(0, 128)).append("' is not paused");
    if (listed->empty()) message.append("; nothing is");
    for (std::size_t i = 0; i < listed->size(); ++i)
      message.append(i == 0 ? "; paused: " : ", ").append((*listed)[i].scope);
    return JsonErrorResponse(404, "not_found", message);
  }
  if (Status s = pauses->DeletePause(scope, Why(caller, "automation.resume", scope, reason, now));
      !s.ok())
    return Refused(s);
  return JsonResponse(200, json{{"resumed", PauseJson(*found, now)}});
}

}  // namespace icewarden
