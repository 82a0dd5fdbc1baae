// LagMonitor: measures replication lag for every replicated table, one round at a time,
// across all configured catalogs (one CatalogClient per region). A round:
//   1. lists every table in every region (nested namespaces included; catalog_inventory.h);
//   2. asks `owner_of` for each table's owner; unowned tables are out of scope;
//   3. for each table that its owner and at least one other region hold, loads it in both
//      and compares them with CompareReplica (replication_lag.h): one TableLag per
//      (table, replica region).
// Loads send If-None-Match with the ETag remembered from the last round for that
// (region, table); a 304 reuses the remembered TableSnapshotView, so a round's cost
// follows how much changed, not how many tables exist. At most `max_in_flight` catalog
// requests are outstanding at any moment.
//
// Partial failure is the normal case and never fails the round:
//   - a region whose listing fails gets one line in region_errors; rows that needed it are
//     kUnknown with that error as the reason (for a failed replica region: the tables it
//     held at its last successful listing, or, never listed, every table owned elsewhere);
//   - a load that fails makes the rows that needed it kUnknown, with the error;
//   - a table a non-owner region holds but its owner's catalog does not is kNotInOwner.
// A kUnknown row carries the last comparison of its (table, owner, replica) in an earlier
// round, if any (TableLag::last_known_*), so that the RPO stays bounded while a catalog is
// away (LagUpperBound).
// Refresh fails only when the monitor is destroyed during the round.
//
// Threading: asynchronous; everything (Refresh, its callbacks, latest()) runs on the
// thread of the io_context that runs the clients' transports. The clients and the Clock
// must outlive the monitor and any round still running when it is destroyed (such a
// round finishes the listings under way, loads nothing more and reports kUnavailable).
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "health/catalog_client.h"
#include "health/replication_lag.h"
#include "state/clock.h"
#include "state/status.h"
#include "state/types.h"

namespace icewarden {

struct LagReport {
  UnixMillis at = 0;  // when the round finished: the `now` of every lag in it
  // Sorted by table, then replica region.
  std::vector<TableLag> tables;
  // "eu-central-1: list namespaces: connect 10.0.0.7:8181: Connection refused"
  std::vector<std::string> region_errors;
  int loads_sent = 0;
  int loads_not_modified = 0;  // answered 304: the remembered view was reused
  int loads_failed = 0;
  int unowned_tables = 0;                 // listed somewhere, but owner_of had no owner for them
  std::chrono::milliseconds duration{0};  // monotonic time the round took
};

// The owner region of a table, nullopt when no one owns it. Called on the monitor's
// thread, once per listed table per round; must be cheap and must not block.
using OwnerLookup = std::function<std::optional<std::string>(const TableIdent&)>;

struct LagMonitorOptions {
  LagPolicy policy;
  int max_in_flight = 16;  // catalog requests outstanding at once, across regions
};

class LagMonitor {
 public:
  // `catalogs`: region name -> client, non-null, each outliving the monitor.
  LagMonitor(std::map<std::string, CatalogClient*> catalogs, OwnerLookup owner_of,
             const Clock& clock, LagMonitorOptions options);
  ~LagMonitor();
  LagMonitor(const LagMonitor&) = delete;
  LagMonitor& operator=(const LagMonitor&) = delete;

  // Runs one round and calls `done` once with its report, which also becomes latest().
  // A Refresh while a round runs joins it: both callers get that round's report.
  void Refresh(std::function<void(Result<LagReport>)> done);

  // The last finished round's report, nullptr before the first. Valid until the next round
  // finishes; copy what must live longer.
  const LagReport* latest() const;

 private:
  struct State;
  class Round;
  std::shared_ptr<State> state_;
};

}  // namespace icewarden
