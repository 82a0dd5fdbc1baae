// EtcdClient: etcd v3 through its JSON gateway (POST /v3/kv/range, /v3/kv/put,
// /v3/kv/deleterange, /v3/kv/txn, /v3/lease/grant, /v3/lease/keepalive, /v3/lease/revoke,
// /v3/lease/timetolive)
// over HTTP/1.1 or HTTPS, synchronously: the first piece of the etcd state backend (issue 12),
// which calls it from the store's own methods. TLS and the bytes on the wire:
// etcd_connection.h.
//
// What the real server sends, and this client reads (etcd 3.4, Debian's etcd-server):
//  - keys and values are base64 in both directions;
//  - every int64 is a JSON string ("revision":"2"), and proto3 leaves out fields at their
//    default: a txn that failed has no "succeeded" at all, an empty range no "kvs", a put
//    without a lease no "lease";
//  - an error is a JSON body with "error", "code" (a gRPC code) and "message", with an HTTP
//    status (400 for a bad request; a missing lease on keepalive is a 200 whose result has
//    no "TTL").
//
// Failures: a request that never reached a member (connect refused or timed out) is tried on
// the next endpoint. Once a request may have been delivered, a read (range) is retried once;
// a write (put, deleterange, txn) is not, and its Status says the outcome is unknown: the
// caller reads back, as with a catalog commit. A member whose certificate does not verify
// (kUnauthenticated) or that refuses ours (kPermissionDenied) received no request either: the
// next endpoint is tried, and the Status says what to fix.
//
// Authentication (etcd's users, `--auth-token simple` or jwt): the client asks
// POST /v3/auth/authenticate for a token before its first request and sends it as
// "Authorization: <token>" on every request. When a member answers that the token is not (or
// no longer) valid, the client authenticates again and sends the request once more, also a
// write: etcd rejects such a request before proposing it (etcd_client.cpp says where).
// Thread-safety: every method locks one connection; calls from several threads queue.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "state/status.h"

namespace icewarden {

struct EtcdKeyValue {
  std::string key;
  std::string value;
  std::int64_t create_revision = 0;
  std::int64_t mod_revision = 0;
  std::int64_t version = 0;
  std::int64_t lease = 0;
};

struct EtcdRange {
  std::int64_t revision = 0;  // the store's revision when it was read
  std::vector<EtcdKeyValue> kvs;
  std::int64_t count = 0;  // keys in the range (more than kvs.size() when limited)
  bool more = false;
};

// One comparison of a txn: `target` of `key` compared with `number` (or `value`).
struct EtcdCompare {
  enum class Target { kVersion, kCreateRevision, kModRevision, kValue, kLease };
  enum class Result { kEqual, kGreater, kLess, kNotEqual };
  std::string key;
  Target target = Target::kModRevision;
  Result result = Result::kEqual;
  std::int64_t number = 0;
  std::string value;  // for kValue
};

struct EtcdOp {
  enum class Kind { kPut, kRange, kDelete };
  Kind kind = Kind::kPut;
  std::string key;
  std::string value;       // kPut
  std::string range_end;   // kRange, kDelete: empty means the one key
  std::int64_t lease = 0;  // kPut
};

struct EtcdTxnResult {
  bool succeeded = false;
  std::int64_t revision = 0;
  std::vector<EtcdRange> ranges;  // one per kRange op of the branch that ran, in order
};

struct EtcdLease {
  std::int64_t id = 0;
  std::int64_t ttl_seconds = 0;
};

// What /v3/lease/timetolive says of a live lease, by etcd's clock.
struct EtcdLeaseTime {
  std::int64_t ttl_seconds = 0;      // left
  std::int64_t granted_seconds = 0;  // as granted
};

// TLS to https:// endpoints.
struct EtcdTlsOptions {
  std::string ca_file;    // PEM: the CA(s) that sign the members' certificates; required
  std::string cert_file;  // PEM client certificate (for --client-cert-auth), with key_pem
  std::string key_pem;    // its private key as PEM text (a secret: never in a message)
};

// etcd's user/password authentication; an empty username means none.
struct EtcdAuthOptions {
  std::string username;
  std::string password;  // never in a message
};

struct EtcdClientOptions {
  // A constructor, not an aggregate: callers name the endpoints (and a timeout) and leave TLS
  // and auth out without -Wmissing-field-initializers.
  EtcdClientOptions() = default;
  EtcdClientOptions(std::vector<std::string> endpoints_,
                    std::chrono::milliseconds timeout_ = std::chrono::seconds(2),
                    EtcdTlsOptions tls_ = {}, EtcdAuthOptions auth_ = {})
      : endpoints(std::move(endpoints_)),
        timeout(timeout_),
        tls(std::move(tls_)),
        auth(std::move(auth_)) {}

  // "http://127.0.0.1:2379" or "https://…"; tried in order. One that is not
  // http(s)://HOST:PORT, a list that mixes http and https, or https without tls.ca_file makes
  // every call kInvalidArgument, naming it.
  std::vector<std::string> endpoints;
  std::chrono::milliseconds timeout{std::chrono::seconds(2)};  // per request, auth included
  EtcdTlsOptions tls;
  EtcdAuthOptions auth;
};

class EtcdClient {
 public:
  explicit EtcdClient(EtcdClientOptions options);
  ~EtcdClient();
  EtcdClient(const EtcdClient&) = delete;
  EtcdClient& operator=(const EtcdClient&) = delete;

  // The keys in [key, range_end), or `key` alone when range_end is empty; `limit` 0 means all.
  Result<EtcdRange> Range(std::string_view key, std::string_view range_end = {},
                          std::int64_t limit = 0);
  // The revision the put created.
  Result<std::int64_t> Put(std::string_view key, std::string_view value, std::int64_t lease = 0);
  // How many keys were deleted.
  Result<std::int64_t> DeleteRange(std::string_view key, std::string_view range_end = {});
  Result<EtcdTxnResult> Txn(const std::vector<EtcdCompare>& compare,
                            const std::vector<EtcdOp>& success,
                            const std::vector<EtcdOp>& failure = {});
  Result<EtcdLease> LeaseGrant(std::chrono::seconds ttl);
  // The lease's TTL after the renewal; kNotFound when it has expired or never existed.
  Result<std::int64_t> LeaseKeepAlive(std::int64_t id);
  Status LeaseRevoke(std::int64_t id);
  // How long the lease has left; kNotFound when it has expired or never existed. A read:
  // retried once like a range.
  Result<EtcdLeaseTime> LeaseTimeToLive(std::int64_t id);

  // The token this client sends with each request, asking for one first when it has none (or
  // `fresh`): "" when the options name no user or the cluster has auth off. For a stream of
  // its own (etcd_watch.h) that must carry the same credentials.
  Result<std::string> AuthToken(bool fresh);
  const EtcdClientOptions& options() const;

  // The range_end that makes [prefix, end) every key starting with `prefix`.
  static std::string PrefixEnd(std::string_view prefix);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace icewarden
