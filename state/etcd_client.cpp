#include "state/etcd_client.h"

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/string_body.hpp>
#include <cerrno>
#include <cstring>
#include <mutex>
#include <nlohmann/json.hpp>

namespace icewarden {
namespace {

namespace http = boost::beast::http;
using nlohmann::json;
using Clock = std::chrono::steady_clock;

constexpr char kBase64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

std::string Base64(std::string_view in) {
  std::string out;
  out.reserve((in.size() + 2) / 3 * 4);
  std::size_t i = 0;
  for (; i + 2 < in.size(); i += 3) {
    const unsigned v = static_cast<unsigned char>(in[i]) << 16 |
                       static_cast<unsigned char>(in[i + 1]) << 8 |
                       static_cast<unsigned char>(in[i + 2]);
    for (int s = 18; s >= 0; s -= 6) out.push_back(kBase64[(v >> s) & 63]);
  }
  if (i < in.size()) {
    unsigned v = static_cast<unsigned char>(in[i]) << 16;
    if (i + 1 < in.size()) v |= static_cast<unsigned char>(in[i + 1]) << 8;
    out.push_back(kBase64[(v >> 18) & 63]);
    out.push_back(kBase64[(v >> 12) & 63]);
    out.push_back(i + 1 < in.size() ? kBase64[(v >> 6) & 63] : '=');
    out.push_back('=');
  }
  return out;
}

std::optional<std::string> Unbase64(std::string_view in) {
  auto value = [](char c) -> int {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
  };
  if (in.size() % 4 != 0) return std::nullopt;
  std::string out;
  out.reserve(in.size() / 4 * 3);
  for (std::size_t i = 0; i < in.size(); i += 4) {
    unsigned v = 0;
    int pad = 0;
    for (std::size_t k = 0; k < 4; ++k) {
      const char c = in[i + k];
      if (c == '=' && i + 4 == in.size() && k >= 2) {
        ++pad;
        v <<= 6;
        continue;
      }
      const int d = value(c);
      if (d < 0 || pad > 0) return std::nullopt;
      v = v << 6 | static_cast<unsigned>(d);
    }
    out.push_back(static_cast<char>(v >> 16));
    if (pad < 2) out.push_back(static_cast<char>(v >> 8 & 255));
    if (pad < 1) out.push_back(static_cast<char>(v & 255));
  }
  return out;
}

// proto3 JSON: int64 as a string, absent at its default (0).
std::int64_t Int(const json& j, const char* name) {
  auto it = j.find(name);
  if (it == j.end() || it->is_null()) return 0;
  if (it->is_number_integer()) return it->get<std::int64_t>();
  if (it->is_string()) {
    try {
      return std::stoll(it->get<std::string>());
    } catch (const std::exception&) {
      return 0;
    }
  }
  return 0;
}

std::string Bytes(const json& j, const char* name) {
  auto it = j.find(name);
  if (it == j.end() || !it->is_string()) return "";
  return Unbase64(it->get<std::string>()).value_or("");
}

EtcdRange ReadRange(const json& r) {
  EtcdRange out;
  out.revision = Int(r.value("header", json::object()), "revision");
  out.count = Int(r, "count");
  out.more = r.value("more", false);
  if (auto kvs = r.find("kvs"); kvs != r.end() && kvs->is_array()) {
    for (const json& kv : *kvs) {
      EtcdKeyValue e;
      e.key = Bytes(kv, "key");
      e.value = Bytes(kv, "value");
      e.create_revision = Int(kv, "create_revision");
      e.mod_revision = Int(kv, "mod_revision");
      e.version = Int(kv, "version");
      e.lease = Int(kv, "lease");
      out.kvs.push_back(std::move(e));
    }
  }
  return out;
}

json RangeBody(std::string_view key, std::string_view range_end, std::int64_t limit) {
  json body{{"key", Base64(key)}};
  if (!range_end.empty()) body["range_end"] = Base64(range_end);
  if (limit > 0) body["limit"] = std::to_string(limit);
  return body;
}

json OpJson(const EtcdOp& op) {
  switch (op.kind) {
    case EtcdOp::Kind::kPut: {
      json put{{"key", Base64(op.key)}, {"value", Base64(op.value)}};
      if (op.lease != 0) put["lease"] = std::to_string(op.lease);
      return {{"request_put", put}};
    }
    case EtcdOp::Kind::kRange:
      return {{"request_range", RangeBody(op.key, op.range_end, 0)}};
    case EtcdOp::Kind::kDelete: {
      json del{{"key", Base64(op.key)}};
      if (!op.range_end.empty()) del["range_end"] = Base64(op.range_end);
      return {{"request_delete_range", del}};
    }
  }
  return json::object();
}

json CompareJson(const EtcdCompare& c) {
  static const char* kTargets[] = {"VERSION", "CREATE", "MOD", "VALUE", "LEASE"};
  static const char* kResults[] = {"EQUAL", "GREATER", "LESS", "NOT_EQUAL"};
  json out{{"key", Base64(c.key)},
           {"target", kTargets[static_cast<int>(c.target)]},
           {"result", kResults[static_cast<int>(c.result)]}};
  switch (c.target) {
    case EtcdCompare::Target::kVersion:
      out["version"] = std::to_string(c.number);
      break;
    case EtcdCompare::Target::kCreateRevision:
      out["create_revision"] = std::to_string(c.number);
      break;
    case EtcdCompare::Target::kModRevision:
      out["mod_revision"] = std::to_string(c.number);
      break;
    case EtcdCompare::Target::kValue:
      out["value"] = Base64(c.value);
      break;
    case EtcdCompare::Target::kLease:
      out["lease"] = std::to_string(c.number);
      break;
  }
  return out;
}

// An error body of the gateway ({"error", "code", "message"}) as a Status.
// A streaming endpoint (lease keepalive) nests it: {"error": {"grpc_code", "message"}}.
Status GatewayError(const std::string& where, int http_status, const json& body) {
  std::string message;
  int code = 0;
  if (body.is_object()) {
    const json nested = body.contains("error") && body["error"].is_object() ? body["error"] : body;
    if (nested.contains("message") && nested["message"].is_string())
      message = nested["message"].get<std::string>();
    else if (nested.contains("error") && nested["error"].is_string())
      message = nested["error"].get<std::string>();
    code = static_cast<int>(nested.contains("grpc_code") ? Int(nested, "grpc_code")
                                                         : Int(nested, "code"));
  }
  std::string text = "etcd " + where + ": ";
  text += message.empty() ? "HTTP " + std::to_string(http_status) : message;
  switch (code) {
    case 3:  // INVALID_ARGUMENT
      return Status::InvalidArgument(text);
    case 5:  // NOT_FOUND
      return Status::NotFound(text);
    case 9:  // FAILED_PRECONDITION
      return Status::FailedPrecondition(text);
    default:
      return Status::Unavailable(text);
  }
}

struct Endpoint {
  std::string host, port, authority;
};

Result<Endpoint> ParseEndpoint(const std::string& url) {
  std::string_view rest = url;
  if (!rest.starts_with("http://"))
    return Status::InvalidArgument("etcd endpoint " + url + ": only http:// is supported so far");
  rest.remove_prefix(7);
  if (auto slash = rest.find('/'); slash != std::string_view::npos) rest = rest.substr(0, slash);
  const auto colon = rest.rfind(':');
  if (colon == std::string_view::npos || colon == 0 || colon + 1 == rest.size())
    return Status::InvalidArgument("etcd endpoint " + url + ": want http://HOST:PORT");
  return Endpoint{std::string(rest.substr(0, colon)), std::string(rest.substr(colon + 1)),
                  std::string(rest)};
}

int MillisLeft(Clock::time_point deadline) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
  return left.count() < 0 ? 0 : static_cast<int>(left.count());
}

// Waits for `events` on fd until the deadline; false on timeout or error.
bool WaitFor(int fd, short events, Clock::time_point deadline) {
  pollfd p{fd, events, 0};
  while (true) {
    const int n = ::poll(&p, 1, MillisLeft(deadline));
    if (n > 0) return true;
    if (n == 0) return false;
    if (errno != EINTR) return false;
  }
}

}  // namespace

struct EtcdClient::Impl {
  explicit Impl(EtcdClientOptions o) : options(std::move(o)) {
    for (const auto& url : options.endpoints) {
      auto e = ParseEndpoint(url);
      if (!e.ok()) {
        endpoint_error = e.status();  // every call says so: a config error, not an outage
        return;
      }
      endpoints.push_back(*e);
    }
  }
  ~Impl() { Close(); }

  void Close() {
    if (fd >= 0) ::close(fd);
    fd = -1;
  }

  // Neither closed by the server nor holding bytes nobody asked for.
  bool StillOpen() const {
    char c;
    const ssize_t n = ::recv(fd, &c, 1, MSG_PEEK | MSG_DONTWAIT);
    return n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
  }

  // Opens a connection to endpoints[current]; the Status names the endpoint.
  Status Connect(const Endpoint& e, Clock::time_point deadline) {
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* found = nullptr;
    if (int rc = ::getaddrinfo(e.host.c_str(), e.port.c_str(), &hints, &found); rc != 0)
      return Status::Unavailable("etcd " + e.authority + ": resolve: " + gai_strerror(rc));
    std::string why = "no address";
    for (addrinfo* a = found; a != nullptr; a = a->ai_next) {
      int s = ::socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
      if (s < 0) continue;
      int rc = ::connect(s, a->ai_addr, a->ai_addrlen);
      if (rc != 0 && errno == EINPROGRESS) {
        if (WaitFor(s, POLLOUT, deadline)) {
          int err = 0;
          socklen_t len = sizeof(err);
          ::getsockopt(s, SOL_SOCKET, SO_ERROR, &err, &len);
          rc = err == 0 ? 0 : -1;
          errno = err;
        } else {
          errno = ETIMEDOUT;
        }
      }
      if (rc == 0) {
        int one = 1;
        ::setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
        ::freeaddrinfo(found);
        fd = s;
        return Status::Ok();
      }
      why = std::strerror(errno);
      ::close(s);
    }
    ::freeaddrinfo(found);
    return Status::Unavailable("etcd " + e.authority + ": connect: " + why);
  }

  // One request on the open connection. `sent` says whether any of it left.
  Result<http::response<http::string_body>> Exchange(const Endpoint& e, const char* path,
                                                     const std::string& body,
                                                     Clock::time_point deadline, bool& sent) {
    std::string wire =
        std::string("POST ") + path + " HTTP/1.1\r\nHost: " + e.authority +
        "\r\nContent-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) +
        "\r\n\r\n";
    wire += body;
    for (std::size_t done = 0; done < wire.size();) {
      ssize_t n = ::send(fd, wire.data() + done, wire.size() - done, MSG_NOSIGNAL);
      if (n > 0) {
        sent = true;
        done += static_cast<std::size_t>(n);
      } else if (n < 0 && errno == EINTR) {
        continue;
      } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
        if (!WaitFor(fd, POLLOUT, deadline))
          return Status::Unavailable("etcd " + e.authority + ": write timed out");
      } else {
        return Status::Unavailable("etcd " + e.authority + ": write: " + std::strerror(errno));
      }
    }
    http::response_parser<http::string_body> parser;
    parser.eager(true);
    parser.body_limit(64 * 1024 * 1024);
    boost::beast::flat_buffer buffer;
    while (!parser.is_done()) {
      if (!WaitFor(fd, POLLIN, deadline))
        return Status::Unavailable("etcd " + e.authority + ": read timed out");
      auto space = buffer.prepare(16 * 1024);
      ssize_t n = ::recv(fd, space.data(), space.size(), 0);
      if (n < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK)) continue;
      if (n < 0)
        return Status::Unavailable("etcd " + e.authority + ": read: " + std::strerror(errno));
      if (n == 0) return Status::Unavailable("etcd " + e.authority + ": connection closed");
      buffer.commit(static_cast<std::size_t>(n));
      while (buffer.size() > 0 && !parser.is_done()) {
        boost::system::error_code ec;
        const std::size_t used = parser.put(buffer.data(), ec);
        buffer.consume(used);
        if (ec == http::error::need_more) break;
        if (ec)
          return Status::Unavailable("etcd " + e.authority + ": bad response: " + ec.message());
        if (used == 0) break;
      }
    }
    auto res = parser.release();
    if (!res.keep_alive()) Close();
    return res;
  }

  Result<json> Call(const char* path, const json& request, bool idempotent) {
    std::lock_guard lock(mu);
    if (!endpoint_error.ok()) return endpoint_error;
    if (endpoints.empty()) return Status::InvalidArgument("etcd: no endpoints configured");
    const std::string body = request.dump();
    const auto deadline = Clock::now() + options.timeout;
    std::size_t refused = 0;
    bool retried = false;
    Status last = Status::Unavailable("etcd: not tried");
    while (true) {
      const Endpoint& e = endpoints[current];
      if (fd >= 0 && !StillOpen()) Close();  // the server closed the idle connection
      const bool reused = fd >= 0;
      if (!reused) {
        if (Status s = Connect(e, deadline); !s.ok()) {
          // Never reached this member: the next one may answer.
          last = s;
          current = (current + 1) % endpoints.size();
          if (++refused >= endpoints.size() || MillisLeft(deadline) == 0) return last;
          continue;
        }
      }
      bool sent = false;
      auto res = Exchange(e, path, body, deadline, sent);
      if (res.ok()) {
        // A streaming endpoint may answer several newline-separated messages: the first.
        json parsed = json::parse(res->body(), nullptr, false);
        if (parsed.is_discarded())
          parsed = json::parse(res->body().substr(0, res->body().find('\n')), nullptr, false);
        if (res->result_int() != 200 || (parsed.is_object() && parsed.contains("error")))
          return GatewayError(std::string(path), static_cast<int>(res->result_int()), parsed);
        if (!parsed.is_object())
          return Status::Unavailable(std::string("etcd ") + path + ": the answer is not JSON");
        return parsed;
      }
      Close();
      // Once, on a fresh connection: a request of which nothing left (the member never saw
      // it), or a read, which is harmless to send twice.
      if (!retried && MillisLeft(deadline) > 0 && (!sent || idempotent)) {
        retried = true;
        continue;
      }
      if (sent && !idempotent)
        return res.status().WithMessage(res.status().message() +
                                        " (the write may have been applied: read it back)");
      return res.status();
    }
  }

  EtcdClientOptions options;
  std::vector<Endpoint> endpoints;
  Status endpoint_error = Status::Ok();
  std::mutex mu;
  std::size_t current = 0;
  int fd = -1;
};

EtcdClient::EtcdClient(EtcdClientOptions options)
    : impl_(std::make_unique<Impl>(std::move(options))) {}

EtcdClient::~EtcdClient() = default;

std::string EtcdClient::PrefixEnd(std::string_view prefix) {
  std::string end(prefix);
  while (!end.empty()) {
    if (static_cast<unsigned char>(end.back()) < 0xff) {
      end.back() = static_cast<char>(static_cast<unsigned char>(end.back()) + 1);
      return end;
    }
    end.pop_back();
  }
  return std::string(1, '\0');  // every key
}

Result<EtcdRange> EtcdClient::Range(std::string_view key, std::string_view range_end,
                                    std::int64_t limit) {
  auto r = impl_->Call("/v3/kv/range", RangeBody(key, range_end, limit), true);
  if (!r.ok()) return r.status();
  return ReadRange(*r);
}

Result<std::int64_t> EtcdClient::Put(std::string_view key, std::string_view value,
                                     std::int64_t lease) {
  json body{{"key", Base64(key)}, {"value", Base64(value)}};
  if (lease != 0) body["lease"] = std::to_string(lease);
  auto r = impl_->Call("/v3/kv/put", body, false);
  if (!r.ok()) return r.status();
  return Int(r->value("header", json::object()), "revision");
}

Result<std::int64_t> EtcdClient::DeleteRange(std::string_view key, std::string_view range_end) {
  json body{{"key", Base64(key)}};
  if (!range_end.empty()) body["range_end"] = Base64(range_end);
  auto r = impl_->Call("/v3/kv/deleterange", body, false);
  if (!r.ok()) return r.status();
  return Int(*r, "deleted");
}

Result<EtcdTxnResult> EtcdClient::Txn(const std::vector<EtcdCompare>& compare,
                                      const std::vector<EtcdOp>& success,
                                      const std::vector<EtcdOp>& failure) {
  json body{{"compare", json::array()}, {"success", json::array()}, {"failure", json::array()}};
  for (const auto& c : compare) body["compare"].push_back(CompareJson(c));
  for (const auto& op : success) body["success"].push_back(OpJson(op));
  for (const auto& op : failure) body["failure"].push_back(OpJson(op));
  auto r = impl_->Call("/v3/kv/txn", body, false);
  if (!r.ok()) return r.status();
  EtcdTxnResult out;
  out.succeeded = r->value("succeeded", false);  // absent when false (proto3)
  out.revision = Int(r->value("header", json::object()), "revision");
  if (auto responses = r->find("responses"); responses != r->end() && responses->is_array()) {
    for (const json& one : *responses) {
      if (auto range = one.find("response_range"); range != one.end())
        out.ranges.push_back(ReadRange(*range));
    }
  }
  return out;
}

Result<EtcdLease> EtcdClient::LeaseGrant(std::chrono::seconds ttl) {
  auto r = impl_->Call("/v3/lease/grant", json{{"TTL", std::to_string(ttl.count())}}, false);
  if (!r.ok()) return r.status();
  return EtcdLease{Int(*r, "ID"), Int(*r, "TTL")};
}

Result<std::int64_t> EtcdClient::LeaseKeepAlive(std::int64_t id) {
  auto r = impl_->Call("/v3/lease/keepalive", json{{"ID", std::to_string(id)}}, false);
  if (!r.ok()) return r.status();
  // The gateway streams: {"result": {"ID", "TTL"}}; an expired lease has no TTL.
  const json result = r->value("result", *r);
  const std::int64_t ttl = Int(result, "TTL");
  if (ttl <= 0) return Status::NotFound("etcd lease " + std::to_string(id) + " has expired");
  return ttl;
}

Status EtcdClient::LeaseRevoke(std::int64_t id) {
  auto r = impl_->Call("/v3/lease/revoke", json{{"ID", std::to_string(id)}}, false);
  return r.ok() ? Status::Ok() : r.status();
}

}  // namespace icewarden
