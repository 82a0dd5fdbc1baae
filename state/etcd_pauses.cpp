// Paused automation in the etcd store (etcd_store.h): one key per paused scope under
// `pauses/`, written in the txn that appends its audit event.
#include <utility>

#include "state/etcd_records.h"
#include "state/etcd_store_internal.h"

namespace icewarden {

Status EtcdStore::PutPause(const Pause& pause, const AuditEvent& why) {
  std::lock_guard lock(mu_);
  if (pause.scope.empty() || pause.reason.empty())
    return Status::InvalidArgument("a pause needs a scope and a reason");
  if (Status s = ValidateAudit(why); !s.ok()) return s;
  Pause stored = pause;
  if (stored.since == 0) stored.since = clock_->Now();
  Write w;
  w.ops.push_back(PutOp(Key("pauses", pause.scope), etcd_records::Encode(stored)));
  w.why = &why;
  auto done = Commit(w, "pause " + pause.scope);
  if (!done.ok()) return done.status();
  return Status::Ok();
}

Status EtcdStore::DeletePause(const std::string& scope, const AuditEvent& why) {
  std::lock_guard lock(mu_);
  if (Status s = ValidateAudit(why); !s.ok()) return s;
  Write w;
  // Only a pause that is there is lifted: otherwise nothing, not even the audit event.
  w.compares.push_back(
      {Key("pauses", scope), EtcdCompare::Target::kVersion, EtcdCompare::Result::kGreater, 0, ""});
  EtcdOp del;
  del.kind = EtcdOp::Kind::kDelete;
  del.key = Key("pauses", scope);
  w.ops.push_back(std::move(del));
  w.why = &why;
  auto done = Commit(w, "resume " + scope);
  if (!done.ok()) return done.status();
  if (!*done) return Status::NotFound("'" + scope + "' is not paused");
  return Status::Ok();
}

Result<std::vector<Pause>> EtcdStore::ListPauses() {
  std::lock_guard lock(mu_);
  auto kvs = All("pauses");
  if (!kvs.ok()) return kvs.status();
  std::vector<Pause> out(kvs->size());
  for (std::size_t i = 0; i < kvs->size(); ++i)
    if (Status s = etcd_records::Decode((*kvs)[i].key, (*kvs)[i].value, out[i]); !s.ok()) return s;
  return out;
}

}  // namespace icewarden
