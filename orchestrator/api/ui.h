// The dashboard's routes (orchestrator/dashboard/): the page and its files, with headers
// that keep it to itself, and who the signed-in person is.
//
//   GET /              index.html, no token (the page asks for one)
//   GET /ui/NAME       the page's scripts and styles, no token
//   GET /api/v1/session  {"name", "role", "permissions": [...]}            read_regions
//
// Every file goes out with a Content-Security-Policy that lets the page run scripts, load
// styles and connect only to the daemon itself, frame nothing and be framed by nothing, and
// submit no form (the page sends its requests itself, with the bearer token from session
// storage; there are no cookies, so a cross-site request carries no credential).
// Thread-safety: pure functions.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <string_view>

#include "orchestrator/api/api.h"

namespace icewarden {

class Dashboard;
struct Principal;

// The Content-Security-Policy header's value on every dashboard file.
inline constexpr std::string_view kDashboardCsp =
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; "
    "img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

// The file `name` ("index.html") with its headers; 404 when there is none, 503 when the
// daemon serves no dashboard (`dashboard` null).
ApiResponse DashboardFileResponse(const Dashboard* dashboard, std::string_view name);

// GET /api/v1/session's body.
nlohmann::json SessionJson(const Principal& principal);

}  // namespace icewarden
