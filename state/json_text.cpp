#include "state/json_text.h"

#include <nlohmann/json.hpp>

namespace icewarden {

std::string DumpJson(const nlohmann::json& value) {
  return value.dump(-1, ' ', /*ensure_ascii=*/false, nlohmann::json::error_handler_t::replace);
}

}  // namespace icewarden
