// A process for the crash test to kill: opens the SQLite store at argv[1] and, forever,
// moves one whole group of tables (see store_crash_layout.h) to the other region per
// CompareAndSetOwnership batch. After each commit returns it prints
//   batch <n> committed group <g> epoch <e>
// and flushes, so the test knows which batches the store promised were durable.
// It resumes from whatever the database holds, so it can be restarted after a kill.
// Exit codes: 2 the store failed, 3 the database breaks the layout's invariant.
#include <cinttypes>
#include <cstdio>
#include <map>
#include <vector>

#include "state/sqlite_store.h"
#include "tests/helpers/store_crash_layout.h"

using namespace icewarden;
using namespace icewarden::testing;

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s DB_PATH\n", argv[0]);
    return 2;
  }
  Result<std::unique_ptr<StateStore>> opened = OpenSqliteStore({.path = argv[1]}, SystemClock());
  if (!opened.ok()) {
    std::fprintf(stderr, "open: %s\n", opened.status().ToString().c_str());
    return 2;
  }
  StateStore& store = **opened;

  OwnershipQuery all;
  all.limit = 0;
  Result<std::vector<Ownership>> rows = store.ListOwnership(all);
  if (!rows.ok()) {
    std::fprintf(stderr, "list: %s\n", rows.status().ToString().c_str());
    return 2;
  }
  std::vector<Epoch> epochs(kCrashGroups, 0);
  std::map<std::string, int> group_of;
  for (int g = 0; g < kCrashGroups; ++g) group_of[CrashGroupName(g)] = g;
  std::vector<bool> seen(kCrashGroups, false);
  for (const Ownership& o : *rows) {
    int g = group_of.at(o.table.namespace_levels.at(1));
    if (seen[g] && epochs[g] != o.epoch) {
      std::fprintf(stderr, "group %d has mixed epochs\n", g);
      return 3;
    }
    seen[g] = true;
    epochs[g] = o.epoch;
  }

  std::vector<OwnershipChange> batch(kCrashTablesPerGroup);
  for (std::int64_t n = 0;; ++n) {
    int g = static_cast<int>(n % kCrashGroups);
    for (int i = 0; i < kCrashTablesPerGroup; ++i) {
      batch[i].table = CrashTable(g, i);
      batch[i].expected_epoch = epochs[g];
      batch[i].new_owner = CrashOwnerAtEpoch(epochs[g] + 1);
    }
    AuditEvent why;
    why.actor = "store_crash_writer";
    why.source = "test";
    why.action = "ownership.set";
    why.target = CrashGroupTarget(g);
    why.detail_json = "{\"epoch\":" + std::to_string(epochs[g] + 1) + "}";
    Status s = store.CompareAndSetOwnership(batch, why);
    if (!s.ok()) {
      std::fprintf(stderr, "batch %" PRId64 ": %s\n", n, s.ToString().c_str());
      return 2;
    }
    ++epochs[g];
    std::printf("batch %" PRId64 " committed group %d epoch %" PRId64 "\n", n, g, epochs[g]);
    std::fflush(stdout);
  }
}
