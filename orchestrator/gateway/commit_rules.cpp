#include "orchestrator/gateway/commit_rules.h"

#include <algorithm>

#include "actions/catalog_scope.h"

namespace icewarden {
namespace {

std::string Dotted(const TableIdent& t) { return t.ToString(); }

}  // namespace

bool PhaseCloses(FailoverPhase phase) {
  switch (phase) {
    case FailoverPhase::kFencing:
    case FailoverPhase::kFenced:
    case FailoverPhase::kPromoting:
    case FailoverPhase::kVerifying:
    case FailoverPhase::kFailed:
    case FailoverPhase::kCompensating:
    case FailoverPhase::kNeedsAttention:
      return true;
    default:
      return false;
  }
}

namespace {

// Whether `f`'s scope holds the table: of its old region, or moved by it already.
bool InScope(const Failover& f, const TableRecord& t) {
  const bool moved_by_f = t.row && t.row->failover_id == f.id;
  if (moved_by_f) return true;
  if (t.owner() != f.from) return false;
  auto scope = CatalogScope::Parse(f.scope);
  // A scope the store holds but this build cannot read closes what its old region owns:
  // refusing writes for a while is recoverable, a second writer is not.
  if (!scope.ok()) return true;
  if (scope->kind == CatalogScope::Kind::kFailover) {
    return t.row && t.row->failover_id == scope->patterns.front();
  }
  return scope->Matches(t.table);
}

}  // namespace

bool WritesToOldOwner(const Failover& f, const TableRecord& table) {
  return table.owner() == f.from && InScope(f, table);
}

const Failover* ClosingFailover(const TableRecord& table, const std::vector<Failover>& active) {
  for (const Failover& f : active) {
    if (!PhaseCloses(f.phase) || !InScope(f, table)) continue;
    const bool reopened =
        table.row && table.row->failover_id == f.id && table.owner() == f.to &&
        (f.phase == FailoverPhase::kPromoting || f.phase == FailoverPhase::kVerifying);
    if (!reopened) return &f;
  }
  return nullptr;
}

WriteVerdict DecideWrite(const std::vector<TableRecord>& tables, const StoreSnapshot& store,
                         const std::vector<std::string>& forward_to) {
  WriteVerdict v;
  if (!tables.empty()) v.table = tables.front().table;
  if (!store.readable) {
    v.refusal = "store_unreadable";
    v.reason = "the gateway cannot read the ownership record (" + store.error +
               "), so it cannot tell which region may write; retry shortly";
    return v;
  }
  for (const TableRecord& t : tables) {
    if (t.owner() != tables.front().owner()) {
      v.kind = WriteVerdict::Kind::kSpansOwners;
      v.refusal = "spans_owners";
      v.reason = "the request writes tables of two regions, which cannot commit together: " +
                 Dotted(tables.front().table) + " is written in " + tables.front().owner() +
                 " and " + Dotted(t.table) + " in " + t.owner() + "; commit them separately";
      v.table = t.table;
      return v;
    }
  }
  for (const TableRecord& t : tables) {
    if (const Failover* f = ClosingFailover(t, store.active)) {
      v.refusal = "failover_in_progress";
      v.failover_id = f->id;
      v.table = t.table;
      v.reason = "table " + Dotted(t.table) + " is closed to writes while " +
                 std::string(FailoverKindName(f->kind)) + " " + f->id + " moves it from " +
                 f->from + " to " + f->to + " (" + FailoverPhaseName(f->phase) + "); retry shortly";
      return v;
    }
  }
  const std::string& owner = tables.front().owner();
  for (const Region& r : store.regions) {
    if (r.name == owner && r.fenced) {
      v.refusal = "owner_fenced";
      v.reason = "region " + owner + ", which owns " + Dotted(tables.front().table) +
                 ", is fenced: nothing may commit there until an operator unfences it or its "
                 "tables move; retry shortly";
      return v;
    }
  }
  if (std::find(forward_to.begin(), forward_to.end(), owner) == forward_to.end()) {
    v.kind = WriteVerdict::Kind::kOwnedElsewhere;
    v.refusal = "owned_elsewhere";
    v.region = owner;
    v.epoch = tables.front().epoch();
    v.reason = "table " + Dotted(tables.front().table) + " is written in region " + owner +
               " (epoch " + std::to_string(v.epoch) +
               "), which this gateway does not forward to: commit through a gateway of " + owner +
               ", then reload";
    return v;
  }
  v.kind = WriteVerdict::Kind::kForward;
  v.region = owner;
  for (const TableRecord& t : tables) v.epochs.emplace_back(t.table, t.epoch());
  return v;
}

}  // namespace icewarden
