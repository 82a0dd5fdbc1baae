// CommitRules: whether a write the gateway received may go to a catalog now, and to which.
// The one place that reads ownership, fencing and failovers for the gateway: a pure function
// of what the store said, so every rule is tested without a socket (and the handler asks it
// twice: when the write arrives and again when its turn in the table's queue comes).
//
// Rules, in order (the first that applies decides):
//   1. The store could not be read: retry later (503). A gateway never guesses an owner.
//   2. The tables have two or more owners: 400, naming them (a transaction or a rename must
//      commit in one catalog).
//   3. An active failover closes a table (ClosingFailover): retry later (503), naming it.
//   4. The owner is fenced: retry later (503).
//   5. The owner is not one this gateway may forward to: 409 naming the owner and epoch.
//   6. Otherwise: forward to the owner, relying on each table's epoch as read.
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "state/types.h"

namespace icewarden {

// One table a write touches, as the store records it.
struct TableRecord {
  TableIdent table;
  std::optional<Ownership> row;  // nullopt: the store has no owner for it yet
  std::string rule_owner;        // the config's ownership rules' owner: a new table's owner
  const std::string& owner() const { return row ? row->owner : rule_owner; }
  Epoch epoch() const { return row ? row->epoch : 0; }
};

// What the gateway last read of the store, apart from ownership (read per write).
struct StoreSnapshot {
  bool readable = false;
  std::string error;             // why not, when !readable
  std::vector<Region> regions;   // fenced overlays
  std::vector<Failover> active;  // failovers not ended, oldest first
  std::int64_t refreshes = 0;    // how many reads made this snapshot (for closure confirmations)
  // The store's revision the snapshot was read at, when the store can tell a change cheaply
  // (SQLite's data version, etcd's watch): then ownership rows read while this snapshot is
  // current may be kept until the next one (WriteAdmission::OwnershipOf). nullopt: read each.
  std::optional<std::int64_t> revision;
};

struct WriteVerdict {
  enum class Kind { kForward, kRetryLater, kOwnedElsewhere, kSpansOwners };
  Kind kind = Kind::kRetryLater;
  std::string region;  // kForward: where to; kOwnedElsewhere: the owner
  Epoch epoch = 0;     // kOwnedElsewhere: the table's epoch
  // kForward: every table with the epoch the verdict relied on.
  std::vector<std::pair<TableIdent, Epoch>> epochs;
  std::string refusal;      // for metrics: store_unreadable, spans_owners, failover_in_progress,
                            // owner_fenced, owned_elsewhere; empty when forwarded
  std::string failover_id;  // failover_in_progress: which
  TableIdent table;         // the table the refusal is about
  std::string reason;       // one sentence for the error message and the audit log
};

// The active failover that closes `table` to writes, or nullptr. A failover closes the tables
// of its scope that its old region owns, from `fencing` until it ends, so that nothing reaches
// the old owner once fencing starts; a table it has moved reopens at the new owner while the
// failover promotes and verifies. A failover that failed, is compensating or needs attention
// keeps its tables closed: which catalog is right is a person's call.
const Failover* ClosingFailover(const TableRecord& table, const std::vector<Failover>& active);

// Whether a write to `table`, decided as the record says, goes to `f`'s old region for a
// table of its scope: what a gateway must have none of in flight before it confirms that `f`
// has closed it (the gateway.fence action's question).
bool WritesToOldOwner(const Failover& f, const TableRecord& table);
// Whether a failover in this phase closes its scope (fencing until it ends).
bool PhaseCloses(FailoverPhase phase);

WriteVerdict DecideWrite(const std::vector<TableRecord>& tables, const StoreSnapshot& store,
                         const std::vector<std::string>& forward_to);

}  // namespace icewarden
