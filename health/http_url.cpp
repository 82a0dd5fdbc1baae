#include "health/http_url.h"

#include <algorithm>
#include <charconv>

namespace icewarden {

namespace {

// Piece by piece: GCC 12 at -O2/-O3 reports a false -Wrestrict for "literal" + string + "literal".
Status BadUrl(const std::string& url, std::string_view why) {
  std::string message = "url ";
  message.append(url).append(": ").append(why);
  return Status::InvalidArgument(message);
}

}  // namespace

Result<ParsedUrl> ParseUrl(const std::string& url) {
  ParsedUrl u;
  std::string_view rest = url;
  if (rest.starts_with("http://")) {
    rest.remove_prefix(7);
  } else if (rest.starts_with("https://")) {
    u.https = true;
    rest.remove_prefix(8);
  } else {
    return BadUrl(url, "unsupported scheme (want http or https)");
  }
  size_t slash = rest.find_first_of("/?");
  std::string_view authority = rest.substr(0, slash);
  // "http://h?x" asks for "/?x".
  if (slash == std::string_view::npos) {
    u.target = "/";
  } else {
    std::string_view path = rest.substr(slash);
    u.target.reserve(path.size() + 1);
    if (path.front() == '?') u.target.push_back('/');
    for (char c : path) u.target.push_back(c);
  }
  if (authority.find('@') != std::string_view::npos) {
    return Status::InvalidArgument("url: credentials in URLs are not supported");
  }
  std::string_view host = authority;
  std::string_view port;
  if (authority.starts_with("[")) {
    size_t close = authority.find(']');
    if (close == std::string_view::npos) return BadUrl(url, "bad host");
    host = authority.substr(1, close - 1);
    if (close + 1 < authority.size() && authority[close + 1] == ':') {
      port = authority.substr(close + 2);
    }
  } else if (size_t colon = authority.rfind(':'); colon != std::string_view::npos) {
    host = authority.substr(0, colon);
    port = authority.substr(colon + 1);
  }
  if (host.empty()) return BadUrl(url, "missing host");
  u.host = std::string(host);
  u.port = port.empty() ? (u.https ? "443" : "80") : std::string(port);
  u.host_header = std::string(authority);
  return u;
}

Status CheckRequest(const ParsedUrl& url, const HttpRequest& request) {
  auto line_break = [](std::string_view text) { return text.find_first_of("\r\n") != text.npos; };
  if (request.method.empty() || !std::all_of(request.method.begin(), request.method.end(),
                                             [](char c) { return c >= 'A' && c <= 'Z'; }))
    return Status::InvalidArgument("http method '" + request.method + "' is not a method name");
  if (line_break(url.target) || url.target.find(' ') != std::string::npos)
    return BadUrl(request.url, "spaces or line breaks in the path");
  for (const auto& [name, value] : request.headers.fields()) {
    if (name.empty() || line_break(name) || line_break(value) ||
        name.find(':') != std::string::npos)
      return Status::InvalidArgument("http header '" + name +
                                     "': empty, or a line break or colon in it");
  }
  return Status::Ok();
}

std::string Where(const ParsedUrl& u) {
  std::string out;
  const bool v6 = u.host.find(':') != std::string::npos;
  if (v6) out.push_back('[');
  out.append(u.host);
  if (v6) out.push_back(']');
  out.push_back(':');
  out.append(u.port);
  return out;
}

std::optional<std::chrono::seconds> KeepAliveTimeout(std::string_view v) {
  size_t at = v.find("timeout=");
  if (at == std::string_view::npos) return std::nullopt;
  v.remove_prefix(at + 8);
  long secs = 0;
  auto [ptr, err] = std::from_chars(v.data(), v.data() + v.size(), secs);
  if (err != std::errc() || ptr == v.data() || secs < 0) return std::nullopt;
  return std::chrono::seconds(secs);
}

}  // namespace icewarden
