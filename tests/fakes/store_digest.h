// StoreDigest: everything a StateStore holds that a refused request must leave alone, as one
// string, so a test can compare it before and after ("bad input changes nothing").
// Thread-safety: as the store.
#pragma once

#include <string>

#include "state/state_store.h"

namespace icewarden::testing {

// Regions (name, health, reason), ownership (table, owner, epoch), failovers (id, version,
// phase, approvals) with their step counts, webhook deliveries, and with_audit the number of
// audit events.
std::string StoreDigest(StateStore& store, bool with_audit);

}  // namespace icewarden::testing
