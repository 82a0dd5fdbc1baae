// The ownership transfer engine behind ownership.transfer (and its compensation): moves the
// store's ownership of a scope's tables from one region to another in compare-and-set
// batches, each epoch bumped by one, then writes the icewarden.owner / icewarden.epoch markers
// in the new owner's catalog.
//
// Order per batch: the store first (the source of truth; one durable transaction per batch,
// which is what a resume continues from), then the markers of that batch: each marker is loaded
// (at most `concurrency` loads in flight) and then committed (at most `concurrency` commits in
// flight), loads running ahead of the commits. The next batch's compare-and-set is made once
// fewer than `concurrency` markers wait to be committed, on a worker thread (ownership_batch.h)
// while the catalog requests go on, so the catalog never waits on the store's fsync and the
// store is never more than a batch ahead of the catalog.
//
// Markers (DESIGN.md, "Iceberg REST catalog usage"): load the table in the new owner's catalog,
// and unless its icewarden.epoch is already >= the target epoch, commit set-properties
// {icewarden.owner, icewarden.epoch} guarded by assert-table-uuid (the uuid just loaded).
// 409 (or any definite failure): pause briefly (20 ms, doubling, at most 1 s), reload and retry,
// at most kMaxMarkerAttempts commits and as many failed loads.
// State unknown (500/502/504, a connection lost mid-commit): reload and check; the retry reuses
// the first attempt's Idempotency-Key.
//
// Resume: rows already owned by the target with this failover id (moved by an earlier run) are
// counted as already moved and get their markers checked (and written when missing).
// Thread-safety: one call per thread; the store must be thread-safe (it is, by contract).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "actions/action.h"
#include "actions/catalog_scope.h"

namespace icewarden {

inline constexpr int kMaxMarkerAttempts = 8;

struct TransferSpec {
  CatalogScope scope{};
  std::string source{};       // region losing the tables
  std::string target{};       // region gaining them
  std::string failover_id{};  // written on every moved row
  // When set, only rows last moved by this failover are moved (compensation moves back what
  // the failover moved, nothing else).
  std::optional<std::string> only_failover_id{};
  bool write_catalog_properties = true;
  int concurrency = 64;
  std::size_t batch_size = 500;
  std::string actor = "executor";  // for the audit events, one per batch
  std::string why{};               // audit reason prefix: "ownership.transfer", "compensation"
};

struct TransferError {
  std::string table{};
  std::string error{};
};

struct TransferReport {
  int moved = 0;          // rows this call moved in the store
  int already_moved = 0;  // rows an earlier run of this failover had moved
  int markers_written = 0;
  int markers_present = 0;  // markers that were already at (or past) the target epoch
  int markers_verified_after_unknown = 0;  // commits of unknown fate found applied on reload
  int conflicts_retried = 0;               // 409s answered by reload and retry
  int failed = 0;                          // tables that end this call not done
  int batches = 0;
  bool expired = false;       // the deadline passed or the step was cancelled
  bool commits_sent = false;  // at least one catalog commit was sent
  std::optional<Status> store_error{};
  std::vector<TransferError> first_errors{};  // at most 10

  bool complete() const { return !expired && !store_error && failed == 0; }
  // Anything that changed the world (store rows or commits of possibly unknown fate).
  bool applied() const { return moved > 0 || commits_sent; }
  std::string ToJson(const TransferSpec& spec) const;
};

TransferReport TransferOwnership(const TransferSpec& spec, const ActionEnv& env,
                                 const ActionContext& ctx);

}  // namespace icewarden
