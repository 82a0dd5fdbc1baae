#include "actions/ownership_transfer.h"
#include "actions/param_reader.h"

#include <algorithm>
#include <chrono>
#include <functional>
#include <future>
#include <memory>
#include <nlohmann/json.hpp>

#include "actions/catalog_session.h"
#include "actions/ownership_batch.h"
#include "actions/ownership_markers.h"
#include "health/in_flight_limit.h"
#include "state/state_store.h"

namespace icewarden {

namespace {

constexpr std::size_t kMaxReportedErrors = 10;

// Waves of commits (`concurrency` each) that may still be ahead when the next store batch
// starts. The batch (a durable compare-and-set of batch_size rows) and the loads of its first
// markers must be done before the commits ahead run out; with one wave (the old rule) that
// race was lost often enough to leave commit slots idle.
constexpr int kAheadWaves = 4;

// An epoch marker icewarden cannot read is overwritten, as if absent: the transfer is what
// writes markers (verify.ownership_markers is what reports one that does not parse).
std::optional<Epoch> MarkerEpoch(const TableSnapshotView& view) {
  const MarkerProperties m = ReadMarkerProperties(view.properties);
  return m.epoch ? ParseMarkerEpoch(*m.epoch) : std::nullopt;
}

std::string MarkerOwner(const TableSnapshotView& view) {
  return ReadMarkerProperties(view.properties).owner.value_or("");
}

// All state of one transfer; callbacks reach it through a shared_ptr so that the session may
// drop them at any time.
//
// A marker goes through two stages, each with its own `concurrency` slots: load (is the marker
// already there? which table uuid to assert?), then commit. A row this run has just moved in
// the store skips the load on its first attempt: its epoch did not exist before that
// compare-and-set, so no marker can carry it or a higher one, and its commit needs no
// requirement (a set-properties applies to whatever metadata is current; a table missing in the
// target answers 404 as its load would). Every retry, and every row an earlier run moved (a
// resume: its marker may be there), loads first. Loads run ahead of the commit
// slots, so a commit slot is never held by a load: with L the commit latency, the commits
// alone set the pace (ceil(N / concurrency) x L), which a slot doing load + commit could not.
// `ahead` counts markers not yet holding a commit slot; the store moves its next batch only
// when fewer than LowWater() are ahead: less than one batch, and at most kAheadWaves waves of
// commits. So it never runs more than about two batches past the catalog (a run stopped by
// its deadline leaves little for the resume to check).
struct Transfer : std::enable_shared_from_this<Transfer> {
  Transfer(const TransferSpec& s, TransferReport& r)
      : spec(s), report(r), loads(s.concurrency), commits(s.concurrency) {}

  const TransferSpec& spec;
  TransferReport& report;
  InFlightLimit loads;
  InFlightLimit commits;
  CatalogClient* client = nullptr;
  CatalogSession* session = nullptr;
  int outstanding = 0;  // marker jobs not finished
  int ahead = 0;        // marker jobs not finished and not holding a commit slot

  void Fail(const TableIdent& table, std::string error) {
    Fail(TransferError{table.ToString(), std::move(error)});
  }
  void Fail(TransferError error) {
    ++report.failed;
    if (report.first_errors.size() < kMaxReportedErrors)
      report.first_errors.push_back(std::move(error));
  }

  struct Marker {
    TableIdent table;
    Epoch epoch = 0;
    int loads = 0;
    int commits = 0;
    int retries = 0;
    int load_failures = 0;
    bool after_unknown = false;  // the last commit's fate was unknown
    bool ahead = false;          // counted in Transfer::ahead
    std::string table_uuid;      // from the last load; empty before the first
    std::string idempotency_key;
    std::string last_error;
  };

  int LowWater() const {
    return std::max(spec.concurrency, static_cast<int>(std::min<std::size_t>(
                                          kAheadWaves * spec.concurrency, spec.batch_size)));
  }
  bool WantsMoreRows() const { return ahead < LowWater(); }

  void EnqueueMarker(TableIdent table, Epoch epoch, bool just_moved) {
    ++outstanding;
    auto m = std::make_shared<Marker>();
    m->table = std::move(table);
    m->epoch = epoch;
    if (just_moved)
      QueueCommit(m);
    else
      QueueLoad(m);
  }

  // Waits for a commit slot; the marker counts as ahead until it holds one.
  void QueueCommit(const std::shared_ptr<Marker>& m) {
    SetAhead(*m, true);
    auto self = shared_from_this();
    commits.Run([self, m](std::function<void()> release) { self->Commit(m, std::move(release)); });
  }

  void QueueLoad(const std::shared_ptr<Marker>& m) {
    SetAhead(*m, true);
    auto self = shared_from_this();
    loads.Run([self, m](std::function<void()> release) { self->Load(m, std::move(release)); });
  }

  // `ahead` follows each marker's own flag, so no path can count a marker twice.
  void SetAhead(Marker& m, bool on) {
    if (m.ahead == on) return;
    m.ahead = on;
    ahead += on ? 1 : -1;
  }

  void Finish(const std::shared_ptr<Marker>& m) {
    SetAhead(*m, false);
    --outstanding;
  }

  void Load(std::shared_ptr<Marker> m, std::function<void()> release) {
    ++m->loads;
    auto self = shared_from_this();
    // Only the properties and the uuid matter here: no snapshot history.
    client->LoadTable(
        m->table, std::nullopt,
        [self, m, release = std::move(release)](Result<LoadTableOutcome> r) {
          release();
          self->OnLoaded(m, std::move(r));
        },
        {}, SnapshotsMode::kRefs);
  }

  void Retry(const std::shared_ptr<Marker>& m, std::string why) {
    SetAhead(*m, true);  // not committed yet: the store waits for it like for any other
    m->last_error = std::move(why);
    if (m->load_failures >= kMaxMarkerAttempts || m->commits >= kMaxMarkerAttempts) {
      Fail(m->table, "marker not written in " + spec.target + " after " +
                         std::to_string(m->commits) + " commits and " +
                         std::to_string(m->load_failures) + " failed loads: " + m->last_error);
      Finish(m);
      return;
    }
    // A short, growing pause before reloading: a catalog answering 409 or 5xx is busy.
    auto pause = std::chrono::milliseconds(std::min(1000, 20 << std::min(m->retries++, 6)));
    auto self = shared_from_this();
    session->After(pause, [self, m] { self->QueueLoad(m); });
  }

  void OnLoaded(const std::shared_ptr<Marker>& m, Result<LoadTableOutcome> r) {
    if (!r.ok()) {
      if (r.status().code() == StatusCode::kNotFound) {
        Fail(m->table, "not in " + spec.target + "'s catalog");
        Finish(m);
        return;
      }
      ++m->load_failures;
      Retry(m, "load: " + r.status().ToString());
      return;
    }
    const TableSnapshotView& view = r->table;
    auto have = MarkerEpoch(view);
    if (have && (*have > m->epoch || (*have == m->epoch && MarkerOwner(view) == spec.target))) {
      if (m->after_unknown) {
        ++report.markers_verified_after_unknown;
        ++report.markers_written;
      } else if (m->commits == 0) {
        ++report.markers_present;
      } else {
        ++report.markers_written;
      }
      Finish(m);
      return;
    }
    if (have && *have == m->epoch) {
      Fail(m->table, "catalog marker at epoch " + std::to_string(*have) + " names " +
                         MarkerOwner(view) + ", not " + spec.target);
      Finish(m);
      return;
    }
    m->table_uuid = view.table_uuid;
    QueueCommit(m);
  }

  void Commit(const std::shared_ptr<Marker>& m, std::function<void()> release) {
    SetAhead(*m, false);
    TableCommit commit;
    commit.table = m->table;
    if (!m->table_uuid.empty()) commit.requirements.push_back(AssertTableUuid{m->table_uuid});
    commit.updates.push_back(SetPropertiesUpdate{
        {{kOwnerMarkerProperty, spec.target}, {kEpochMarkerProperty, std::to_string(m->epoch)}}});
    // Same key only when re-sending a commit whose fate is unknown; after a definite
    // failure the server remembers the 4xx under the old key.
    commit.idempotency_key = m->after_unknown ? m->idempotency_key : "";
    ++m->commits;
    report.commits_sent = true;
    auto self = shared_from_this();
    client->CommitTable(std::move(commit),
                        [self, m, release = std::move(release)](Result<CommitOutcome> c) {
                          release();
                          self->OnCommitted(m, std::move(c));
                        });
  }

  void OnCommitted(const std::shared_ptr<Marker>& m, Result<CommitOutcome> c) {
    if (c.ok() && c->kind == CommitOutcome::Kind::kCommitted) {
      ++report.markers_written;
      Finish(m);
      return;
    }
    if (c.ok()) {  // kStateUnknown: reload and look before any retry
      m->after_unknown = true;
      m->idempotency_key = c->idempotency_key;
      Retry(m, "commit state unknown: " + c->detail);
      return;
    }
    m->after_unknown = false;
    if (c.status().code() == StatusCode::kConflict) ++report.conflicts_retried;
    Retry(m, "commit: " + c.status().ToString());
  }
};

}  // namespace

std::string TransferReport::ToJson(const TransferSpec& spec) const {
  nlohmann::json errors = nlohmann::json::array();
  for (const auto& e : first_errors) errors.push_back({{"table", e.table}, {"error", e.error}});
  nlohmann::json j{{"scope", spec.scope.text},
                   {"from", spec.source},
                   {"to", spec.target},
                   {"failover_id", spec.failover_id},
                   {"moved", moved},
                   {"already_moved", already_moved},
                   {"markers_written", markers_written},
                   {"markers_present", markers_present},
                   {"markers_verified_after_unknown", markers_verified_after_unknown},
                   {"conflicts_retried", conflicts_retried},
                   {"failed", failed},
                   {"batches", batches},
                   {"expired", expired},
                   {"first_errors", errors}};
  if (store_error) j["store_error"] = store_error->ToString();
  return DumpJson(j);
}

TransferReport TransferOwnership(const TransferSpec& requested, const ActionEnv& env,
                                 const ActionContext& ctx) {
  TransferReport report;
  if (env.store == nullptr) {
    report.store_error = Status::FailedPrecondition("no state store is configured for actions");
    return report;
  }
  StateStore& store = *env.store;
  // A store that bounds its transactions (etcd's --max-txn-ops) gets batches it can take.
  TransferSpec spec = requested;
  if (const std::size_t most = store.MaxOwnershipBatch(); most != 0 && spec.batch_size > most)
    spec.batch_size = most;
  auto transfer = std::make_shared<Transfer>(spec, report);
  CatalogSession session(env);  // after `transfer`: dropped callbacks never outlive it
  transfer->session = &session;
  if (spec.write_catalog_properties) {
    auto client = session.Client(spec.target);
    if (!client.ok()) {
      report.store_error = client.status();
      return report;
    }
    transfer->client = *client;
  }
  auto enqueue = [&](const Ownership& row, bool just_moved) {
    if (spec.write_catalog_properties) transfer->EnqueueMarker(row.table, row.epoch, just_moved);
  };

  // Rows an earlier run of this failover moved: markers may still be missing.
  ScopeOwnershipCursor done_rows(store, spec.scope, spec.target, spec.failover_id);
  while (true) {
    auto rows = done_rows.Next(spec.batch_size);
    if (!rows.ok()) {
      report.store_error = rows.status();
      return report;
    }
    if (rows->empty()) break;
    for (const auto& row : *rows) {
      ++report.already_moved;
      enqueue(row, false);
    }
  }

  ScopeOwnershipCursor source_rows(store, spec.scope, spec.source, spec.only_failover_id);
  // At most one store batch in flight, on a worker thread; its markers are enqueued here, on
  // the session's thread, once it is durable.
  std::future<BatchMove> batch;
  auto batch_done = [&] {
    return batch.valid() && batch.wait_for(std::chrono::seconds(0)) == std::future_status::ready;
  };
  auto apply_batch = [&] {
    BatchMove done = batch.get();
    report.batches += done.transactions;
    for (const auto& row : done.moved) {
      ++report.moved;
      enqueue(row, true);
    }
    for (const auto& row : done.already) {
      ++report.already_moved;
      enqueue(row, false);
    }
    for (auto& failure : done.failed) transfer->Fail(std::move(failure));
    if (!done.status.ok()) report.store_error = done.status;
  };
  auto want_batch = [&] {
    return !batch.valid() && !source_rows.exhausted() && transfer->WantsMoreRows();
  };
  while (true) {
    if (batch_done()) {
      apply_batch();
      if (report.store_error) break;
    }
    if (ctx.expired()) {
      report.expired = true;
      break;
    }
    if (want_batch()) {
      auto rows = source_rows.Next(spec.batch_size);
      if (!rows.ok()) {
        report.store_error = rows.status();
        break;
      }
      if (rows->empty()) continue;  // exhausted now
      // The worker wakes the session when it is done: with every commit slot idle, the
      // session would otherwise notice only at the end of its 50 ms slice.
      batch =
          std::async(std::launch::async, [&store, &spec, &ctx, &session, rows = std::move(*rows),
                                          before = report.batches]() mutable {
            BatchMove done = MoveOwnershipBatch(store, spec, ctx, std::move(rows), before);
            session.Wake();
            return done;
          });
      continue;
    }
    if (!batch.valid() && transfer->outstanding == 0) break;  // every row moved and marked
    if (transfer->outstanding == 0) {
      batch.wait_for(std::chrono::milliseconds(20));  // only the store is working
      continue;
    }
    session.RunUntil(ctx,
                     [&] { return transfer->outstanding == 0 || batch_done() || want_batch(); });
  }
  // A batch still in flight is waited for: its rows may have moved, and the report says so.
  if (batch.valid()) apply_batch();
  if (report.store_error && !report.expired) {
    // Let the markers of the batches already moved finish; they are part of the effect.
    session.RunUntil(ctx, [&] { return transfer->outstanding == 0; });
  }
  if (transfer->outstanding > 0) {
    report.expired = true;
    report.failed += transfer->outstanding;
    session.Abandon();
  }
  return report;
}

}  // namespace icewarden
