#include "orchestrator/dashboard/dashboard.h"

#include <algorithm>
#include <fstream>
#include <sstream>
#include <utility>

#include "orchestrator/dashboard/dashboard_files.h"

namespace icewarden {
namespace {

bool ValidName(std::string_view name) {
  if (name.empty() || name.size() > 128 || name.front() == '.') return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
           c == '-' || c == '_';
  });
}

}  // namespace

std::optional<std::string> DashboardContentType(std::string_view name) {
  const auto dot = name.rfind('.');
  if (dot == std::string_view::npos) return std::nullopt;
  const std::string_view ext = name.substr(dot + 1);
  if (ext == "html") return "text/html; charset=utf-8";
  if (ext == "js") return "text/javascript; charset=utf-8";
  if (ext == "css") return "text/css; charset=utf-8";
  if (ext == "svg") return "image/svg+xml";
  return std::nullopt;
}

Dashboard Dashboard::Embedded() { return Dashboard(""); }

Dashboard Dashboard::FromDirectory(std::string dir) { return Dashboard(std::move(dir)); }

std::optional<DashboardFile> Dashboard::Find(std::string_view name) const {
  if (!ValidName(name)) return std::nullopt;
  auto type = DashboardContentType(name);
  if (!type) return std::nullopt;
  if (dir_.empty()) {
    for (const EmbeddedFile& f : DashboardFiles())
      if (f.name == name) return DashboardFile{std::string(f.body), *type};
    return std::nullopt;
  }
  std::ifstream in(dir_ + "/" + std::string(name), std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream body;
  body << in.rdbuf();
  if (in.bad()) return std::nullopt;
  return DashboardFile{std::move(body).str(), *type};
}

std::vector<std::string> Dashboard::EmbeddedNames() {
  std::vector<std::string> out;
  for (const EmbeddedFile& f : DashboardFiles()) out.emplace_back(f.name);
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace icewarden
