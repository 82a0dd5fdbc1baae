#include "state/etcd_leader.h"

namespace icewarden {

EtcdLeaderKey::EtcdLeaderKey(EtcdClient& etcd, std::string key, std::string me,
                             std::chrono::seconds ttl, std::chrono::milliseconds margin)
    : etcd_(etcd), key_(std::move(key)), me_(std::move(me)), ttl_(ttl), margin_(margin) {}

Result<std::optional<LeaderTerm>> EtcdLeaderKey::TryAcquire() {
  if (term_) {
    auto renewed = Renew();
    if (renewed.ok()) return std::optional<LeaderTerm>(*renewed);
    if (term_) return renewed.status();  // could not tell: the term may still be ours
  }
  const auto sent = std::chrono::steady_clock::now();
  auto lease = etcd_.LeaseGrant(ttl_);
  if (!lease.ok()) return lease.status();
  const EtcdCompare absent{key_, EtcdCompare::Target::kCreateRevision, EtcdCompare::Result::kEqual,
                           0, ""};
  const EtcdOp read{EtcdOp::Kind::kRange, key_, "", "", 0};
  auto txn = etcd_.Txn({absent}, {{EtcdOp::Kind::kPut, key_, me_, "", lease->id}, read}, {read});
  if (!txn.ok() || !txn->succeeded) {
    // An unused lease would only expire later; give it back now (best effort).
    (void)etcd_.LeaseRevoke(lease->id);
    if (!txn.ok()) return txn.status();
    return std::optional<LeaderTerm>();
  }
  if (txn->ranges.empty() || txn->ranges[0].kvs.empty())
    return Status::Internal("etcd leader key " + key_ + ": created but not read back");
  LeaderTerm term;
  term.holder = me_;
  term.lease = lease->id;
  term.revision = txn->ranges[0].kvs[0].create_revision;
  term.act_until = sent + std::chrono::seconds(lease->ttl_seconds) - margin_;
  term_ = term;
  return std::optional<LeaderTerm>(term);
}

Result<LeaderTerm> EtcdLeaderKey::Renew() {
  if (!term_) return Status::FailedPrecondition("no leader term to renew for " + key_);
  const auto sent = std::chrono::steady_clock::now();
  auto ttl = etcd_.LeaseKeepAlive(term_->lease);
  if (!ttl.ok()) {
    if (ttl.status().code() != StatusCode::kNotFound) return ttl.status();  // try again
    term_.reset();
    return Status::FailedPrecondition("leader term of " + key_ + " is over: its lease expired");
  }
  // The lease lives; the key must too, and be this term's.
  auto holder = etcd_.Range(key_);
  if (!holder.ok()) return holder.status();
  if (holder->kvs.empty() || holder->kvs[0].create_revision != term_->revision) {
    (void)etcd_.LeaseRevoke(term_->lease);
    term_.reset();
    return Status::FailedPrecondition("leader term of " + key_ +
                                      " is over: the key is gone or belongs to a later term");
  }
  term_->act_until = sent + std::chrono::seconds(*ttl) - margin_;
  return *term_;
}

Status EtcdLeaderKey::Resign() {
  if (!term_) return Status::Ok();
  Status s = etcd_.LeaseRevoke(term_->lease);
  if (s.ok() || s.code() == StatusCode::kNotFound) {
    term_.reset();
    return Status::Ok();
  }
  return s;
}

Result<std::optional<EtcdKeyValue>> EtcdLeaderKey::Holder() {
  auto r = etcd_.Range(key_);
  if (!r.ok()) return r.status();
  if (r->kvs.empty()) return std::optional<EtcdKeyValue>();
  return std::optional<EtcdKeyValue>(r->kvs[0]);
}

EtcdCompare EtcdLeaderKey::StillMine() const {
  return {key_, EtcdCompare::Target::kCreateRevision, EtcdCompare::Result::kEqual,
          term_ ? term_->revision : -1, ""};
}

}  // namespace icewarden
