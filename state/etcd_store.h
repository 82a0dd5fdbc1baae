// The etcd state backend (issue 12): the StateStore and DrillStore contracts over etcd v3,
// for several icewarden replicas sharing one record. SQLite stays the default for one replica.
//
// Layout under the prefix (default "/icewarden/"), every value a JSON document:
//   regions/<name>                      a Region
//   own/<namespace key>\0<name>         a table's owner, epoch, updated_at, failover id
//   failovers/<id>                      a Failover (its version inside)
//   steps/<failover id>/<step id>       a StepRecord; journal order is the key's create revision
//   audit/<seq, 20 digits>              an AuditEvent
//   meta/audit_seq                      the last seq handed out and that event's seal
//   webhooks/<key>                      a WebhookDelivery
//   drills/<id>, drill_slots/<drill>/<slot, 20 digits>, drill_steps/<run>/<step>,
//   drill_notes/<run>/<seq, 20 digits>  the drill record
//   timers/<name>                       a store timer: its ttl, on an etcd lease (etcd_timers.cpp)
// The ownership keys sort as SQLite's (namespace_key, name): the namespace key's separators
// (0x1F) sort above the 0x00 that ends it.
//
// Every mutating method is one etcd txn. Its compares carry the method's own condition (a
// row's mod revision read just before, or a key's absence), the audit counter's mod revision
// (so seq is dense and in revision order) and, when options.fence is set, the writer's fence:
// the leader key still being this replica's (EtcdLeaderKey::StillMine), so a deposed
// leader's write fails in etcd itself. A write refused by the fence is kFailedPrecondition
// and says so. An ownership batch is one txn: its size plus 2 must fit the cluster's
// --max-txn-ops (options.max_txn_ops, checked before sending).
//
// When a write's answer is lost (etcd unreachable after the request may have been applied),
// the store reads its audit event back: found, the write landed; otherwise kUnavailable says
// the outcome is unknown and the caller reads back, as with a catalog commit.
// Thread-safety: calls are serialised internally.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "state/clock.h"
#include "state/etcd_client.h"
#include "state/state_store.h"

namespace icewarden {

struct EtcdStoreOptions {
  std::string prefix = "/icewarden/";
  // The compare every write carries (the leader's hold); nullopt or unset: no fence.
  std::function<std::optional<EtcdCompare>()> fence{};
  // The cluster's --max-txn-ops (etcd's default is 128).
  std::size_t max_txn_ops = 128;
  bool read_only = false;  // every write fails with kFailedPrecondition
};

// Checks that etcd answers and reads the audit counter, then returns the store. A read_only
// store (a standby's) opens without asking etcd: each read says so when etcd is down. `etcd` may be
// shared with the leader key.
Result<std::unique_ptr<StateStore>> OpenEtcdStore(std::shared_ptr<EtcdClient> etcd,
                                                  EtcdStoreOptions options,
                                                  std::shared_ptr<Clock> clock);

}  // namespace icewarden
