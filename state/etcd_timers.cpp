// Store timers in the etcd store (state_store.h, "Timers"): `timers/<name>` holds the ttl the
// timer was started with, attached to an etcd lease of that ttl. etcd's leader counts the
// lease down, so every replica reads the same elapsed time whatever its own clock says, and
// the key disappears with the lease. Elapsed = grantedTTL - TTL (whole seconds). When etcd's
// leader changes, the new one gives every lease its full TTL again: a timer may run longer
// than asked, never shorter, which is the safe side for a cooldown or an approval's window.
#include <nlohmann/json.hpp>
#include <utility>

#include "state/etcd_store_internal.h"

namespace icewarden {

Status EtcdStore::StartTimer(const std::string& name, std::chrono::milliseconds ttl) {
  std::lock_guard lock(mu_);
  if (name.empty()) return Status::InvalidArgument("a store timer needs a name");
  if (ttl <= std::chrono::milliseconds(0))
    return Status::InvalidArgument("store timer " + name + " needs a positive ttl");
  if (options_.read_only)
    return Status::FailedPrecondition("cannot start timer " + name +
                                      ": the state store was opened read-only");
  // Rounded up: a timer never ends before its ttl.
  const auto seconds = std::chrono::ceil<std::chrono::seconds>(ttl);
  auto lease = etcd_->LeaseGrant(seconds);
  if (!lease.ok()) return lease.status();
  Write w;
  EtcdOp put = PutOp(Key("timers", name), nlohmann::json{{"ttl_ms", ttl.count()}}.dump());
  put.lease = lease->id;
  w.ops.push_back(std::move(put));
  auto done = Commit(w, "start timer " + name);
  if (!done.ok()) return done.status();
  return Status::Ok();
}

Result<std::vector<StoreTimer>> EtcdStore::ListTimers(const std::string& prefix) {
  std::lock_guard lock(mu_);
  const std::string start = Key("timers", prefix);
  std::vector<EtcdKeyValue> kvs;
  Status s = Scan(start, EtcdClient::PrefixEnd(start), [&](EtcdKeyValue& kv) {
    kvs.push_back(std::move(kv));
    return true;
  });
  if (!s.ok()) return s;
  std::vector<StoreTimer> out;
  const std::size_t skip = Key("timers", "").size();
  for (const EtcdKeyValue& kv : kvs) {
    if (kv.lease == 0) continue;  // not written by StartTimer
    auto left = etcd_->LeaseTimeToLive(kv.lease);
    if (!left.ok()) {
      if (left.status().code() == StatusCode::kNotFound) continue;  // expired since the range
      return left.status();
    }
    StoreTimer t;
    t.name = kv.key.substr(skip);
    t.ttl = std::chrono::seconds(left->granted_seconds);
    t.elapsed =
        std::chrono::seconds(std::max<std::int64_t>(0, left->granted_seconds - left->ttl_seconds));
    out.push_back(std::move(t));
  }
  return out;
}

}  // namespace icewarden
