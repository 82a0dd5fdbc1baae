// The parts of an http:// or https:// URL that the HTTP transports need, and the response
// header values they read. Internal to health/: BeastTransport (TLS, coroutines) and
// PlainHttpClient (plain keep-alive) share them, so both name a server and parse a URL the
// same way and their error messages stay alike.
// Thread-safety: pure functions.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

#include "state/status.h"

namespace icewarden {

struct ParsedUrl {
  bool https = false;
  std::string host;  // without brackets for IPv6 literals
  std::string port;
  std::string target;  // "/v1/config?warehouse=w"
  std::string host_header;
};

// kInvalidArgument for an unsupported scheme, credentials in the URL or a missing host.
Result<ParsedUrl> ParseUrl(const std::string& url);

// "host:port", or "[v6]:port": how error messages name the server.
std::string Where(const ParsedUrl& url);

// "Keep-Alive: timeout=5, max=100" -> 5s; nullopt when absent or unparsable.
std::optional<std::chrono::seconds> KeepAliveTimeout(std::string_view value);

}  // namespace icewarden
