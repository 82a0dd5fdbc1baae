#include "orchestrator/api/ownership.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <utility>

#include "health/lag_monitor.h"
#include "orchestrator/api/command_body.h"
#include "orchestrator/api/query.h"
#include "state/record_json.h"

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

using nlohmann::json;

ApiResponse HandleOwnershipList(StateStore& store, const LagReport* lag, const QueryParams& query) {
  OwnershipQuery q;
  auto owner = query.Text("owner", "owner=us-east-1");
  if (!owner.ok()) return BadRequestResponse(owner.status().message());
  q.owner = *owner;
  OwnershipFilter filter;
  auto ns = query.Text("namespace", "namespace=sales.eu");
  if (!ns.ok()) return BadRequestResponse(ns.status().message());
  if (*ns) {
    auto levels = NamespaceLevels(**ns);
    if (!levels) {
      return BadRequestResponse(
          "namespace must be dotted levels without empty ones, e.g. "
          "namespace=sales or namespace=sales.eu (it matches that namespace "
          "and the ones inside it)");
    }
    filter.namespace_levels = std::move(*levels);
  }
  auto state = query.Text("state", "state=behind");
  if (!state.ok()) return BadRequestResponse(state.status().message());
  if (*state) {
    if (!KnownTableLagState(**state)) {
      return BadRequestResponse("state must be one of " + std::string(kTableLagStates) + "; got '" +
                                **state + "'");
    }
    filter.lag_state = **state;
  }
  if (auto after = query.Get("after")) {
    q.after = TableIdent::Parse(*after);
    if (!q.after) {
      return BadRequestResponse(
          "after must be a table name with its namespace, e.g. after=sales.orders "
          "(pass the next_after of the previous page)");
    }
  }
  auto limit = query.Integer("limit", kTablePageDefault, 1, kTablePageMax);
  if (!limit.ok()) return BadRequestResponse(limit.status().message());
  // One extra row says whether there is a next page.
  auto page = ListOwnershipPage(store, q, filter, lag, static_cast<std::size_t>(*limit) + 1);
  if (!page.ok()) return StoreErrorResponse(page.status());
  std::vector<OwnershipRow>& rows = page->rows;
  const bool more = rows.size() > static_cast<std::size_t>(*limit);
  if (more) rows.resize(static_cast<std::size_t>(*limit));
  json tables = json::array();
  for (const OwnershipRow& r : rows) {
    json row = OwnershipJson(r.ownership);
    row["lag_state"] = r.lag_state.empty() ? json(nullptr) : json(r.lag_state);
    row["lag_bound_ms"] = r.lag_bound_ms ? json(*r.lag_bound_ms) : json(nullptr);
    tables.push_back(std::move(row));
  }
  json next = nullptr;
  if (more) next = rows.back().ownership.table.ToString();
  if (!more && page->read_to) next = page->read_to->ToString();  // a filter's read ended
  return JsonResponse(200, {{"tables", std::move(tables)}, {"next_after", std::move(next)}});
}

}  // namespace icewarden
