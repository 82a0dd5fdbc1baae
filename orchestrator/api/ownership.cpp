#include "orchestrator/api/ownership.h"

#include <algorithm>
#include <chrono>
#include <utility>

#include "health/lag_monitor.h"

namespace icewarden {
namespace {

constexpr std::size_t kBatch = 1000;
// A filter reads at most this many tables a request; the page then ends early (read_to).
constexpr std::size_t kMaxOwnershipScan = 100000;
constexpr std::string_view kNotCompared = "not_compared";

// The worst state and the largest bound over `table`'s rows in `lag`.
void Summarize(const LagReport* lag, const TableIdent& table, OwnershipRow* row) {
  if (lag == nullptr) return;
  auto it = std::lower_bound(lag->tables.begin(), lag->tables.end(), table,
                             [](const TableLag& a, const TableIdent& b) { return a.table < b; });
  std::optional<LagState> worst;
  for (; it != lag->tables.end() && it->table == table; ++it) {
    // LagState is declared worst first.
    if (!worst || it->state < *worst) worst = it->state;
    if (auto bound = LagUpperBound(*it, lag->at)) {
      const std::int64_t ms = bound->count();
      row->lag_bound_ms = std::max(row->lag_bound_ms.value_or(ms), ms);
    }
  }
  if (worst) row->lag_state = LagStateName(*worst);
}

bool InNamespace(const TableIdent& table, const std::vector<std::string>& levels) {
  return table.namespace_levels.size() >= levels.size() &&
         std::equal(levels.begin(), levels.end(), table.namespace_levels.begin());
}

}  // namespace

bool KnownTableLagState(std::string_view state) {
  if (state == kNotCompared) return true;
  for (LagState s : {LagState::kNotSameTable, LagState::kDiverged, LagState::kUnknown,
                     LagState::kNotInOwner, LagState::kBehind, LagState::kCaughtUp})
    if (state == LagStateName(s)) return true;
  return false;
}

std::optional<std::vector<std::string>> NamespaceLevels(std::string_view dotted) {
  // The table parser's rules for levels (no empty one), with a stand-in table name.
  auto t = TableIdent::Parse(std::string(dotted) + ".t");
  if (!t) return std::nullopt;
  return std::move(t->namespace_levels);
}

Result<OwnershipPage> ListOwnershipPage(StateStore& store, OwnershipQuery query,
                                        const OwnershipFilter& filter, const LagReport* lag,
                                        std::size_t limit) {
  const bool by_namespace = !filter.namespace_levels.empty();
  std::string ns_key;
  if (by_namespace) {
    TableIdent start{filter.namespace_levels, ""};
    ns_key = start.NamespaceKey();
    // Keys sort as strings, so the namespace and those inside it ("sales", "sales\x1feu")
    // come after (ns_key, "") and before the first key that does not start with ns_key.
    if (!query.after || std::pair(query.after->NamespaceKey(), query.after->name) <
                            std::pair(ns_key, std::string()))
      query.after = std::move(start);
  }
  const bool filtered = by_namespace || !filter.lag_state.empty();
  query.limit = filtered ? std::max(limit, kBatch) : limit;
  OwnershipPage page;
  for (std::size_t scanned = 0;;) {
    auto batch = store.ListOwnership(query);
    if (!batch.ok()) return batch.status();
    if (batch->empty()) return page;
    TableIdent last = batch->back().table;
    const bool full = batch->size() == query.limit;
    scanned += batch->size();
    for (Ownership& o : *batch) {
      if (by_namespace) {
        if (o.table.NamespaceKey().rfind(ns_key, 0) != 0) return page;  // past the namespace
        if (!InNamespace(o.table, filter.namespace_levels)) continue;
      }
      OwnershipRow row{std::move(o), "", std::nullopt};
      Summarize(lag, row.ownership.table, &row);
      if (!filter.lag_state.empty()) {
        const std::string_view state =
            row.lag_state.empty() ? kNotCompared : std::string_view(row.lag_state);
        if (state != filter.lag_state) continue;
      }
      page.rows.push_back(std::move(row));
      if (page.rows.size() == limit) return page;
    }
    if (!filtered || !full) return page;
    if (scanned >= kMaxOwnershipScan) {
      page.read_to = std::move(last);  // the caller's next page goes on from here
      return page;
    }
    query.after = std::move(last);
  }
}

}  // namespace icewarden
