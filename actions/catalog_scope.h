// Scopes and params shared by the catalog action family (ownership.transfer,
// verify.catalog_healthy, verify.replica_caught_up, fence.catalog_quiet).
//
// A scope names the tables a failover moves:
//   "namespace:P[,P...]"  P is a glob over the dotted namespace or the dotted table name
//                         ("eu" is namespace eu; "eu.*" is every table under eu, nested too)
//   "tables:P[,P...]"     P is a glob over the dotted table name ("sales.orders")
//   "owner:REGION"        every table REGION owns
//   "failover:ID"         every table whose ownership failover ID moved last (and that the
//                         region in question still owns): the way back, as failback proposes it
// Globs have the semantics of the config's ownership rules: '*' matches any run of characters
// including dots, '?' one character.
//
// ScopeOwnershipCursor walks the store's ownership rows of one owner in (namespace, name)
// order, page by page, keeping the scope's rows: the tables of a scope are always read from the
// store (the source of truth for ownership), never from a catalog listing.
// Thread-safety: plain values; a cursor is used by one thread.
#pragma once

#include <chrono>
#include <cstddef>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "actions/action.h"
#include "state/status.h"
#include "state/types.h"

namespace icewarden {

class StateStore;

struct CatalogScope {
  enum class Kind { kNamespace, kTables, kOwner, kFailover };
  Kind kind = Kind::kNamespace;
  std::vector<std::string> patterns{};  // globs; for kOwner the one region name
  std::string text{};                   // as written

  // kInvalidArgument with a message naming the accepted forms.
  static Result<CatalogScope> Parse(std::string_view text);
  // kOwner and kFailover match every table: the owner filter is applied by the caller, the
  // failover filter by ScopeOwnershipCursor.
  bool Matches(const TableIdent& table) const;
  // The region of an owner scope, empty for the other kinds.
  std::string owner_region() const { return kind == Kind::kOwner ? patterns.front() : ""; }
};

class ScopeOwnershipCursor {
 public:
  // Rows owned by `owner` that match `scope` and, when `failover_id` is set, were last moved by
  // that failover. `store` must outlive the cursor.
  ScopeOwnershipCursor(StateStore& store, CatalogScope scope, std::string owner,
                       std::optional<std::string> failover_id = std::nullopt,
                       std::size_t page_size = 1000);

  // Up to `max` next rows (fewer only at the end); empty once exhausted. Rows changed by the
  // caller after they were returned are not returned again.
  Result<std::vector<Ownership>> Next(std::size_t max);
  bool exhausted() const { return exhausted_; }

 private:
  StateStore& store_;
  CatalogScope scope_;
  std::string owner_;
  std::optional<std::string> failover_id_;
  std::size_t page_size_;
  std::optional<TableIdent> after_;
  std::vector<Ownership> buffered_;  // listed, not yet returned (in order)
  bool store_done_ = false;
  bool exhausted_ = false;
};

// The most tables one catalog step acts on or watches: a scope's listing stops there.
inline constexpr std::size_t kMaxScopeTables = 100'000;

// Every row of a scope owned by `owner`, stopping with an error past `max_rows` (0: no limit).
Result<std::vector<Ownership>> ListScopeOwnership(StateStore& store, const CatalogScope& scope,
                                                  const std::string& owner,
                                                  std::size_t max_rows = 0);

// Durations are read with ParseParamDuration (param_reader.h).

// Param readers that append a ParamError at `key` when the value is present but wrong.
// They return the default when the key is absent.
std::optional<std::string> StringParam(const nlohmann::json& params, const std::string& key,
                                       std::vector<ParamError>* errors);
std::optional<bool> BoolParam(const nlohmann::json& params, const std::string& key,
                              std::vector<ParamError>* errors);
std::optional<long long> IntParam(const nlohmann::json& params, const std::string& key,
                                  long long min, long long max, std::vector<ParamError>* errors);
std::optional<std::chrono::milliseconds> DurationParam(const nlohmann::json& params,
                                                       const std::string& key,
                                                       std::vector<ParamError>* errors);
// Errors for params that are not an object and for keys outside `known`.
void CheckParamKeys(const nlohmann::json& params, const std::vector<std::string>& known,
                    std::vector<ParamError>* errors);

}  // namespace icewarden
