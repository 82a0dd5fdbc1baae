// The dashboard's files as compiled into the binary: dashboard_files.cpp is generated at
// build time by embed.cmake from www/. Only dashboard.cpp reads this.
#pragma once

#include <span>
#include <string_view>

namespace icewarden {

struct EmbeddedFile {
  std::string_view name;  // "app.js": the path under www/
  std::string_view body;
};

std::span<const EmbeddedFile> DashboardFiles();

}  // namespace icewarden
