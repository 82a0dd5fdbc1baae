// Table name patterns, shared by ownership rules (config) and failover scopes (actions):
// a shell-style glob over dotted names where '*' matches any run of characters, dots
// included, and '?' exactly one. "eu.*" matches "eu.orders" and "eu.archive.orders_2024".
// Thread-safety: pure function.
#pragma once

#include <string_view>

namespace icewarden {

bool GlobMatch(std::string_view pattern, std::string_view text);

}  // namespace icewarden
