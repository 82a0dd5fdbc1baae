// DumpJson: JSON text that never throws. Text from catalogs, DNS servers, endpoints and people
// may hold invalid UTF-8; it is replaced (U+FFFD) instead of turning a record, a result or a
// response into an exception. Every layer writes JSON through this one function.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <string>

namespace icewarden {

std::string DumpJson(const nlohmann::json& value);

}  // namespace icewarden
