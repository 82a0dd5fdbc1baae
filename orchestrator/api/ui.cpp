#include "orchestrator/api/ui.h"

#include <nlohmann/json.hpp>
#include <string>

#include "orchestrator/api/auth.h"
#include "orchestrator/dashboard/dashboard.h"

namespace icewarden {

ApiResponse DashboardFileResponse(const Dashboard* dashboard, std::string_view name) {
  if (dashboard == nullptr) {
    return JsonErrorResponse(503, "unavailable", "this daemon serves no dashboard");
  }
  auto file = dashboard->Find(name);
  if (!file) {
    return JsonErrorResponse(
        404, "not_found",
        "no dashboard file '" + std::string(name.substr(0, 128)) + "'; the dashboard is at /");
  }
  ApiResponse res;
  res.body = std::move(file->body);
  res.content_type = std::move(file->content_type);
  res.headers = {
      {"Content-Security-Policy", std::string(kDashboardCsp)},
      {"X-Content-Type-Options", "nosniff"},
      {"X-Frame-Options", "DENY"},
      {"Referrer-Policy", "no-referrer"},
      {"Cross-Origin-Opener-Policy", "same-origin"},
      {"Cross-Origin-Resource-Policy", "same-origin"},
      // Small files, and a new binary may change them: the browser asks every time (a
      // development directory's change shows on reload for the same reason).
      {"Cache-Control", "no-cache"},
  };
  return res;
}

nlohmann::json SessionJson(const Principal& principal) {
  return {{"name", principal.name},
          {"role", RoleName(principal.role)},
          {"permissions", PermissionNamesOf(principal.role)}};
}

}  // namespace icewarden
