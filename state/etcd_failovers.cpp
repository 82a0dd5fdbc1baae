// Failovers, the step journal and drill runs in the etcd store (etcd_store.h).
#include <algorithm>
#include <utility>

#include "state/etcd_records.h"
#include "state/etcd_store_internal.h"
#include "state/sqlite_records.h"

namespace icewarden {
namespace {

EtcdCompare Exists(std::string key) {
  return {std::move(key), EtcdCompare::Target::kVersion, EtcdCompare::Result::kGreater, 0, ""};
}

// Decodes every value of `kvs` into records, in the order given.
template <typename T>
Result<std::vector<T>> DecodeAll(const std::vector<EtcdKeyValue>& kvs) {
  std::vector<T> out(kvs.size());
  for (std::size_t i = 0; i < kvs.size(); ++i)
    if (Status s = etcd_records::Decode(kvs[i].key, kvs[i].value, out[i]); !s.ok()) return s;
  return out;
}

void ByCreation(std::vector<EtcdKeyValue>& kvs) {
  std::sort(kvs.begin(), kvs.end(), [](const EtcdKeyValue& a, const EtcdKeyValue& b) {
    return a.create_revision < b.create_revision;
  });
}

Status Applied(const Result<bool>& done) { return done.ok() ? Status::Ok() : done.status(); }

}  // namespace

// ---- Failovers ----------------------------------------------------------------------------

Status EtcdStore::CreateFailover(const Failover& failover, const AuditEvent& why) {
  std::lock_guard lock(mu_);
  if (failover.id.empty()) return Status::InvalidArgument("a failover needs an id");
  if (Status s = ValidateAudit(why); !s.ok()) return s;
  Failover stored = failover;
  const UnixMillis now = clock_->Now();
  if (stored.created_at == 0) stored.created_at = now;
  stored.updated_at = now;
  stored.version = 1;
  Write w;
  w.compares.push_back(Absent(Key("failovers", failover.id)));
  w.ops.push_back(PutOp(Key("failovers", failover.id), etcd_records::Encode(stored)));
  w.why = &why;
  auto done = Commit(w, "create failover " + failover.id);
  if (!done.ok()) return done.status();
  if (!*done) return Status::Conflict("failover " + failover.id + " already exists");
  return Status::Ok();
}

Status EtcdStore::UpdateFailover(const Failover& failover, std::int64_t expected_version,
                                 const AuditEvent& why) {
  std::lock_guard lock(mu_);
  if (Status s = ValidateAudit(why); !s.ok()) return s;
  const std::string key = Key("failovers", failover.id);
  for (;;) {
    auto kv = Get(key);
    if (!kv.ok()) return kv.status();
    if (!kv->has_value()) return Status::NotFound("no failover " + failover.id);
    Failover current;
    if (Status s = etcd_records::Decode(key, (*kv)->value, current); !s.ok()) return s;
    if (current.version != expected_version) {
      return Status::Conflict("failover " + failover.id + " is at version " +
                              std::to_string(current.version) + ", expected " +
                              std::to_string(expected_version) + ": someone changed it first");
    }
    Failover next = failover;
    next.created_at = current.created_at;  // it never changes after creation
    next.updated_at = clock_->Now();
    next.version = expected_version + 1;
    Write w;
    w.compares.push_back(Unchanged(key, (*kv)->mod_revision));
    w.ops.push_back(PutOp(key, etcd_records::Encode(next)));
    w.why = &why;
    auto done = Commit(w, "update failover " + failover.id);
    if (!done.ok()) return done.status();
    if (*done) return Status::Ok();
    // It moved after the read: the next read says to which version.
  }
}

Result<std::optional<Failover>> EtcdStore::GetFailover(const std::string& id) {
  std::lock_guard lock(mu_);
  return Read<Failover>(Key("failovers", id));
}

Result<std::vector<Failover>> EtcdStore::ListFailovers(std::size_t limit) {
  std::lock_guard lock(mu_);
  auto kvs = All("failovers");
  if (!kvs.ok()) return kvs.status();
  // SQLite's order: created_at, then insertion (here the key's create revision).
  ByCreation(*kvs);
  auto all = DecodeAll<Failover>(*kvs);
  if (!all.ok()) return all.status();
  std::stable_sort(all->begin(), all->end(), [](const Failover& a, const Failover& b) {
    return a.created_at < b.created_at;
  });
  std::reverse(all->begin(), all->end());
  if (limit != 0 && all->size() > limit) all->resize(limit);
  return all;
}

Result<std::vector<Failover>> EtcdStore::ListActiveFailovers() {
  std::lock_guard lock(mu_);
  auto kvs = All("failovers");
  if (!kvs.ok()) return kvs.status();
  ByCreation(*kvs);
  auto all = DecodeAll<Failover>(*kvs);
  if (!all.ok()) return all.status();
  std::vector<Failover> out;
  for (Failover& f : *all)
    if (!IsTerminal(f.phase)) out.push_back(std::move(f));
  std::stable_sort(out.begin(), out.end(), [](const Failover& a, const Failover& b) {
    return a.created_at < b.created_at;
  });
  return out;
}

// ---- Step journal -------------------------------------------------------------------------

Status EtcdStore::PutStep(const StepRecord& step) {
  std::lock_guard lock(mu_);
  if (Status s = ValidateStep(step); !s.ok()) return s;
  StepRecord stored = step;
  stored.result_json = std::string(JsonOrEmptyObject(step.result_json));
  Write w;
  w.compares.push_back(Exists(Key("failovers", step.failover_id)));
  // The key keeps its create revision across upserts: the journal order.
  w.ops.push_back(
      PutOp(Key("steps", step.failover_id + "/" + step.step_id), etcd_records::Encode(stored)));
  auto done = Commit(w, "journal step " + step.IdempotencyKey());
  if (!done.ok()) return done.status();
  if (!*done) {
    return Status::NotFound("cannot journal step " + step.step_id + ": no failover " +
                            step.failover_id);
  }
  return Status::Ok();
}

Result<std::vector<StepRecord>> EtcdStore::ListSteps(const std::string& failover_id) {
  std::lock_guard lock(mu_);
  auto kvs = All("steps/" + failover_id);
  if (!kvs.ok()) return kvs.status();
  ByCreation(*kvs);
  return DecodeAll<StepRecord>(*kvs);
}

// ---- Drill runs ---------------------------------------------------------------------------

Status EtcdStore::CreateDrillRun(const DrillRun& run, const AuditEvent& why) {
  std::lock_guard lock(mu_);
  if (run.id.empty() || run.drill.empty())
    return Status::InvalidArgument("a drill run needs an id and a drill");
  if (Status s = ValidateAudit(why); !s.ok()) return s;
  DrillRun stored = run;
  stored.version = 1;
  if (stored.result_json.empty()) stored.result_json = "{}";
  Write w;
  w.compares.push_back(Absent(Key("drills", run.id)));
  w.ops.push_back(PutOp(Key("drills", run.id), etcd_records::Encode(stored)));
  if (run.scheduled_for != 0) {
    // A slot is claimed once: the key of (drill, slot) is created with the run or not at all.
    const std::string slot = Key("drill_slots", run.drill + "/" + Padded(run.scheduled_for));
    w.compares.push_back(Absent(slot));
    w.ops.push_back(PutOp(slot, run.id));
  }
  w.why = &why;
  auto done = Commit(w, "create drill run " + run.id);
  if (!done.ok()) return done.status();
  if (!*done) {
    return Status::Conflict(run.scheduled_for != 0
                                ? "drill " + run.drill + " has a run for that slot already"
                                : "drill run " + run.id + " already exists");
  }
  return Status::Ok();
}

Status EtcdStore::UpdateDrillRun(const DrillRun& run, std::int64_t expected_version,
                                 const AuditEvent& why) {
  std::lock_guard lock(mu_);
  if (Status s = ValidateAudit(why); !s.ok()) return s;
  const std::string key = Key("drills", run.id);
  auto kv = Get(key);
  if (!kv.ok()) return kv.status();
  DrillRun current;
  if (kv->has_value()) {
    if (Status s = etcd_records::Decode(key, (*kv)->value, current); !s.ok()) return s;
  }
  if (!kv->has_value() || current.version != expected_version) {
    return Status::Conflict("drill run " + run.id + " is not at version " +
                            std::to_string(expected_version) + " (or does not exist)");
  }
  DrillRun next = run;
  next.version = expected_version + 1;
  if (next.result_json.empty()) next.result_json = "{}";
  Write w;
  w.compares.push_back(Unchanged(key, (*kv)->mod_revision));
  w.ops.push_back(PutOp(key, etcd_records::Encode(next)));
  w.why = &why;
  auto done = Commit(w, "update drill run " + run.id);
  if (!done.ok()) return done.status();
  if (!*done) {
    return Status::Conflict("drill run " + run.id + " is not at version " +
                            std::to_string(expected_version) + " (or does not exist)");
  }
  return Status::Ok();
}

Result<std::optional<DrillRun>> EtcdStore::GetDrillRun(const std::string& id) {
  std::lock_guard lock(mu_);
  return Read<DrillRun>(Key("drills", id));
}

Result<std::vector<DrillRun>> EtcdStore::ListDrillRuns(const std::string& drill,
                                                       std::size_t limit) {
  std::lock_guard lock(mu_);
  auto kvs = All("drills");
  if (!kvs.ok()) return kvs.status();
  ByCreation(*kvs);
  std::reverse(kvs->begin(), kvs->end());  // newest first
  std::vector<DrillRun> out;
  for (const EtcdKeyValue& kv : *kvs) {
    DrillRun r;
    if (Status s = etcd_records::Decode(kv.key, kv.value, r); !s.ok()) return s;
    if (!drill.empty() && r.drill != drill) continue;
    out.push_back(std::move(r));
    if (limit != 0 && out.size() == limit) break;
  }
  return out;
}

Result<UnixMillis> EtcdStore::LastScheduledSlot(const std::string& drill) {
  std::lock_guard lock(mu_);
  auto kvs = All("drill_slots/" + drill);
  if (!kvs.ok()) return kvs.status();
  if (kvs->empty()) return UnixMillis{0};
  const std::string& last = kvs->back().key;  // the padded slots sort numerically
  return static_cast<UnixMillis>(std::stoll(last.substr(last.rfind('/') + 1)));
}

Status EtcdStore::PutDrillStep(const DrillStep& step) {
  std::lock_guard lock(mu_);
  Write w;
  w.ops.push_back(
      PutOp(Key("drill_steps", step.run_id + "/" + step.step_id), etcd_records::Encode(step)));
  return Applied(Commit(w, "journal drill step " + step.step_id));
}

Result<std::vector<DrillStep>> EtcdStore::ListDrillSteps(const std::string& run_id) {
  std::lock_guard lock(mu_);
  auto kvs = All("drill_steps/" + run_id);
  if (!kvs.ok()) return kvs.status();
  auto steps = DecodeAll<DrillStep>(*kvs);
  if (!steps.ok()) return steps.status();
  std::sort(steps->begin(), steps->end(), [](const DrillStep& a, const DrillStep& b) {
    return std::tie(a.ordinal, a.step_id) < std::tie(b.ordinal, b.step_id);
  });
  return steps;
}

Status EtcdStore::AddDrillNote(const DrillNote& note, const AuditEvent& why) {
  std::lock_guard lock(mu_);
  if (note.text.empty()) return Status::InvalidArgument("a note needs text");
  if (Status s = ValidateAudit(why); !s.ok()) return s;
  DrillNote stored = note;
  if (stored.at == 0) stored.at = clock_->Now();
  Write w;
  w.compares.push_back(Exists(Key("drills", note.run_id)));
  w.why = &why;
  // The note's key takes the audit event's seq: unique, and in the order notes were added.
  w.with_seq = [&](std::int64_t seq) {
    return std::vector<EtcdOp>{
        PutOp(Key("drill_notes", note.run_id + "/" + Padded(seq)), etcd_records::Encode(stored))};
  };
  auto done = Commit(w, "note on drill run " + note.run_id);
  if (!done.ok()) return done.status();
  if (!*done) return Status::NotFound("no drill run with id '" + note.run_id + "'");
  return Status::Ok();
}

Result<std::vector<DrillNote>> EtcdStore::ListDrillNotes(const std::string& run_id) {
  std::lock_guard lock(mu_);
  auto kvs = All("drill_notes/" + run_id);
  if (!kvs.ok()) return kvs.status();
  return DecodeAll<DrillNote>(*kvs);
}

}  // namespace icewarden
