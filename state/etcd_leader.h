// EtcdLeaderKey: one replica's hold on the leader key of an etcd-backed icewarden (issue 12).
//
// The key is created in a txn only when absent (create_revision == 0), with a lease of `ttl`.
// Its create revision is the term's fencing token: unique and increasing across terms, so a
// leader's writes carry StillMine() (the key's create revision is still ours) and a deposed
// leader's writes fail in etcd itself, whatever its clock or pauses.
//
// Patroni's rule for a leader that cannot renew: it must stop acting before its lease can
// have expired. LeaderTerm::act_until is that bound: measured from before the grant or renewal
// request was sent (so the request's own delay is counted against us), TTL minus a margin.
// The caller stops every effect at act_until unless a Renew() moved it.
// Thread-safety: one thread per object; the EtcdClient may be shared.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

#include "state/etcd_client.h"

namespace icewarden {

struct LeaderTerm {
  std::string holder;
  std::int64_t lease = 0;
  std::int64_t revision = 0;  // the key's create revision: the fencing token
  std::chrono::steady_clock::time_point act_until;
};

class EtcdLeaderKey {
 public:
  // `margin`: how long before the lease could expire the leader stops acting.
  EtcdLeaderKey(EtcdClient& etcd, std::string key, std::string me, std::chrono::seconds ttl,
                std::chrono::milliseconds margin = std::chrono::milliseconds(500));

  // One attempt: the term when this replica now leads (it already did, or it created the
  // key), nullopt when another holder has the key (Holder() says who).
  Result<std::optional<LeaderTerm>> TryAcquire();
  // Renews the term's lease. kFailedPrecondition when the term is over (lease expired, key
  // gone or no longer ours): the caller must already have stopped acting.
  Result<LeaderTerm> Renew();
  // Ends the term now (revokes its lease, which deletes the key). No-op without a term.
  Status Resign();
  // Who holds the key now, if anyone.
  Result<std::optional<EtcdKeyValue>> Holder();
  // The compare every write of this term carries. Without a term it never holds, so a
  // write that carries it cannot land.
  EtcdCompare StillMine() const;

  const std::optional<LeaderTerm>& term() const { return term_; }

 private:
  EtcdClient& etcd_;
  const std::string key_;
  const std::string me_;
  const std::chrono::seconds ttl_;
  const std::chrono::milliseconds margin_;
  std::optional<LeaderTerm> term_;
};

}  // namespace icewarden
