// One page of GET /api/v1/ownership: the store's rows, filtered by namespace and by the
// latest lag round's state of each table, so the dashboard pages through 100,000 tables
// without loading them.
// Thread-safety: as the StateStore; the lag report is an immutable snapshot.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "orchestrator/api/api.h"
#include "state/state_store.h"

namespace icewarden {

class QueryParams;
struct LagReport;

// The lag states a table can be filtered by: LagStateName's, and "not_compared" for a table
// no lag round has a row for (a single region, or not compared yet).
inline constexpr std::string_view kTableLagStates =
    "diverged, not_same_table, unknown, not_in_owner, behind, caught_up, not_compared";
bool KnownTableLagState(std::string_view state);

// "sales.eu" -> {"sales","eu"}; nullopt for an empty level.
std::optional<std::vector<std::string>> NamespaceLevels(std::string_view dotted);

struct OwnershipFilter {
  // The table's namespace is this one or inside it; empty: any.
  std::vector<std::string> namespace_levels;
  std::string lag_state;  // "": any
};

struct OwnershipRow {
  Ownership ownership;
  // The worst state over the table's replicas in the latest lag round (LagStateName), ""
  // when the round has no row for it.
  std::string lag_state;
  // The largest LagUpperBound over its replicas; nullopt when none is bounded.
  std::optional<std::int64_t> lag_bound_ms;
};

struct OwnershipPage {
  std::vector<OwnershipRow> rows;
  // Set when a filter stopped reading after 100,000 tables with fewer than `limit` rows: the
  // last table read, where the next page starts.
  std::optional<TableIdent> read_to;
};

// At most `limit` rows of `query` (its owner and after) that pass `filter`, in table order.
// `lag` may be null (no round yet: every table is not_compared). Reads the store in batches
// of 1,000, at most 100,000 tables a call, so a filter few tables pass costs a bounded read
// and the caller pages on from read_to.
Result<OwnershipPage> ListOwnershipPage(StateStore& store, OwnershipQuery query,
                                        const OwnershipFilter& filter, const LagReport* lag,
                                        std::size_t limit);

// GET /api/v1/ownership: ?owner= &namespace=a.b &state= &after=a.b.t &limit=1..10000 (1000)
// {"tables":[...], "next_after": "a.b.t" | null}; rows carry lag_state and lag_bound_ms.
ApiResponse HandleOwnershipList(StateStore& store, const LagReport* lag, const QueryParams& query);

}  // namespace icewarden
