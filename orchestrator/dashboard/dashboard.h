// The web dashboard's static files: HTML, CSS and JavaScript from orchestrator/dashboard/www/,
// compiled into the binary at build time (embed.cmake), so `serve` needs nothing from disk or
// from outside to show them (an air-gapped network sees the same page). The page talks to the
// daemon only through the JSON API and the event stream, with the token the person pasted.
//
// For development, `serve --dashboard-dir DIR` reads the files from DIR on every request
// instead, so a change shows on reload.
//
// Names are flat ("app.js"): letters, digits, '.', '-' and '_', not starting with '.', with an
// extension this knows the content type of. Anything else is not a dashboard file, on disk or
// not, so no request reaches outside DIR.
// Thread-safety: immutable after construction; Find may be called from any thread.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace icewarden {

struct DashboardFile {
  std::string body;
  std::string content_type;  // "text/javascript; charset=utf-8"
};

class Dashboard {
 public:
  // The files compiled in.
  static Dashboard Embedded();
  // The files under `dir`, read at each Find (development).
  static Dashboard FromDirectory(std::string dir);

  // The file `name`, or nullopt when there is none of that name (or it is not a valid name).
  std::optional<DashboardFile> Find(std::string_view name) const;

  // Every embedded file's name, sorted.
  static std::vector<std::string> EmbeddedNames();

  // "" for the embedded files; the directory otherwise.
  const std::string& directory() const { return dir_; }

 private:
  explicit Dashboard(std::string dir) : dir_(std::move(dir)) {}
  std::string dir_;
};

// The content type served for `name`, by its extension; nullopt for an extension the
// dashboard does not use.
std::optional<std::string> DashboardContentType(std::string_view name);

}  // namespace icewarden
