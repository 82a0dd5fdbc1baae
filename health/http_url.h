// The parts of an http:// or https:// URL that the HTTP transports need, the check every
// request passes before a byte is sent, and the response header values they read. Internal to
// health/: BeastTransport (TLS, coroutines) and PlainHttpClient (plain keep-alive) share them, so
// both name a server and parse a URL the same way and their error messages stay alike.
// Thread-safety: pure functions.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

#include "health/http_transport.h"
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

// kInvalidArgument when `request` could not be written as it says: a method that is not an
// upper-case token, a path with spaces or line breaks, a header name with a colon, or a line
// break in any header (one would smuggle in fields of its own).
Status CheckRequest(const ParsedUrl& url, const HttpRequest& request);

// "host:port", or "[v6]:port": how error messages name the server.
std::string Where(const ParsedUrl& url);

// "Keep-Alive: timeout=5, max=100" -> 5s; nullopt when absent or unparsable.
std::optional<std::chrono::seconds> KeepAliveTimeout(std::string_view value);

}  // namespace icewarden
