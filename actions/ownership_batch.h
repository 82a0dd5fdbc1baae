// One store batch of ownership.transfer: the compare-and-set of up to batch_size rows from
// the source to the target region (epochs + 1, one durable transaction with its audit event),
// retried on conflict after re-reading each row. Pure store work with no catalog state, so
// the transfer runs it on a worker thread while the catalog markers of earlier batches keep
// going (a durable commit is an fsync; on a slow disk that stalled every commit in flight).
// Thread-safety: one call per batch; the store is thread-safe by contract.
#pragma once

#include <vector>

#include "actions/ownership_transfer.h"
#include "state/types.h"

namespace icewarden {

class StateStore;

struct BatchMove {
  Status status = Status::Ok();    // a store error: rows not listed below did not move
  int transactions = 0;            // compare-and-set transactions tried
  std::vector<Ownership> moved;    // at their new epochs
  std::vector<Ownership> already;  // moved by an earlier run of this failover
  std::vector<TransferError> failed;
};

// `batches_before`: transactions of this transfer so far (numbers the audit events).
BatchMove MoveOwnershipBatch(StateStore& store, const TransferSpec& spec, const ActionContext& ctx,
                             std::vector<Ownership> rows, int batches_before);

}  // namespace icewarden
