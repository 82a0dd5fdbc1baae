#include "actions/http_call.h"
#include "actions/param_reader.h"

#include <httplib.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <thread>

namespace icewarden {
namespace {

using namespace std::chrono_literals;

bool IEquals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

// Errors that httplib reports before a single request byte could have reached the server.
bool NothingSent(httplib::Error e) {
  switch (e) {
    case httplib::Error::Connection:
    case httplib::Error::ConnectionTimeout:
    case httplib::Error::BindIPAddress:
    case httplib::Error::SSLConnection:
    case httplib::Error::SSLLoadingCerts:
    case httplib::Error::SSLServerVerification:
    case httplib::Error::UnsupportedMultipartBoundaryChars:
    case httplib::Error::Compression:
      return true;
    default:
      return false;
  }
}

std::string DescribeError(httplib::Error e) {
  switch (e) {
    case httplib::Error::Connection:
      return "could not connect";
    case httplib::Error::ConnectionTimeout:
      return "connection timed out";
    case httplib::Error::SSLConnection:
      return "TLS handshake failed";
    case httplib::Error::SSLLoadingCerts:
      return "could not load CA certificates";
    case httplib::Error::SSLServerVerification:
      return "server certificate not trusted";
    case httplib::Error::Read:
      return "no complete response (connection closed or timed out)";
    case httplib::Error::Write:
      return "sending the request failed";
    case httplib::Error::Canceled:
      return "request cancelled";
    default:
      return "request failed (" + httplib::to_string(e) + ")";
  }
}

}  // namespace

std::string HttpUrl::Origin() const {
  const std::string h = host.find(':') != std::string::npos ? "[" + host + "]" : host;
  return scheme + "://" + h + ":" + std::to_string(port);
}

std::string HttpUrl::Redacted() const { return Origin() + target.substr(0, target.find('?')); }

std::optional<HttpUrl> ParseHttpUrl(std::string_view url, std::string* why) {
  HttpUrl u;
  const size_t sep = url.find("://");
  if (sep == std::string_view::npos) {
    *why = "expected an http:// or https:// URL";
    return std::nullopt;
  }
  u.scheme = std::string(url.substr(0, sep));
  if (u.scheme != "http" && u.scheme != "https") {
    *why = "expected an http:// or https:// URL, got scheme '" + u.scheme + "'";
    return std::nullopt;
  }
  std::string_view rest = url.substr(sep + 3);
  const size_t slash = std::min(rest.find_first_of("/?"), rest.size());
  std::string_view authority = rest.substr(0, slash);
  u.target = std::string(rest.substr(slash));
  if (u.target.empty() || u.target[0] == '?') u.target = "/" + u.target;
  if (authority.find('@') != std::string_view::npos) {
    *why = "credentials in the URL are not supported; put them in headers";
    return std::nullopt;
  }
  std::string_view port_text;
  if (!authority.empty() && authority[0] == '[') {
    const size_t close = authority.find(']');
    if (close == std::string_view::npos) {
      *why = "unterminated IPv6 address in the URL";
      return std::nullopt;
    }
    u.host = std::string(authority.substr(1, close - 1));
    if (close + 1 < authority.size()) {
      if (authority[close + 1] != ':') {
        *why = "unexpected text after the IPv6 address";
        return std::nullopt;
      }
      port_text = authority.substr(close + 2);
    }
  } else {
    const size_t colon = authority.find(':');
    u.host = std::string(authority.substr(0, colon));
    if (colon != std::string_view::npos) port_text = authority.substr(colon + 1);
  }
  if (u.host.empty()) {
    *why = "the URL has no host";
    return std::nullopt;
  }
  u.port = u.scheme == "https" ? 443 : 80;
  if (!port_text.empty()) {
    if (port_text.size() > 5 || !std::all_of(port_text.begin(), port_text.end(), [](char c) {
          return std::isdigit(static_cast<unsigned char>(c));
        })) {
      *why = "the URL's port is not a number";
      return std::nullopt;
    }
    u.port = std::stoi(std::string(port_text));
    if (u.port < 1 || u.port > 65535) {
      *why = "the URL's port is out of range";
      return std::nullopt;
    }
  }
  return u;
}

bool ExpectStatus::Matches(int status) const {
  if (codes.empty()) return status >= 200 && status < 300;
  return std::find(codes.begin(), codes.end(), status) != codes.end();
}

std::string ExpectStatus::ToString() const {
  if (codes.empty()) return "2xx";
  std::string s;
  for (size_t i = 0; i < codes.size(); ++i) {
    if (i > 0) s += i + 1 == codes.size() ? " or " : ", ";
    s += std::to_string(codes[i]);
  }
  return s;
}

std::string BodyExcerpt(const std::string& body) {
  if (body.size() <= kBodyExcerpt) return body;
  size_t cut = kBodyExcerpt;
  // Do not split a UTF-8 sequence.
  while (cut > 0 && (static_cast<unsigned char>(body[cut]) & 0xC0) == 0x80) --cut;
  return body.substr(0, cut) + "…";
}

HttpReply SendHttp(const HttpCall& call, const ActionContext& ctx) {
  HttpReply reply;
  std::string why;
  auto url = ParseHttpUrl(call.url, &why);
  if (!url) {
    reply.error = why;
    return reply;
  }
  if (ctx.expired()) {
    reply.error = ctx.cancel && ctx.cancel->cancelled() ? "cancelled before sending"
                                                        : "deadline passed before sending";
    return reply;
  }
  httplib::Client client(url->Origin());
  if (!client.is_valid()) {
    reply.error = "cannot make an HTTP client for " + url->Redacted();
    return reply;
  }
  const auto remaining = std::max<std::chrono::microseconds>(
      1ms, std::chrono::duration_cast<std::chrono::microseconds>(ctx.deadline -
                                                                 std::chrono::steady_clock::now()));
  client.set_connection_timeout(remaining);
  client.set_read_timeout(remaining);
  client.set_write_timeout(remaining);
  client.set_keep_alive(false);
  client.set_follow_location(false);
  if (!call.ca_file.empty()) client.set_ca_cert_path(call.ca_file.c_str());

  httplib::Request req;
  req.method = call.method;
  req.path = url->target;
  bool has_key = false;
  for (const auto& [name, value] : call.headers) {
    req.headers.emplace(name, value);
    has_key = has_key || IEquals(name, "Idempotency-Key");
  }
  if (!has_key && !ctx.idempotency_key.empty())
    req.headers.emplace("Idempotency-Key", ctx.idempotency_key);
  req.headers.emplace("User-Agent", "icewarden/0.1");
  if (!call.content_type.empty()) req.headers.emplace("Content-Type", call.content_type);
  req.body = call.body;
  std::string body;
  req.content_receiver = [&body](const char* data, size_t n, uint64_t, uint64_t) {
    if (body.size() < kMaxReplyBody) body.append(data, std::min(n, kMaxReplyBody - body.size()));
    return true;  // keep reading (and discarding): the deadline bounds a huge body
  };

  // The watcher stops the socket at the deadline or on cancellation; stop() is retried
  // because a stop that lands before the socket exists has nothing to shut down.
  std::atomic<bool> done{false};
  std::atomic<bool> stopped{false};
  std::thread watcher([&] {
    while (!done.load()) {
      if (ctx.expired()) {
        stopped.store(true);
        client.stop();
      }
      std::this_thread::sleep_for(10ms);
    }
  });
  httplib::Response res;
  httplib::Error error = httplib::Error::Success;
  const bool answered = client.send(req, res, error);
  done.store(true);
  watcher.join();

  if (answered) {
    reply.delivery = HttpReply::Delivery::kAnswered;
    reply.status = res.status;
    reply.body = std::move(body);
    return reply;
  }
  reply.delivery =
      NothingSent(error) ? HttpReply::Delivery::kNotSent : HttpReply::Delivery::kMaybeSent;
  const bool cancelled = ctx.cancel && ctx.cancel->cancelled();
  if (stopped.load() || ctx.expired()) {
    reply.error = cancelled ? "cancelled" : "deadline passed";
    reply.error += reply.delivery == HttpReply::Delivery::kNotSent
                       ? " before a connection"
                       : " while waiting for a response";
  } else {
    reply.error = DescribeError(error);
  }
  return reply;
}

std::optional<std::string> ReadHttpUrl(const nlohmann::json& object, const std::string& parent,
                                       const std::string& key, ParamReader& r) {
  auto url = r.String(object, parent, key, true);
  if (!url) return std::nullopt;
  std::string why;
  if (!ParseHttpUrl(*url, &why)) {
    r.Error(ParamPath(parent, key), why);
    return std::nullopt;
  }
  return url;
}

std::optional<ExpectStatus> ReadExpectStatus(const nlohmann::json& object,
                                             const std::string& parent, const std::string& key,
                                             ParamReader& r) {
  const nlohmann::json* v = r.Member(object, parent, key, false);
  if (!v) return ExpectStatus{};
  const std::string path = ParamPath(parent, key);
  auto code = [&](const nlohmann::json& c, const std::string& at) -> std::optional<int> {
    if (!c.is_number_integer()) {
      r.Error(at, "expected an HTTP status code, got " + DescribeJsonType(c));
      return std::nullopt;
    }
    const int64_t n = c.get<int64_t>();
    if (n < 100 || n > 599) {
      r.Error(at, "expected an HTTP status code (100-599), got " + std::to_string(n));
      return std::nullopt;
    }
    return static_cast<int>(n);
  };
  ExpectStatus e;
  if (v->is_array()) {
    if (v->empty()) {
      r.Error(path, "expected at least one status code");
      return std::nullopt;
    }
    bool good = true;
    for (size_t i = 0; i < v->size(); ++i) {
      if (auto c = code((*v)[i], ParamPath(path, i))) {
        e.codes.push_back(*c);
      } else {
        good = false;
      }
    }
    if (!good) return std::nullopt;
    return e;
  }
  auto c = code(*v, path);
  if (!c) return std::nullopt;
  e.codes.push_back(*c);
  return e;
}

std::optional<HttpRequestSpec> ReadHttpRequestSpec(const nlohmann::json& object,
                                                   const std::string& parent, ParamReader& r,
                                                   const std::string& default_method) {
  const size_t before = r.errors().size();
  HttpRequestSpec spec;
  spec.call.method = default_method;
  if (auto m = r.OneOf(object, parent, "method", {"GET", "POST", "PUT", "PATCH", "DELETE"}, false))
    spec.call.method = *m;
  if (auto url = ReadHttpUrl(object, parent, "url", r)) spec.call.url = *url;
  if (auto h = r.StringMap(object, parent, "headers", false)) spec.call.headers = *h;
  if (const nlohmann::json* body = r.Member(object, parent, "body", false)) {
    if (body->is_string()) {
      spec.call.body = body->get<std::string>();
      spec.call.content_type = "text/plain; charset=utf-8";
    } else if (body->is_object() || body->is_array()) {
      spec.call.body = DumpJson(*body);
      spec.call.content_type = "application/json";
    } else {
      r.Error(ParamPath(parent, "body"),
              "expected a string or a mapping (sent as JSON), got " + DescribeJsonType(*body));
    }
    // A Content-Type header the author wrote wins over the guess above.
    for (const auto& [name, value] : spec.call.headers)
      if (IEquals(name, "Content-Type")) spec.call.content_type.clear();
    if (spec.call.method == "GET" && !spec.call.body.empty())
      r.Error(ParamPath(parent, "body"), "a GET request cannot have a body");
  }
  if (auto e = ReadExpectStatus(object, parent, "expect_status", r)) spec.expect = *e;
  if (r.errors().size() != before) return std::nullopt;
  return spec;
}

ActionResult HttpResult(const std::string& what, const HttpCall& call, const ExpectStatus& expect,
                        const HttpReply& reply, bool path_is_secret) {
  std::string why;
  auto url = ParseHttpUrl(call.url, &why);
  const std::string shown = !url             ? std::string("(invalid URL)")
                            : path_is_secret ? url->Origin()
                                             : url->Redacted();
  nlohmann::json detail = {{"method", call.method}, {"url", shown}};
  const std::string request = what + " " + call.method + " " + shown;
  auto dump = [&] { return DumpJson(detail); };

  if (reply.delivery != HttpReply::Delivery::kAnswered) {
    detail["error"] = reply.error;
    detail["delivery"] =
        reply.delivery == HttpReply::Delivery::kNotSent ? "not_sent" : "maybe_sent";
    if (reply.delivery == HttpReply::Delivery::kNotSent || call.method == "GET")
      return ActionResult::Failed(request + " failed: " + reply.error, dump());
    return ActionResult::Unknown(request + ": " + reply.error + "; the server may have acted on it",
                                 dump());
  }
  detail["status"] = reply.status;
  detail["body_excerpt"] = BodyExcerpt(reply.body);
  if (expect.Matches(reply.status))
    return ActionResult::Succeeded(request + " returned " + std::to_string(reply.status), dump());
  const std::string reason =
      request + " returned " + std::to_string(reply.status) + ", expected " + expect.ToString();
  const bool server_error = reply.status == 500 || reply.status == 502 || reply.status == 504;
  if (server_error && call.method != "GET")
    return ActionResult::Unknown(reason + "; the server may have acted on it", dump());
  return ActionResult::Failed(reason, dump());
}

}  // namespace icewarden
