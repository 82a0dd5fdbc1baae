// The config YAML (orchestrator/config/): any text is a Config or a list of FILE:LINE:COL
// errors. Every secret "exists" so that the parser reaches everything behind the secrets.
// Seeds: examples/*.yaml and the configs the tests write.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "orchestrator/config/config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  auto env = [](const std::string& name) -> std::optional<std::string> {
    if (name.empty() || name[0] == 'U') return std::nullopt;  // some unset, for the warnings
    return "c2VjcmV0";
  };
  icewarden::ConfigLoad load =
      icewarden::ParseConfig(text, "fuzz.yaml", env, icewarden::SecretCheck::kWarnIfMissing);
  for (const auto& e : load.errors) (void)e.ToString();
  for (const auto& w : load.warnings) (void)w.ToString();
  return 0;
}
