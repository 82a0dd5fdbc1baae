// The two encodings of etcd's v3 JSON gateway (proto3 JSON) that every caller of it needs: keys
// and values are base64, and an int64 is a decimal string that is absent at 0. Shared by the
// client (etcd_client.cpp) and the watch stream (etcd_watch.cpp). Internal to state/.
#pragma once

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>

namespace icewarden {

std::string EtcdBase64(std::string_view in);
// j[name] as an int64 (a string or a number); 0 when absent, null or not a number.
std::int64_t EtcdJsonInt(const nlohmann::json& j, const char* name);

}  // namespace icewarden
