// canary_commit: proves the write path. Commits set-properties icewarden.canary=<now> to the
// canary table, guarded by assert-table-uuid, so a commit can only land on the table that
// was loaded (a dropped and re-created canary fails instead of being written blindly).
// The uuid comes from a load on the first check and is reused until a commit conflicts.
// Off unless the spec says allow_writes: every check is a real commit, one more snapshot
// of metadata on the canary table.
#include <utility>

#include "health/catalog_client.h"
#include "health/probe_attempt.h"
#include "health/probe_kinds.h"

namespace icewarden {
namespace {

// Shared with in-flight callbacks: they may finish after the probe is destroyed, and
// touch only this (and the catalog client and clock, which outlive every probe).
struct CanaryState {
  CanaryState(const Clock& c, CatalogClient& cat, TableIdent t)
      : clock(c), catalog(cat), table(std::move(t)) {}
  const Clock& clock;
  CatalogClient& catalog;
  TableIdent table;
  std::string table_uuid;  // empty: load before committing
};

void Commit(const std::shared_ptr<CanaryState>& state,
            const std::shared_ptr<ProbeAttempt>& attempt) {
  TableCommit commit;
  commit.table = state->table;
  commit.requirements = {AssertTableUuid{state->table_uuid}};
  commit.updates = {SetPropertiesUpdate{{{kCanaryProperty, FormatUnixMillis(state->clock.Now())}}}};
  state->catalog.CommitTable(
      std::move(commit),
      [attempt, state, what = "commit to " + state->table.ToString()](Result<CommitOutcome> r) {
        if (!r.ok()) {
          // 409: the uuid no longer matches (or another requirement failed); reload next time.
          if (r.status().code() == StatusCode::kConflict) state->table_uuid.clear();
          return attempt->Fail(r.status(), what);
        }
        if (r->kind == CommitOutcome::Kind::kStateUnknown) {
          // A 500/502/504 is an answer; a connection lost after sending may be silence.
          if (r->reply != PeerReply::kSilent) attempt->NoteAnswer(r->reply == PeerReply::kUnparsed);
          return attempt->Fail("commit state unknown: " + r->detail);
        }
        attempt->NoteAnswer();
        attempt->Pass();
      },
      CallOptions{attempt->Remaining()});
}

class CanaryCommitProbe final : public Probe {
 public:
  CanaryCommitProbe(Timers& timers, const Clock& clock, CatalogClient& catalog, TableIdent table)
      : kind_(kCanaryCommitProbe),
        timers_(timers),
        state_(std::make_shared<CanaryState>(clock, catalog, std::move(table))) {}

  const std::string& kind() const override { return kind_; }

  void Check(std::chrono::milliseconds deadline, std::function<void(ProbeResult)> done) override {
    auto attempt = ProbeAttempt::Start(timers_, kind_, deadline, std::move(done));
    if (!state_->table_uuid.empty()) return Commit(state_, attempt);
    state_->catalog.LoadTable(
        state_->table, std::nullopt,
        [attempt, state = state_](Result<LoadTableOutcome> r) {
          const std::string what = "load table " + state->table.ToString();
          if (!r.ok()) return attempt->Fail(r.status(), what);
          // Heard from the catalog: a commit that then times out leaves the check answered.
          attempt->NoteAnswer();
          if (r->table.table_uuid.empty())
            return attempt->Fail(what + ": no table-uuid in the answer");
          state->table_uuid = r->table.table_uuid;
          if (attempt->finished()) return;  // the deadline passed; do not commit any more
          Commit(state, attempt);
        },
        CallOptions{attempt->Remaining()}, SnapshotsMode::kRefs);  // only the uuid is needed
  }

 private:
  std::string kind_;
  Timers& timers_;
  std::shared_ptr<CanaryState> state_;
};

}  // namespace

Result<std::unique_ptr<Probe>> MakeCanaryCommitProbe(const ProbeSpec& spec,
                                                     const ProbeContext& ctx) {
  if (!spec.table) {
    return Status::InvalidArgument("canary_commit probe for region " + spec.region +
                                   " needs a canary table");
  }
  if (!spec.allow_writes) {
    return Status::InvalidArgument("canary_commit probe for region " + spec.region + " writes to " +
                                   spec.table->ToString() + "; it runs only with allow_writes set");
  }
  return std::unique_ptr<Probe>(
      std::make_unique<CanaryCommitProbe>(ctx.timers, ctx.clock, ctx.catalog, *spec.table));
}

}  // namespace icewarden
