// Helpers shared by the config loader's tests (config_test.cpp, config_errors_test.cpp,
// config_secrets_test.cpp, config_webhooks_test.cpp).
// Thread-safety: plain functions.
#pragma once

#include <map>
#include <optional>
#include <string>

#include "orchestrator/config/config.h"

namespace icewarden::testing {

// Raw string literals in these tests start with a newline so that the YAML's first line
// sits on its own line in the source; it is not part of the document.
inline std::string Yaml(const char* text) { return text[0] == '\n' ? text + 1 : text; }

// An environment holding exactly `vars`, so that tests do not depend on the process's.
inline EnvLookup EnvOf(std::map<std::string, std::string> vars) {
  return [vars](const std::string& name) -> std::optional<std::string> {
    auto it = vars.find(name);
    if (it == vars.end()) return std::nullopt;
    return it->second;
  };
}

}  // namespace icewarden::testing
