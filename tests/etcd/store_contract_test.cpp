// The StateStore and DrillStore contract for both backends (store_contract_fixture.h):
// regions, the audit log, failovers, the step journal, webhook deliveries, drill runs, and the
// store's lifetime (reopen, read-only, two stores on one record). Ownership is in
// store_contract_ownership_test.cpp.
#include <atomic>
#include <thread>

#include "tests/etcd/store_contract_fixture.h"

namespace icewarden::testing {
namespace {

TEST_P(StoreContractTest, RegionsRoundTripOrderedByName) {
  Region east = NamedRegion("us-east-1");
  east.health = RegionHealth::kDegraded;
  east.fenced = true;
  east.consecutive_failures = 2;
  east.reason = "catalog timeouts";
  east.since = 1234;
  Region west = NamedRegion("eu-west-1");
  west.maintenance = true;
  west.consecutive_successes = 7;
  ASSERT_TRUE(store_->PutRegion(east, Why("region.health", "us-east-1")).ok());
  ASSERT_TRUE(store_->PutRegion(west, Why("region.health", "eu-west-1")).ok());

  Result<std::optional<Region>> got = store_->GetRegion("us-east-1");
  ASSERT_TRUE(got.ok() && got->has_value());
  EXPECT_EQ((*got)->health, RegionHealth::kDegraded);
  EXPECT_TRUE((*got)->fenced);
  EXPECT_FALSE((*got)->maintenance);
  EXPECT_EQ((*got)->consecutive_failures, 2);
  EXPECT_EQ((*got)->reason, "catalog timeouts");
  EXPECT_EQ((*got)->since, 1234);

  east.health = RegionHealth::kUnreachable;
  ASSERT_TRUE(store_->PutRegion(east, Why("region.health", "us-east-1")).ok());
  Result<std::vector<Region>> all = store_->ListRegions();
  ASSERT_TRUE(all.ok());
  ASSERT_EQ(all->size(), 2u);
  EXPECT_EQ((*all)[0].name, "eu-west-1");
  EXPECT_TRUE((*all)[0].maintenance);
  EXPECT_EQ((*all)[0].consecutive_successes, 7);
  EXPECT_EQ((*all)[1].health, RegionHealth::kUnreachable);

  Result<std::optional<Region>> missing = store_->GetRegion("ap-south-1");
  ASSERT_TRUE(missing.ok());
  EXPECT_FALSE(missing->has_value());
  EXPECT_EQ(AllAudit().size(), 3u);
}

TEST_P(StoreContractTest, EveryMutationAppendsItsAuditEventWithIncreasingSeq) {
  AuditEvent dated = Why("region.health", "r1");
  dated.at = 42;
  dated.detail_json = R"({"rounds":3})";
  ASSERT_TRUE(store_->PutRegion(NamedRegion("r1"), dated).ok());
  clock_->Advance(std::chrono::seconds(1));
  std::vector<OwnershipChange> claim{Change("s.t", 0, "r1")};
  ASSERT_TRUE(store_->CompareAndSetOwnership(claim, Why("ownership.set", "s.t")).ok());
  Failover f = SampleFailover("fo-1");
  ASSERT_TRUE(store_->CreateFailover(f, Why("failover.propose", "fo-1")).ok());
  f.phase = FailoverPhase::kApproved;
  ASSERT_TRUE(store_->UpdateFailover(f, 1, Why("failover.approve", "fo-1")).ok());
  AuditEvent empty_detail = Why("note", "fo-1");
  empty_detail.detail_json = "";
  ASSERT_TRUE(store_->AppendAudit(empty_detail).ok());

  std::vector<AuditEvent> events = AllAudit();
  ASSERT_EQ(events.size(), 5u);
  const char* actions[] = {"region.health", "ownership.set", "failover.propose", "failover.approve",
                           "note"};
  for (std::size_t i = 0; i < events.size(); ++i) {
    EXPECT_EQ(events[i].action, actions[i]);
    if (i > 0) {
      EXPECT_GT(events[i].seq, events[i - 1].seq);
    }
  }
  EXPECT_EQ(events[0].at, 42) << "a caller's time is kept";
  EXPECT_EQ(events[0].detail_json, R"({"rounds":3})");
  EXPECT_EQ(events[1].at, clock_->Now()) << "at = 0 means now";
  EXPECT_EQ(events[1].actor, "alice");
  EXPECT_EQ(events[1].source, "cli");
  EXPECT_EQ(events[4].detail_json, "{}");

  AuditQuery about_query;
  about_query.after_seq = events[2].seq;
  about_query.limit = 0;
  about_query.target = "fo-1";
  Result<std::vector<AuditEvent>> about = store_->ListAudit(about_query);
  ASSERT_TRUE(about.ok());
  ASSERT_EQ(about->size(), 2u);
  EXPECT_EQ((*about)[0].action, "failover.approve");
  AuditQuery two;
  two.limit = 2;
  Result<std::vector<AuditEvent>> first_two = store_->ListAudit(two);
  ASSERT_TRUE(first_two.ok());
  EXPECT_EQ(first_two->size(), 2u);
  Result<std::int64_t> last = store_->LastAuditSeq();
  ASSERT_TRUE(last.ok());
  EXPECT_EQ(*last, events.back().seq) << "the newest event's seq";

  AuditEvent bad = Why("x", "y");
  bad.detail_json = "{not json";
  EXPECT_EQ(store_->AppendAudit(bad).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(store_->CompareAndSetOwnership(claim, bad).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(AllAudit().size(), 5u);
}

TEST_P(StoreContractTest, FailoverCreateAndUpdateWithVersionCompareAndSet) {
  Failover f = SampleFailover("fo-1");
  ASSERT_TRUE(store_->CreateFailover(f, Why("failover.propose", "fo-1")).ok());
  EXPECT_EQ(store_->CreateFailover(f, Why("failover.propose", "fo-1")).code(),
            StatusCode::kConflict);

  Result<std::optional<Failover>> got = store_->GetFailover("fo-1");
  ASSERT_TRUE(got.ok() && got->has_value());
  EXPECT_EQ((*got)->version, 1);
  EXPECT_EQ((*got)->kind, FailoverKind::kSwitchover);
  EXPECT_EQ((*got)->scope, "namespace:eu.*");
  EXPECT_EQ((*got)->from, "us-east-1");
  EXPECT_EQ((*got)->to, "eu-west-1");
  EXPECT_EQ((*got)->created_at, 1000);
  EXPECT_FALSE((*got)->fencing.has_value());
  EXPECT_FALSE((*got)->accept_data_loss.has_value());

  Failover next = **got;
  next.phase = FailoverPhase::kFenced;
  next.approvals = {{"carol", "looks right", 2000}, {"dave", "second pair of eyes", 2100}};
  next.fencing = FencingConfirmation{FencingKind::kEvidenceUnreachable, "probe-quorum",
                                     "3/3 vantage points", 2500};
  next.accept_data_loss = "region is gone";
  next.last_reason = "fenced by quorum";
  next.created_at = 0;  // ignored: creation time never changes
  next.version = 99;    // ignored: the store owns the version
  clock_->Set(3000);
  ASSERT_TRUE(store_->UpdateFailover(next, 1, Why("failover.fence", "fo-1")).ok());

  got = store_->GetFailover("fo-1");
  ASSERT_TRUE(got.ok() && got->has_value());
  const Failover& stored = **got;
  EXPECT_EQ(stored.version, 2);
  EXPECT_EQ(stored.phase, FailoverPhase::kFenced);
  ASSERT_EQ(stored.approvals.size(), 2u);
  EXPECT_EQ(stored.approvals[1].by, "dave");
  EXPECT_EQ(stored.approvals[1].reason, "second pair of eyes");
  EXPECT_EQ(stored.approvals[1].at, 2100);
  ASSERT_TRUE(stored.fencing.has_value());
  EXPECT_EQ(stored.fencing->kind, FencingKind::kEvidenceUnreachable);
  EXPECT_EQ(stored.fencing->reason, "3/3 vantage points");
  EXPECT_EQ(stored.fencing->at, 2500);
  EXPECT_EQ(stored.accept_data_loss, "region is gone");
  EXPECT_EQ(stored.last_reason, "fenced by quorum");
  EXPECT_EQ(stored.created_at, 1000);
  EXPECT_EQ(stored.updated_at, 3000);

  // A writer that read version 1 lost the race.
  next.phase = FailoverPhase::kAborted;
  Status stale = store_->UpdateFailover(next, 1, Why("failover.abort", "fo-1"));
  EXPECT_EQ(stale.code(), StatusCode::kConflict) << stale.ToString();
  EXPECT_NE(stale.message().find("version 2"), std::string::npos) << stale.message();
  got = store_->GetFailover("fo-1");
  EXPECT_EQ((*got)->phase, FailoverPhase::kFenced);

  Failover ghost = SampleFailover("fo-404");
  EXPECT_EQ(store_->UpdateFailover(ghost, 1, Why("failover.abort", "fo-404")).code(),
            StatusCode::kNotFound);
  Result<std::optional<Failover>> none = store_->GetFailover("fo-404");
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->has_value());
}

TEST_P(StoreContractTest, ActiveFailoversExcludeTerminalPhasesOldestFirst) {
  const std::pair<const char*, FailoverPhase> phases[] = {
      {"fo-1", FailoverPhase::kProposed},       {"fo-2", FailoverPhase::kCompleted},
      {"fo-3", FailoverPhase::kNeedsAttention}, {"fo-4", FailoverPhase::kAborted},
      {"fo-5", FailoverPhase::kRolledBack},     {"fo-6", FailoverPhase::kFencing}};
  UnixMillis t = 1000;
  for (const auto& [id, phase] : phases) {
    Failover f = SampleFailover(id);
    f.created_at = t += 10;
    ASSERT_TRUE(store_->CreateFailover(f, Why("failover.propose", id)).ok());
    f.phase = phase;
    ASSERT_TRUE(store_->UpdateFailover(f, 1, Why("failover.move", id)).ok());
  }
  Result<std::vector<Failover>> active = store_->ListActiveFailovers();
  ASSERT_TRUE(active.ok());
  std::vector<std::string> ids;
  for (const Failover& f : *active) ids.push_back(f.id);
  EXPECT_EQ(ids, (std::vector<std::string>{"fo-1", "fo-3", "fo-6"}));

  Result<std::vector<Failover>> newest = store_->ListFailovers(2);
  ASSERT_TRUE(newest.ok());
  ASSERT_EQ(newest->size(), 2u);
  EXPECT_EQ((*newest)[0].id, "fo-6");
  EXPECT_EQ((*newest)[1].id, "fo-5");
  Result<std::vector<Failover>> all = store_->ListFailovers(0);
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(all->size(), 6u);
}

TEST_P(StoreContractTest, StepsKeepFirstRecordedOrderAndUpsert) {
  ASSERT_TRUE(store_->CreateFailover(SampleFailover("fo-1"), Why("failover.propose", "fo-1")).ok());
  // Ids chosen so that alphabetical order differs from recorded order.
  for (const char* id : {"zz-dns", "aa-fence", "mm-verify"}) {
    StepRecord s = Step("fo-1", id);
    s.section = "fence";
    s.action = "dns";
    s.state = StepState::kRunning;
    ASSERT_TRUE(store_->PutStep(s).ok()) << id;
  }
  StepRecord done = Step("fo-1", "aa-fence");
  done.section = "fence";
  done.action = "fence.http";
  done.state = StepState::kSucceeded;
  done.attempt = 2;
  done.reason = "fenced";
  done.result_json = R"({"status":204})";
  done.started_at = 10;
  done.finished_at = 20;
  ASSERT_TRUE(store_->PutStep(done).ok());

  Result<std::vector<StepRecord>> steps = store_->ListSteps("fo-1");
  ASSERT_TRUE(steps.ok());
  ASSERT_EQ(steps->size(), 3u);
  EXPECT_EQ((*steps)[0].step_id, "zz-dns");
  EXPECT_EQ((*steps)[1].step_id, "aa-fence");
  EXPECT_EQ((*steps)[2].step_id, "mm-verify");
  EXPECT_EQ((*steps)[1].state, StepState::kSucceeded);
  EXPECT_EQ((*steps)[1].attempt, 2);
  EXPECT_EQ((*steps)[1].action, "fence.http");
  EXPECT_EQ((*steps)[1].result_json, R"({"status":204})");
  EXPECT_EQ((*steps)[1].finished_at, 20);
  EXPECT_EQ((*steps)[0].result_json, "{}");

  StepRecord orphan = Step("fo-404", "x");
  EXPECT_EQ(store_->PutStep(orphan).code(), StatusCode::kNotFound);
  Result<std::vector<StepRecord>> none = store_->ListSteps("fo-404");
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());
}

TEST_P(StoreContractTest, ReopeningKeepsEverything) {
  ASSERT_TRUE(store_->PutRegion(NamedRegion("east", "up"), Why("r", "east")).ok());
  std::vector<OwnershipChange> claim{Change("s.t", 0, "east")};
  ASSERT_TRUE(store_->CompareAndSetOwnership(claim, Why("ownership.set", "s.t")).ok());
  ASSERT_TRUE(store_->CreateFailover(SampleFailover("fo-1"), Why("failover.propose", "fo")).ok());
  ASSERT_TRUE(store_->PutStep(Step("fo-1", "s1")).ok());

  Reopen();
  Reopen();
  Result<std::optional<Region>> region = store_->GetRegion("east");
  ASSERT_TRUE(region.ok() && region->has_value());
  EXPECT_EQ((*region)->reason, "up");
  EXPECT_EQ(MustGet("s.t").epoch, 1);
  Result<std::optional<Failover>> f = store_->GetFailover("fo-1");
  ASSERT_TRUE(f.ok() && f->has_value());
  EXPECT_EQ((*f)->proposed_by, "bob");
  Result<std::vector<StepRecord>> steps = store_->ListSteps("fo-1");
  ASSERT_TRUE(steps.ok());
  EXPECT_EQ(steps->size(), 1u);
  EXPECT_EQ(AllAudit().size(), 3u);
  // The next seq continues after the reopen.
  ASSERT_TRUE(store_->AppendAudit(Why("note", "x")).ok());
  std::vector<AuditEvent> events = AllAudit();
  EXPECT_GT(events.back().seq, events[events.size() - 2].seq);
}

TEST_P(StoreContractTest, ReadOnlyStoreReadsButRefusesWrites) {
  std::vector<OwnershipChange> claim{Change("s.t", 0, "east")};
  ASSERT_TRUE(store_->CompareAndSetOwnership(claim, Why("ownership.set", "s.t")).ok());
  Result<std::unique_ptr<StateStore>> ro = Open(/*read_only=*/true);
  ASSERT_TRUE(ro.ok()) << ro.status().ToString();
  Result<std::optional<Ownership>> o = (*ro)->GetOwnership(T("s.t"));
  ASSERT_TRUE(o.ok() && o->has_value());
  EXPECT_EQ((*o)->owner, "east");
  std::vector<OwnershipChange> move{Change("s.t", 1, "west")};
  EXPECT_EQ((*ro)->CompareAndSetOwnership(move, Why("ownership.set", "s.t")).code(),
            StatusCode::kFailedPrecondition);
  EXPECT_EQ((*ro)->AppendAudit(Why("x", "y")).code(), StatusCode::kFailedPrecondition);
}

TEST_P(StoreContractTest, WebhookDeliveriesAreRecordedOnceInArrivalOrder) {
  auto delivery = [](std::string key, std::string source, std::string alert) {
    WebhookDelivery d;
    d.key = std::move(key);
    d.source = std::move(source);
    d.alert = std::move(alert);
    d.status = "firing";
    d.effect = "propose_failover";
    d.outcome = "proposed";
    return d;
  };
  clock_->Set(5000);
  // Keys in the opposite of arrival order: the listing is by arrival, not by key.
  ASSERT_TRUE(
      store_->RecordWebhookDelivery(delivery("z", "alertmanager", "a1"), Why("w", "a1")).ok());
  ASSERT_TRUE(
      store_->RecordWebhookDelivery(delivery("m", "alertmanager", "a2"), Why("w", "a2")).ok());
  ASSERT_TRUE(
      store_->RecordWebhookDelivery(delivery("a", "alertmanager", "a1"), Why("w", "a1")).ok());
  Status again = store_->RecordWebhookDelivery(delivery("z", "alertmanager", "a1"), Why("w", "a1"));
  EXPECT_EQ(again.code(), StatusCode::kConflict) << again.ToString();
  EXPECT_EQ(AllAudit().size(), 3u) << "a re-delivery writes nothing";

  Result<std::optional<WebhookDelivery>> got = store_->GetWebhookDelivery("z");
  ASSERT_TRUE(got.ok() && got->has_value());
  EXPECT_EQ((*got)->effect, "propose_failover");
  EXPECT_EQ((*got)->received_at, 5000) << "received_at 0 means now";
  Result<std::vector<WebhookDelivery>> a1 = store_->ListWebhookDeliveries("alertmanager", "a1");
  ASSERT_TRUE(a1.ok());
  ASSERT_EQ(a1->size(), 2u);
  EXPECT_EQ((*a1)[0].key, "z");
  EXPECT_EQ((*a1)[1].key, "a");
  Result<std::vector<WebhookDelivery>> all = store_->ListWebhookDeliveries("", "");
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(all->size(), 3u);
  Result<std::optional<WebhookDelivery>> none = store_->GetWebhookDelivery("nope");
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->has_value());
}

DrillRun SampleRun(std::string id, std::string drill, UnixMillis slot) {
  DrillRun r;
  r.id = std::move(id);
  r.drill = std::move(drill);
  r.mode = "shadow";
  r.trigger = slot != 0 ? "schedule" : "operator:alice";
  r.scheduled_for = slot;
  r.scope = "namespace:eu.*";
  return r;
}

TEST_P(StoreContractTest, DrillRunsClaimEachSlotOnceAndKeepTheirJournalAndNotes) {
  DrillStore& d = drills();
  ASSERT_TRUE(d.CreateDrillRun(SampleRun("dr-1", "weekly", 7000), Why("drill.start", "dr-1")).ok());
  ASSERT_TRUE(d.CreateDrillRun(SampleRun("dr-2", "weekly", 9000), Why("drill.start", "dr-2")).ok());
  ASSERT_TRUE(d.CreateDrillRun(SampleRun("dr-3", "other", 0), Why("drill.start", "dr-3")).ok());
  Status slot = d.CreateDrillRun(SampleRun("dr-4", "weekly", 7000), Why("drill.start", "dr-4"));
  EXPECT_EQ(slot.code(), StatusCode::kConflict) << slot.ToString();
  EXPECT_EQ(d.CreateDrillRun(SampleRun("dr-1", "weekly", 0), Why("drill.start", "dr-1")).code(),
            StatusCode::kConflict);
  Result<std::optional<DrillRun>> dr4 = d.GetDrillRun("dr-4");
  ASSERT_TRUE(dr4.ok());
  EXPECT_FALSE(dr4->has_value()) << "a refused slot creates nothing";
  EXPECT_EQ(*d.LastScheduledSlot("weekly"), 9000);
  EXPECT_EQ(*d.LastScheduledSlot("never"), 0);

  Result<std::optional<DrillRun>> run = d.GetDrillRun("dr-1");
  ASSERT_TRUE(run.ok() && run->has_value());
  EXPECT_EQ((*run)->version, 1);
  DrillRun next = **run;
  next.phase = DrillPhase::kFinished;
  next.verdict = "passed";
  ASSERT_TRUE(d.UpdateDrillRun(next, 1, Why("drill.finish", "dr-1")).ok());
  EXPECT_EQ(d.UpdateDrillRun(next, 1, Why("drill.finish", "dr-1")).code(), StatusCode::kConflict);
  EXPECT_EQ(d.UpdateDrillRun(SampleRun("dr-9", "weekly", 0), 1, Why("x", "dr-9")).code(),
            StatusCode::kConflict);
  run = d.GetDrillRun("dr-1");
  EXPECT_EQ((*run)->version, 2);
  EXPECT_EQ((*run)->verdict, "passed");
  EXPECT_EQ((*run)->phase, DrillPhase::kFinished);

  Result<std::vector<DrillRun>> weekly = d.ListDrillRuns("weekly", 0);
  ASSERT_TRUE(weekly.ok());
  ASSERT_EQ(weekly->size(), 2u);
  EXPECT_EQ((*weekly)[0].id, "dr-2") << "newest first";
  Result<std::vector<DrillRun>> newest = d.ListDrillRuns("", 1);
  ASSERT_TRUE(newest.ok());
  ASSERT_EQ(newest->size(), 1u);
  EXPECT_EQ((*newest)[0].id, "dr-3");

  for (auto [id, ordinal] : {std::pair{"b-check", 2}, std::pair{"a-dns", 1}, std::pair{"c", 2}}) {
    DrillStep s;
    s.run_id = "dr-1";
    s.step_id = id;
    s.ordinal = ordinal;
    s.state = "running";
    ASSERT_TRUE(d.PutDrillStep(s).ok());
  }
  DrillStep done;
  done.run_id = "dr-1";
  done.step_id = "a-dns";
  done.ordinal = 1;
  done.state = "succeeded";
  done.before_json = R"({"cname":"east."})";
  ASSERT_TRUE(d.PutDrillStep(done).ok());
  Result<std::vector<DrillStep>> steps = d.ListDrillSteps("dr-1");
  ASSERT_TRUE(steps.ok());
  std::vector<std::string> ids;
  for (const DrillStep& s : *steps) ids.push_back(s.step_id);
  EXPECT_EQ(ids, (std::vector<std::string>{"a-dns", "b-check", "c"}));
  EXPECT_EQ((*steps)[0].state, "succeeded");
  EXPECT_EQ((*steps)[0].before_json, R"({"cname":"east."})");

  clock_->Set(12345);
  ASSERT_TRUE(
      d.AddDrillNote({"dr-1", "alice", "dns took 40 s", 0}, Why("drill.note", "dr-1")).ok());
  ASSERT_TRUE(d.AddDrillNote({"dr-1", "bob", "agreed", 20000}, Why("drill.note", "dr-1")).ok());
  EXPECT_EQ(d.AddDrillNote({"dr-9", "bob", "lost", 0}, Why("drill.note", "dr-9")).code(),
            StatusCode::kNotFound);
  EXPECT_EQ(d.AddDrillNote({"dr-1", "bob", "", 0}, Why("drill.note", "dr-1")).code(),
            StatusCode::kInvalidArgument);
  Result<std::vector<DrillNote>> notes = d.ListDrillNotes("dr-1");
  ASSERT_TRUE(notes.ok());
  ASSERT_EQ(notes->size(), 2u);
  EXPECT_EQ((*notes)[0].text, "dns took 40 s");
  EXPECT_EQ((*notes)[0].at, 12345) << "at 0 means now";
  EXPECT_EQ((*notes)[1].by, "bob");
  // Three creations, one update, two notes; the refused ones wrote nothing.
  EXPECT_EQ(AllAudit().size(), 6u);
}

// Two daemons' worth of stores on one record (two connections to one file, two clients of one
// etcd): each sees the other's writes, a stale version loses, and the audit log stays one
// sequence without gaps or repeats.
TEST_P(StoreContractTest, TwoStoresOnOneRecordKeepOneAuditSequence) {
  Result<std::unique_ptr<StateStore>> other = Open();
  ASSERT_TRUE(other.ok()) << other.status().ToString();
  ASSERT_TRUE(store_->CreateFailover(SampleFailover("fo-1"), Why("failover.propose", "fo-1")).ok());
  Result<std::optional<Failover>> seen = (*other)->GetFailover("fo-1");
  ASSERT_TRUE(seen.ok() && seen->has_value());
  Failover f = **seen;
  f.phase = FailoverPhase::kApproved;
  ASSERT_TRUE((*other)->UpdateFailover(f, 1, Why("failover.approve", "fo-1")).ok());
  f.phase = FailoverPhase::kAborted;
  EXPECT_EQ(store_->UpdateFailover(f, 1, Why("failover.abort", "fo-1")).code(),
            StatusCode::kConflict);

  // Three writers racing for the one audit counter: each append lands, however often a writer
  // loses the race to one whose counter is already fresh (a bound on sends starved one of them).
  Result<std::unique_ptr<StateStore>> third = Open();
  ASSERT_TRUE(third.ok()) << third.status().ToString();
  constexpr int kAppends = 30;
  std::vector<std::thread> writers;
  for (StateStore* s : {store_.get(), other->get(), third->get()}) {
    writers.emplace_back([s] {
      for (int i = 0; i < kAppends; ++i) {
        Status appended = s->AppendAudit(Why("note", "x"));
        ASSERT_TRUE(appended.ok()) << appended.ToString();
      }
    });
  }
  for (std::thread& t : writers) t.join();
  std::vector<AuditEvent> events = AllAudit();
  ASSERT_EQ(events.size(), 2u + 3 * kAppends);
  for (std::size_t i = 1; i < events.size(); ++i) EXPECT_EQ(events[i].seq, events[i - 1].seq + 1);
  EXPECT_EQ(*(*other)->LastAuditSeq(), events.back().seq);
}

INSTANTIATE_TEST_SUITE_P(Backends, StoreContractTest,
                         ::testing::Values("sqlite", "etcd", "etcd_tls_auth"), BackendName);

}  // namespace
}  // namespace icewarden::testing
