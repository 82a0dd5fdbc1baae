#include "state/etcd_client.h"

#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/string_body.hpp>
#include <mutex>
#include <nlohmann/json.hpp>

#include "state/etcd_connection.h"
#include "state/etcd_json.h"

namespace icewarden {

std::string EtcdBase64(std::string_view in) {
  static constexpr char kBase64Alphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((in.size() + 2) / 3 * 4);
  std::size_t i = 0;
  for (; i + 2 < in.size(); i += 3) {
    const unsigned v = static_cast<unsigned char>(in[i]) << 16 |
                       static_cast<unsigned char>(in[i + 1]) << 8 |
                       static_cast<unsigned char>(in[i + 2]);
    for (int s = 18; s >= 0; s -= 6) out.push_back(kBase64Alphabet[(v >> s) & 63]);
  }
  if (i < in.size()) {
    unsigned v = static_cast<unsigned char>(in[i]) << 16;
    if (i + 1 < in.size()) v |= static_cast<unsigned char>(in[i + 1]) << 8;
    out.push_back(kBase64Alphabet[(v >> 18) & 63]);
    out.push_back(kBase64Alphabet[(v >> 12) & 63]);
    out.push_back(i + 1 < in.size() ? kBase64Alphabet[(v >> 6) & 63] : '=');
    out.push_back('=');
  }
  return out;
}

std::int64_t EtcdJsonInt(const nlohmann::json& j, const char* name) {
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

namespace {

namespace http = boost::beast::http;
using nlohmann::json;
using Steady = std::chrono::steady_clock;

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

std::string Bytes(const json& j, const char* name) {
  auto it = j.find(name);
  if (it == j.end() || !it->is_string()) return "";
  return Unbase64(it->get<std::string>()).value_or("");
}

EtcdRange ReadRange(const json& r) {
  EtcdRange out;
  out.revision = EtcdJsonInt(r.value("header", json::object()), "revision");
  out.count = EtcdJsonInt(r, "count");
  out.more = r.value("more", false);
  if (auto kvs = r.find("kvs"); kvs != r.end() && kvs->is_array()) {
    for (const json& kv : *kvs) {
      EtcdKeyValue e;
      e.key = Bytes(kv, "key");
      e.value = Bytes(kv, "value");
      e.create_revision = EtcdJsonInt(kv, "create_revision");
      e.mod_revision = EtcdJsonInt(kv, "mod_revision");
      e.version = EtcdJsonInt(kv, "version");
      e.lease = EtcdJsonInt(kv, "lease");
      out.kvs.push_back(std::move(e));
    }
  }
  return out;
}

json RangeBody(std::string_view key, std::string_view range_end, std::int64_t limit) {
  json body{{"key", EtcdBase64(key)}};
  if (!range_end.empty()) body["range_end"] = EtcdBase64(range_end);
  if (limit > 0) body["limit"] = std::to_string(limit);
  return body;
}

json OpJson(const EtcdOp& op) {
  switch (op.kind) {
    case EtcdOp::Kind::kPut: {
      json put{{"key", EtcdBase64(op.key)}, {"value", EtcdBase64(op.value)}};
      if (op.lease != 0) put["lease"] = std::to_string(op.lease);
      return {{"request_put", put}};
    }
    case EtcdOp::Kind::kRange:
      return {{"request_range", RangeBody(op.key, op.range_end, 0)}};
    case EtcdOp::Kind::kDelete: {
      json del{{"key", EtcdBase64(op.key)}};
      if (!op.range_end.empty()) del["range_end"] = EtcdBase64(op.range_end);
      return {{"request_delete_range", del}};
    }
  }
  return json::object();
}

json CompareJson(const EtcdCompare& c) {
  static const char* kTargets[] = {"VERSION", "CREATE", "MOD", "VALUE", "LEASE"};
  static const char* kResults[] = {"EQUAL", "GREATER", "LESS", "NOT_EQUAL"};
  json out{{"key", EtcdBase64(c.key)},
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
      out["value"] = EtcdBase64(c.value);
      break;
    case EtcdCompare::Target::kLease:
      out["lease"] = std::to_string(c.number);
      break;
  }
  return out;
}

// An error body of the gateway ({"error", "code", "message"}) as a Status.
// A streaming endpoint (lease keepalive) nests it: {"error": {"grpc_code", "message"}}.
Status GatewayError(const std::string& where, int http_status, const json& body,
                    std::string_view raw) {
  std::string message;
  int code = 0;
  if (body.is_object()) {
    const json nested = body.contains("error") && body["error"].is_object() ? body["error"] : body;
    if (nested.contains("message") && nested["message"].is_string())
      message = nested["message"].get<std::string>();
    else if (nested.contains("error") && nested["error"].is_string())
      message = nested["error"].get<std::string>();
    code = static_cast<int>(nested.contains("grpc_code") ? EtcdJsonInt(nested, "grpc_code")
                                                         : EtcdJsonInt(nested, "code"));
  }
  std::string text = "etcd " + where + ": ";
  if (message.empty()) {
    // Not the gateway's JSON (a proxy's page, Go's TLS or HTTP errors): a bounded excerpt.
    text += "HTTP " + std::to_string(http_status);
    if (!raw.empty()) {
      text += ": ";
      text += raw.substr(0, 200);
    }
    // etcd 3.4 with --client-cert-auth and auth enabled (embed/serve.go): a gateway request
    // whose client certificate has a CommonName is refused, as that name would be ignored.
    if (raw.find("CommonName of client") != std::string_view::npos)
      text +=
          " (with auth enabled, etcd's JSON gateway takes only client certificates "
          "without a CN: issue state.etcd.tls.cert_file with its names in subjectAltName)";
  } else {
    text += message;
  }
  switch (code) {
    case 3:  // INVALID_ARGUMENT
      return Status::InvalidArgument(text);
    case 5:  // NOT_FOUND
      return Status::NotFound(text);
    case 9:  // FAILED_PRECONDITION
      return Status::FailedPrecondition(text);
    case 7:  // PERMISSION_DENIED: the user's roles do not cover the key
      return Status::PermissionDenied(text);
    case 16:  // UNAUTHENTICATED: "etcdserver: invalid auth token"
      return Status::Unauthenticated(text);
    default:
      return Status::Unavailable(text);
  }
}

// What a member says when the token is missing, expired or stale: authenticate again, and
// send the request once more. That is safe for a write too: etcd checks the token in
// EtcdServer::processInternalRaftRequestOnce (etcdserver/v3_server.go, AuthInfoFromCtx)
// before it proposes anything to raft, so a request refused for its token was never applied;
// observed on etcd 3.4.23, a put with an expired simple token answers 401 code 16 and the
// key keeps its old value. "auth store is old" (a jwt token older than a change to users or
// roles) is checked by the applier before it applies (auth/store.go), and etcd 3.4 retries
// it itself; "user name is empty" is a request without a token (auth enabled after we asked).
bool RejectedForAuth(const Status& s) {
  const std::string& m = s.message();
  return m.find("etcdserver: invalid auth token") != std::string::npos ||
         m.find("etcdserver: revision of auth store is old") != std::string::npos ||
         m.find("etcdserver: user name is empty") != std::string::npos;
}

}  // namespace

struct EtcdClient::Impl {
  explicit Impl(EtcdClientOptions o) : options(std::move(o)) {
    for (const auto& url : options.endpoints) {
      auto e = ParseEtcdEndpoint(url);
      if (!e.ok()) {
        setup_error = e.status();  // every call says so: a config error, not an outage
        return;
      }
      // One list is one cluster: members that speak different schemes are a typo in one
      // of them, and trying plain HTTP after TLS failed would send the token in the clear.
      if (!endpoints.empty() && e->tls != endpoints.front().tls) {
        setup_error = Status::InvalidArgument(
            "etcd endpoint " + url + ": the list mixes http:// and https:// (" +
            options.endpoints.front() + "); one cluster speaks one of them");
        return;
      }
      endpoints.push_back(*e);
    }
    if (!endpoints.empty() && endpoints.front().tls) {
      auto made = EtcdTlsContext::Make(options.tls);
      if (!made.ok()) {
        setup_error = made.status();
        return;
      }
      tls = std::move(made).value();
    }
  }

  // One request on the open connection. `sent` says whether any of it may have reached the
  // member's HTTP server.
  Result<http::response<http::string_body>> Exchange(const EtcdEndpoint& e, const char* path,
                                                     const std::string& body,
                                                     Steady::time_point deadline, bool& sent) {
    std::string wire = std::string("POST ") + path + " HTTP/1.1\r\nHost: " + e.authority;
    if (!token.empty()) {
      wire += "\r\nAuthorization: ";
      wire += token;
    }
    wire += "\r\nContent-Type: application/json\r\nContent-Length: ";
    wire += std::to_string(body.size());
    wire += "\r\n\r\n";
    wire += body;
    if (Status s = conn.Write(wire, deadline, sent); !s.ok()) return s;
    http::response_parser<http::string_body> parser;
    parser.eager(true);
    parser.body_limit(64 * 1024 * 1024);
    boost::beast::flat_buffer buffer;
    while (!parser.is_done()) {
      auto space = buffer.prepare(16 * 1024);
      bool refused = false;
      auto n = conn.ReadSome(static_cast<char*>(space.data()), space.size(), deadline, refused);
      if (refused) sent = false;  // the member's TLS layer refused us: HTTP never saw it
      if (!n.ok()) return n.status();
      if (*n == 0) return Status::Unavailable("etcd " + e.authority + ": connection closed");
      buffer.commit(*n);
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
    if (!res.keep_alive()) conn.Close();
    return res;
  }

  // One request, on whichever member answers, with the failure rules of etcd_client.h.
  Result<json> Send(const char* path, const std::string& body, bool idempotent,
                    Steady::time_point deadline) {
    std::size_t refused = 0;
    bool retried = false;
    Status last = Status::Unavailable("etcd: not tried");
    while (true) {
      const EtcdEndpoint& e = endpoints[current];
      if (conn.open() && !conn.StillOpen()) conn.Close();  // the member closed the idle one
      if (!conn.open()) {
        if (Status s = conn.Open(e, tls.get(), deadline); !s.ok()) {
          // Never reached this member (or refused to trust it): the next one may answer.
          last = s;
          current = (current + 1) % endpoints.size();
          if (++refused >= endpoints.size() || Steady::now() >= deadline) return last;
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
          return GatewayError(std::string(path), static_cast<int>(res->result_int()), parsed,
                              res->body());
        if (!parsed.is_object())
          return Status::Unavailable(std::string("etcd ") + path + ": the answer is not JSON");
        return parsed;
      }
      conn.Close();
      // Once, on a fresh connection: a request of which nothing left (the member never saw
      // it), or a read, which is harmless to send twice.
      if (!retried && Steady::now() < deadline && (!sent || idempotent)) {
        retried = true;
        continue;
      }
      if (sent && !idempotent)
        return res.status().WithMessage(res.status().message() +
                                        " (the write may have been applied: read it back)");
      return res.status();
    }
  }

  // A token for options.auth, or no token when the cluster has auth turned off (as etcd's own
  // client does: the same config then works before and after `auth enable`).
  Status Authenticate(Steady::time_point deadline) {
    token.clear();
    auth_off = false;
    const json request{{"name", options.auth.username}, {"password", options.auth.password}};
    // Asking twice only makes a second token: safe to resend.
    auto r = Send(kAuthenticate, request.dump(), true, deadline);
    const std::string who = "etcd " + endpoints[current].authority + ": authentication as user '" +
                            options.auth.username + "'";
    if (!r.ok()) {
      if (r.status().message().find("authentication is not enabled") != std::string::npos) {
        auth_off = true;
        return Status::Ok();
      }
      if (r.status().message().find("authentication failed") != std::string::npos)
        return Status::Unauthenticated(who +
                                       " failed: wrong user name or password (check "
                                       "state.etcd.auth: username, password_file or "
                                       "password_env): " +
                                       r.status().message());
      return r.status().WithMessage(who + " failed: " + r.status().message());
    }
    auto t = r->find("token");
    if (t == r->end() || !t->is_string() || t->get<std::string>().empty())
      return Status::Unavailable(who + ": the answer has no token");
    token = t->get<std::string>();
    return Status::Ok();
  }

  Result<json> Call(const char* path, const json& request, bool idempotent) {
    std::lock_guard lock(mu);
    if (!setup_error.ok()) return setup_error;
    if (endpoints.empty()) return Status::InvalidArgument("etcd: no endpoints configured");
    const std::string body = request.dump();
    const auto deadline = Steady::now() + options.timeout;
    const bool auth = !options.auth.username.empty();
    if (auth && token.empty() && !auth_off) {
      if (Status s = Authenticate(deadline); !s.ok()) return s;
    }
    auto r = Send(path, body, idempotent, deadline);
    if (r.ok() || !RejectedForAuth(r.status())) return r;
    if (!auth)
      return r.status().WithMessage(r.status().message() +
                                    " (the cluster has authentication enabled: set "
                                    "state.etcd.auth)");
    // Once per call: a fresh token refused again is not an expiry.
    if (Status s = Authenticate(deadline); !s.ok()) return s;
    return Send(path, body, idempotent, deadline);
  }

  static constexpr const char* kAuthenticate = "/v3/auth/authenticate";

  EtcdClientOptions options;
  std::vector<EtcdEndpoint> endpoints;
  std::shared_ptr<EtcdTlsContext> tls;  // for https endpoints
  Status setup_error = Status::Ok();
  std::mutex mu;
  std::size_t current = 0;
  EtcdConnection conn;
  std::string token;      // empty: none yet, or the cluster has auth off
  bool auth_off = false;  // the cluster said "authentication is not enabled"
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

const EtcdClientOptions& EtcdClient::options() const { return impl_->options; }

Result<std::string> EtcdClient::AuthToken(bool fresh) {
  Impl& i = *impl_;
  std::lock_guard lock(i.mu);
  if (!i.setup_error.ok()) return i.setup_error;
  if (i.endpoints.empty()) return Status::InvalidArgument("etcd: no endpoints configured");
  if (i.options.auth.username.empty()) return std::string();
  if ((i.token.empty() && !i.auth_off) || fresh) {
    if (Status s = i.Authenticate(Steady::now() + i.options.timeout); !s.ok()) return s;
  }
  return i.token;
}

Result<EtcdRange> EtcdClient::Range(std::string_view key, std::string_view range_end,
                                    std::int64_t limit) {
  auto r = impl_->Call("/v3/kv/range", RangeBody(key, range_end, limit), true);
  if (!r.ok()) return r.status();
  return ReadRange(*r);
}

Result<std::int64_t> EtcdClient::Put(std::string_view key, std::string_view value,
                                     std::int64_t lease) {
  json body{{"key", EtcdBase64(key)}, {"value", EtcdBase64(value)}};
  if (lease != 0) body["lease"] = std::to_string(lease);
  auto r = impl_->Call("/v3/kv/put", body, false);
  if (!r.ok()) return r.status();
  return EtcdJsonInt(r->value("header", json::object()), "revision");
}

Result<std::int64_t> EtcdClient::DeleteRange(std::string_view key, std::string_view range_end) {
  json body{{"key", EtcdBase64(key)}};
  if (!range_end.empty()) body["range_end"] = EtcdBase64(range_end);
  auto r = impl_->Call("/v3/kv/deleterange", body, false);
  if (!r.ok()) return r.status();
  return EtcdJsonInt(*r, "deleted");
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
  out.revision = EtcdJsonInt(r->value("header", json::object()), "revision");
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
  return EtcdLease{EtcdJsonInt(*r, "ID"), EtcdJsonInt(*r, "TTL")};
}

Result<std::int64_t> EtcdClient::LeaseKeepAlive(std::int64_t id) {
  auto r = impl_->Call("/v3/lease/keepalive", json{{"ID", std::to_string(id)}}, false);
  if (!r.ok()) return r.status();
  // The gateway streams: {"result": {"ID", "TTL"}}; an expired lease has no TTL.
  const json result = r->value("result", *r);
  const std::int64_t ttl = EtcdJsonInt(result, "TTL");
  if (ttl <= 0) return Status::NotFound("etcd lease " + std::to_string(id) + " has expired");
  return ttl;
}

Result<EtcdLeaseTime> EtcdClient::LeaseTimeToLive(std::int64_t id) {
  auto r = impl_->Call("/v3/lease/timetolive", json{{"ID", std::to_string(id)}}, true);
  if (!r.ok()) return r.status();
  // An expired (or unknown) lease answers TTL -1 and no grantedTTL.
  const std::int64_t ttl = EtcdJsonInt(*r, "TTL");
  if (ttl <= 0) return Status::NotFound("etcd lease " + std::to_string(id) + " has expired");
  return EtcdLeaseTime{ttl, EtcdJsonInt(*r, "grantedTTL")};
}

Status EtcdClient::LeaseRevoke(std::int64_t id) {
  auto r = impl_->Call("/v3/lease/revoke", json{{"ID", std::to_string(id)}}, false);
  return r.ok() ? Status::Ok() : r.status();
}

}  // namespace icewarden
