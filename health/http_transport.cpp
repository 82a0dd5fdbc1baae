#include "health/http_transport.h"

#include <algorithm>
#include <cctype>

namespace icewarden {

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

HttpHeaders::HttpHeaders(std::initializer_list<std::pair<std::string, std::string>> fields)
    : fields_(fields) {}

void HttpHeaders::Set(std::string name, std::string value) {
  Remove(name);
  fields_.emplace_back(std::move(name), std::move(value));
}

void HttpHeaders::Add(std::string name, std::string value) {
  fields_.emplace_back(std::move(name), std::move(value));
}

void HttpHeaders::Remove(std::string_view name) {
  std::erase_if(fields_, [&](const auto& f) { return EqualsIgnoreCase(f.first, name); });
}

std::optional<std::string> HttpHeaders::Get(std::string_view name) const {
  for (const auto& [n, v] : fields_) {
    if (EqualsIgnoreCase(n, name)) return v;
  }
  return std::nullopt;
}

bool RequestMayHaveBeenDelivered(const Status& transport_error) {
  if (transport_error.code() == StatusCode::kInvalidArgument) return false;
  const std::string& m = transport_error.message();
  for (std::string_view phase : {"resolve ", "connect ", "tls "}) {
    if (m.starts_with(phase)) return false;
  }
  return true;
}

}  // namespace icewarden
