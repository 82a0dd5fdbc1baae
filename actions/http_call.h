// HttpCall: one blocking HTTP request made by an action, bounded by the step's deadline and
// abandoned when the step is cancelled, plus the params schema shared by every action that
// calls an HTTP endpoint (http.request, fence.http, the `until` of wait).
//
// Actions run on their own thread and block (action.h), so this is a synchronous client:
// cpp-httplib (Debian's compiled libcpp-httplib with OpenSSL) rather than the daemon's
// asynchronous Beast transport, which would need an io_context and a thread to run it for
// each call to achieve the same thing. Deadline and cancellation are enforced by a watcher
// that stops the client's socket, so a request never outlives its step.
//
// Secrets: header values and bodies are never put into messages; messages name the URL
// without its query string (which may carry a token).
// Thread-safety: SendHttp may be called from any number of threads at once.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "actions/action.h"
#include "actions/param_reader.h"

namespace icewarden {

struct HttpUrl {
  std::string scheme;  // http | https
  std::string host;    // without brackets for IPv6
  int port = 0;
  std::string target;  // path and query, at least "/"

  std::string Origin() const;    // "https://host:443"
  std::string Redacted() const;  // "https://host:443/path" (the query, maybe a token, dropped)
};
// nullopt with *why set when the URL is not http(s)://host[:port][/path]; credentials in
// the URL are refused (they belong in headers, where they are never shown).
std::optional<HttpUrl> ParseHttpUrl(std::string_view url, std::string* why);

// Which response statuses count as success. Empty codes mean any 2xx.
struct ExpectStatus {
  std::vector<int> codes;
  bool Matches(int status) const;
  std::string ToString() const;  // "2xx", "204", "200 or 201"
};

struct HttpCall {
  std::string method = "POST";
  std::string url;
  std::map<std::string, std::string> headers;
  std::string body;
  std::string content_type;  // set with the body; empty when there is none
  std::string ca_file;       // https: PEM CAs trusted instead of the system's; empty: the system's
};

struct HttpReply {
  enum class Delivery {
    kNotSent,    // nothing reached the server (bad URL, refused, TLS failure)
    kMaybeSent,  // the request may have been processed but no full response came back
    kAnswered,   // a complete response arrived
  };
  Delivery delivery = Delivery::kNotSent;
  int status = 0;
  std::string body;   // at most kMaxReplyBody bytes
  std::string error;  // why there is no answer: "connection refused", "deadline passed ..."
};

inline constexpr size_t kMaxReplyBody = 64 * 1024;
inline constexpr size_t kBodyExcerpt = 512;

// Sends the call, adding Idempotency-Key (ctx.idempotency_key, unless the caller set one)
// and a User-Agent. Never follows redirects. Returns by ctx.deadline or soon after
// cancellation. Certificates are checked (name and chain) against the system's CA store, or
// call.ca_file.
HttpReply SendHttp(const HttpCall& call, const ActionContext& ctx);

// At most kBodyExcerpt bytes of `body`, with "…" when cut.
std::string BodyExcerpt(const std::string& body);

// The params shared by http.request and fence.http:
//   method (GET|POST|PUT|PATCH|DELETE, default POST), url, headers, body (string, or a
//   mapping/list sent as JSON), expect_status (integer or list, default 2xx).
struct HttpRequestSpec {
  HttpCall call;
  ExpectStatus expect;
};
inline const std::vector<std::string> kHttpRequestParams = {"method", "url", "headers", "body",
                                                            "expect_status"};
// Reads the keys above from `object` (at `parent`); unknown keys are the caller's business.
std::optional<HttpRequestSpec> ReadHttpRequestSpec(const nlohmann::json& object,
                                                   const std::string& parent, ParamReader& r,
                                                   const std::string& default_method = "POST");
// A url param: present, a string, and a valid http(s) URL.
std::optional<std::string> ReadHttpUrl(const nlohmann::json& object, const std::string& parent,
                                       const std::string& key, ParamReader& r);
std::optional<ExpectStatus> ReadExpectStatus(const nlohmann::json& object,
                                             const std::string& parent, const std::string& key,
                                             ParamReader& r);

// How a reply maps to an ActionResult for a call with `expect`:
//   answered, expected status        -> succeeded
//   answered, 500/502/504, not GET   -> unknown (the server may have acted before failing)
//   answered, any other status       -> failed
//   not sent                         -> failed
//   maybe sent, GET                  -> failed (a GET has no effect to be unsure about)
//   maybe sent, other methods        -> unknown
// `what` starts the reason ("fence"); detail_json has method, url (redacted), status,
// body_excerpt and, without an answer, error and delivery. With `path_is_secret` (webhook
// URLs such as Slack's carry their token in the path) only the origin is shown.
ActionResult HttpResult(const std::string& what, const HttpCall& call, const ExpectStatus& expect,
                        const HttpReply& reply, bool path_is_secret = false);

}  // namespace icewarden
