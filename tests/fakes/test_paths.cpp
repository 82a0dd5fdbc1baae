#include "tests/fakes/test_paths.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <stdexcept>

namespace icewarden::testing {

std::string IcewardenBinary() { return ICEWARDEN_BINARY; }

std::string HelperBinary(const std::string& name) {
  // Helpers are built in the same folder as the test binaries (tests/).
  std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe");
  return (self.parent_path() / name).string();
}

std::string SourceDir() { return ICEWARDEN_SOURCE_DIR; }

std::string MakeTempDir(const std::string& prefix) {
  const char* base = std::getenv("TMPDIR");
  std::string tmpl = std::string(base && *base ? base : "/tmp") + "/" + prefix + "-XXXXXX";
  if (mkdtemp(tmpl.data()) == nullptr) throw std::runtime_error("mkdtemp failed for " + tmpl);
  return tmpl;
}

}  // namespace icewarden::testing
