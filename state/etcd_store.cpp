#include "state/etcd_store.h"

#include <charconv>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <map>
#include <random>
#include <thread>
#include <unordered_set>
#include <utility>

#include "state/audit_seal.h"
#include "state/digest.h"
#include "state/etcd_records.h"
#include "state/etcd_store_internal.h"
#include "state/sqlite_records.h"

namespace icewarden {
namespace {

constexpr std::int64_t kPage = 1000;  // keys per range request when listing
constexpr int kAttempts = 8;          // rounds of reading rows again when a compare-and-set lost
// A write that lost only the race for the audit counter to another store's write is sent again
// with a fresh counter. It gives up after this long, not after a number of sends: a writer whose
// counter is cached wins every race against one that just learned the new counter, so a count
// starves the slower writer while the other keeps landing (two stores, 20 appends each, lost 8
// races in a row and left 22 events of 42). The jittered pause breaks that lockstep.
constexpr std::chrono::seconds kContendedFor{10};
constexpr std::chrono::milliseconds kFirstPause{1};
constexpr std::chrono::milliseconds kLongestPause{50};

// A pause drawn from [0, bound], doubling the bound for the next lost race.
void PauseAfterLostRace(std::chrono::milliseconds& bound) {
  thread_local std::minstd_rand random{std::random_device{}()};
  std::uniform_int_distribution<std::int64_t> pick(0, bound.count());
  std::this_thread::sleep_for(std::chrono::milliseconds(pick(random)));
  bound = std::min(bound * 2, kLongestPause);
}

// Whether `c` holds for what a failure branch read of its key.
bool Holds(const EtcdCompare& c, const EtcdRange& read) {
  if (read.kvs.empty())
    return c.target != EtcdCompare::Target::kValue && c.number == 0 &&
           c.result == EtcdCompare::Result::kEqual;
  const EtcdKeyValue& kv = read.kvs.front();
  std::int64_t got = 0;
  switch (c.target) {
    case EtcdCompare::Target::kVersion:
      got = kv.version;
      break;
    case EtcdCompare::Target::kCreateRevision:
      got = kv.create_revision;
      break;
    case EtcdCompare::Target::kModRevision:
      got = kv.mod_revision;
      break;
    case EtcdCompare::Target::kLease:
      got = kv.lease;
      break;
    case EtcdCompare::Target::kValue:
      return kv.value == c.value;
  }
  switch (c.result) {
    case EtcdCompare::Result::kEqual:
      return got == c.number;
    case EtcdCompare::Result::kGreater:
      return got > c.number;
    case EtcdCompare::Result::kLess:
      return got < c.number;
    case EtcdCompare::Result::kNotEqual:
      return got != c.number;
  }
  return false;
}

EtcdOp RangeOp(std::string key) {
  EtcdOp op;
  op.kind = EtcdOp::Kind::kRange;
  op.key = std::move(key);
  return op;
}

// meta/audit_seq holds "<seq> <the seal of event seq>", or "<seq>" as written before the seal.
struct CounterValue {
  std::int64_t seq = 0;
  std::string head_sha256;
};

Result<CounterValue> ParseCounter(const EtcdKeyValue& kv) {
  CounterValue c;
  const std::string& v = kv.value;
  const auto space = v.find(' ');
  const std::string digits = v.substr(0, space);
  auto [p, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), c.seq);
  const bool seq_ok =
      !digits.empty() && ec == std::errc() && p == digits.data() + digits.size() && c.seq >= 0;
  if (space != std::string::npos) c.head_sha256 = v.substr(space + 1);
  if (!seq_ok || (space != std::string::npos && !ParseSha256Hex(c.head_sha256))) {
    return Status::Internal("etcd key " + kv.key + " holds '" + v +
                            "', not a seq and the seal of the event it names");
  }
  return c;
}

}  // namespace

std::string Padded(std::int64_t n) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%020" PRId64, n);
  return buf;
}

EtcdOp PutOp(std::string key, std::string value) {
  EtcdOp op;
  op.kind = EtcdOp::Kind::kPut;
  op.key = std::move(key);
  op.value = std::move(value);
  return op;
}

EtcdCompare Absent(std::string key) {
  return {std::move(key), EtcdCompare::Target::kCreateRevision, EtcdCompare::Result::kEqual, 0, ""};
}

EtcdCompare Unchanged(std::string key, std::int64_t mod_revision) {
  return {std::move(key), EtcdCompare::Target::kModRevision, EtcdCompare::Result::kEqual,
          mod_revision, ""};
}

EtcdStore::EtcdStore(std::shared_ptr<EtcdClient> etcd, EtcdStoreOptions options,
                     std::shared_ptr<Clock> clock)
    : etcd_(std::move(etcd)), options_(std::move(options)), clock_(std::move(clock)) {}

std::string EtcdStore::Key(std::string_view space, std::string_view rest) const {
  std::string k = options_.prefix;
  k.append(space).push_back('/');
  k.append(rest);
  return k;
}

std::string EtcdStore::OwnKey(const TableIdent& table) const {
  std::string rest = table.NamespaceKey();
  rest.push_back('\0');
  rest += table.name;
  return Key("own", rest);
}

Status EtcdStore::Start() {
  std::lock_guard lock(mu_);
  return ReadCounter();
}

Status EtcdStore::ReadCounter() {
  auto kv = Get(CounterKey());
  if (!kv.ok()) return kv.status();
  Counter c;
  if (kv->has_value()) {
    auto value = ParseCounter(**kv);
    if (!value.ok()) return value.status();
    c = {value->seq, (*kv)->mod_revision, value->head_sha256};
  }
  counter_ = c;
  return Status::Ok();
}

Result<std::optional<EtcdKeyValue>> EtcdStore::Get(const std::string& key) {
  auto r = etcd_->Range(key);
  if (!r.ok()) return r.status();
  if (r->kvs.empty()) return std::optional<EtcdKeyValue>();
  return std::optional<EtcdKeyValue>(std::move(r->kvs.front()));
}

Status EtcdStore::Scan(std::string start, const std::string& end,
                       const std::function<bool(EtcdKeyValue&)>& take) {
  for (;;) {
    auto r = etcd_->Range(start, end, kPage);
    if (!r.ok()) return r.status();
    for (EtcdKeyValue& kv : r->kvs)
      if (!take(kv)) return Status::Ok();
    if (!r->more || r->kvs.empty()) return Status::Ok();
    start = r->kvs.back().key;
    start.push_back('\0');  // the next key after the last one read
  }
}

Result<std::vector<EtcdKeyValue>> EtcdStore::All(const std::string& space) {
  const std::string start = Key(space, "");
  std::vector<EtcdKeyValue> out;
  Status s = Scan(start, EtcdClient::PrefixEnd(start), [&](EtcdKeyValue& kv) {
    out.push_back(std::move(kv));
    return true;
  });
  if (!s.ok()) return s;
  return out;
}

Result<bool> EtcdStore::Commit(const Write& w, const std::string& what) {
  if (options_.read_only)
    return Status::FailedPrecondition("cannot " + what + ": the state store was opened read-only");
  const std::optional<EtcdCompare> fence = options_.fence ? options_.fence() : std::nullopt;
  const auto give_up = std::chrono::steady_clock::now() + kContendedFor;
  std::chrono::milliseconds pause = kFirstPause;
  int sends = 0;
  for (;; ++sends) {
    std::vector<EtcdCompare> compares = w.compares;
    std::vector<EtcdOp> ops = w.ops;
    std::int64_t seq = 0;
    std::string audit_value;
    std::string sealed;
    if (w.why != nullptr) {
      if (!counter_) {
        if (Status s = ReadCounter(); !s.ok()) return s;
      }
      seq = counter_->seq + 1;
      compares.push_back(Unchanged(CounterKey(), counter_->mod_revision));
      AuditEvent e = *w.why;
      e.seq = seq;
      if (e.at == 0) e.at = clock_->Now();
      e.detail_json = std::string(JsonOrEmptyObject(e.detail_json));
      e.prev_sha256 = counter_->head_sha256;
      e.sha256 = AuditSealOf(e);
      audit_value = etcd_records::Encode(e);
      ops.push_back(PutOp(Key("audit", Padded(seq)), audit_value));
      ops.push_back(PutOp(CounterKey(), std::to_string(seq) + " " + e.sha256));
      sealed = e.sha256;
      if (w.with_seq)
        for (EtcdOp& op : w.with_seq(seq)) ops.push_back(std::move(op));
    }
    if (fence) compares.push_back(*fence);
    if (compares.size() > options_.max_txn_ops || ops.size() > options_.max_txn_ops) {
      return Status::InvalidArgument(
          "cannot " + what + ": it needs " + std::to_string(std::max(compares.size(), ops.size())) +
          " operations in one etcd txn, over state.etcd.max_txn_ops (" +
          std::to_string(options_.max_txn_ops) +
          "); raise etcd's --max-txn-ops and the setting together, or use smaller batches");
    }
    std::vector<EtcdOp> failure{RangeOp(CounterKey())};
    if (fence) failure.push_back(RangeOp(fence->key));

    auto r = etcd_->Txn(compares, ops, failure);
    if (!r.ok()) {
      counter_.reset();
      if (r.status().code() != StatusCode::kUnavailable || w.why == nullptr) return r.status();
      // The answer was lost: the audit event under its seq tells whether the write landed.
      auto landed = Get(Key("audit", Padded(seq)));
      if (landed.ok() && landed->has_value() && (*landed)->value == audit_value) return true;
      return Status::Unavailable("cannot " + what + ": " + r.status().message() +
                                 "; whether etcd applied it is unknown: read it back");
    }
    if (r->succeeded) {
      if (w.why != nullptr) counter_ = Counter{seq, r->revision, sealed};
      return true;
    }
    if (fence && r->ranges.size() > 1 && !Holds(*fence, r->ranges[1])) {
      return Status::FailedPrecondition("cannot " + what +
                                        ": this replica no longer holds the leader key " +
                                        fence->key + ", so another replica may lead");
    }
    Counter seen;
    if (!r->ranges.empty() && !r->ranges[0].kvs.empty()) {
      auto value = ParseCounter(r->ranges[0].kvs.front());
      if (!value.ok()) return value.status();
      seen = {value->seq, r->ranges[0].kvs.front().mod_revision, value->head_sha256};
    }
    const bool counter_moved = w.why != nullptr && seen.mod_revision != counter_->mod_revision;
    counter_ = seen;
    if (!counter_moved) return false;
    if (std::chrono::steady_clock::now() >= give_up) break;
    PauseAfterLostRace(pause);
  }
  return Status::Conflict("cannot " + what + ": the audit log kept moving for " +
                          std::to_string(kContendedFor.count()) + " s over " +
                          std::to_string(sends + 1) +
                          " sends (another writer); nothing was written, try again");
}

// ---- Regions ------------------------------------------------------------------------------

Status EtcdStore::PutRegion(const Region& region, const AuditEvent& why) {
  std::lock_guard lock(mu_);
  if (region.name.empty()) return Status::InvalidArgument("a region needs a name");
  if (Status s = ValidateAudit(why); !s.ok()) return s;
  Write w;
  w.ops.push_back(PutOp(Key("regions", region.name), etcd_records::Encode(region)));
  w.why = &why;
  auto done = Commit(w, "record region " + region.name);
  return done.ok() ? Status::Ok() : done.status();
}

Result<std::optional<Region>> EtcdStore::GetRegion(const std::string& name) {
  std::lock_guard lock(mu_);
  return Read<Region>(Key("regions", name));
}

Result<std::vector<Region>> EtcdStore::ListRegions() {
  std::lock_guard lock(mu_);
  auto kvs = All("regions");
  if (!kvs.ok()) return kvs.status();
  std::vector<Region> out(kvs->size());
  for (std::size_t i = 0; i < kvs->size(); ++i)
    if (Status s = etcd_records::Decode((*kvs)[i].key, (*kvs)[i].value, out[i]); !s.ok()) return s;
  return out;
}

// ---- Ownership ----------------------------------------------------------------------------

Result<std::optional<Ownership>> EtcdStore::GetOwnership(const TableIdent& table) {
  std::lock_guard lock(mu_);
  auto kv = Get(OwnKey(table));
  if (!kv.ok()) return kv.status();
  if (!kv->has_value()) return std::optional<Ownership>();
  Ownership o;
  o.table = table;
  if (Status s = etcd_records::DecodeOwnership((*kv)->key, (*kv)->value, o); !s.ok()) return s;
  return std::optional<Ownership>(std::move(o));
}

namespace {

// The table an ownership key names: "<prefix>own/<namespace key>\0<name>".
TableIdent TableOfKey(std::string_view key, std::size_t prefix_size) {
  std::string_view rest = key.substr(prefix_size);
  const std::size_t nul = rest.find('\0');
  TableIdent t;
  t.namespace_levels = TableIdent::SplitNamespaceKey(rest.substr(0, nul));
  t.name = std::string(nul == std::string_view::npos ? "" : rest.substr(nul + 1));
  return t;
}

}  // namespace

Result<std::vector<Ownership>> EtcdStore::ListOwnership(const OwnershipQuery& query) {
  std::lock_guard lock(mu_);
  const std::string space = Key("own", "");
  std::string start = space;
  if (query.after) {
    start = OwnKey(*query.after);
    start.push_back('\0');
  }
  std::vector<Ownership> out;
  Status failed = Status::Ok();
  Status s = Scan(start, EtcdClient::PrefixEnd(space), [&](EtcdKeyValue& kv) {
    Ownership o;
    failed = etcd_records::DecodeOwnership(kv.key, kv.value, o);
    if (!failed.ok()) return false;
    if (query.owner && o.owner != *query.owner) return true;
    o.table = TableOfKey(kv.key, space.size());
    out.push_back(std::move(o));
    return query.limit == 0 || out.size() < query.limit;
  });
  if (!s.ok()) return s;
  if (!failed.ok()) return failed;
  return out;
}

Result<std::vector<std::pair<std::string, std::int64_t>>> EtcdStore::CountOwnershipByOwner() {
  std::lock_guard lock(mu_);
  const std::string space = Key("own", "");
  std::map<std::string, std::int64_t> counts;
  Status failed = Status::Ok();
  Status s = Scan(space, EtcdClient::PrefixEnd(space), [&](EtcdKeyValue& kv) {
    Ownership o;
    failed = etcd_records::DecodeOwnership(kv.key, kv.value, o);
    if (failed.ok()) ++counts[o.owner];
    return failed.ok();
  });
  if (!s.ok()) return s;
  if (!failed.ok()) return failed;
  return std::vector<std::pair<std::string, std::int64_t>>(counts.begin(), counts.end());
}

Status EtcdStore::CompareAndSetOwnership(std::span<const OwnershipChange> changes,
                                         const AuditEvent& why) {
  std::lock_guard lock(mu_);
  if (changes.empty()) return Status::Ok();
  if (Status s = ValidateAudit(why); !s.ok()) return s;
  if (Status s = ValidateOwnershipChanges(changes); !s.ok()) return s;
  std::vector<std::string> keys;
  keys.reserve(changes.size());
  for (const OwnershipChange& c : changes) keys.push_back(OwnKey(c.table));
  // The compare-and-set itself happens in etcd, on the mod revisions read here: a row that
  // moved in between fails the txn, and the next round reports it by its epoch.
  for (int round = 0; round < kAttempts; ++round) {
    std::vector<EtcdRange> rows;
    rows.reserve(changes.size());
    for (std::size_t i = 0; i < keys.size(); i += options_.max_txn_ops) {
      std::vector<EtcdOp> reads;
      for (std::size_t j = i; j < std::min(keys.size(), i + options_.max_txn_ops); ++j)
        reads.push_back(RangeOp(keys[j]));
      auto r = etcd_->Txn({}, reads);
      if (!r.ok()) return r.status();
      for (EtcdRange& range : r->ranges) rows.push_back(std::move(range));
    }
    if (rows.size() != keys.size())
      return Status::Internal("etcd answered " + std::to_string(rows.size()) + " reads for " +
                              std::to_string(keys.size()) + " ownership rows");
    const UnixMillis now = clock_->Now();
    Write w;
    w.why = &why;
    for (std::size_t i = 0; i < changes.size(); ++i) {
      const OwnershipChange& c = changes[i];
      Ownership current;
      std::int64_t mod_revision = 0;
      if (!rows[i].kvs.empty()) {
        const EtcdKeyValue& kv = rows[i].kvs.front();
        if (Status s = etcd_records::DecodeOwnership(kv.key, kv.value, current); !s.ok()) return s;
        mod_revision = kv.mod_revision;
      }
      if (current.epoch != c.expected_epoch) {
        std::string message = "ownership of " + c.table.ToString() + " ";
        message += rows[i].kvs.empty() ? "has no owner yet (epoch 0)"
                                       : "is at epoch " + std::to_string(current.epoch) +
                                             " owned by " + current.owner;
        return Status::Conflict(message + ", expected epoch " + std::to_string(c.expected_epoch) +
                                "; none of the batch's " + std::to_string(changes.size()) +
                                " changes was applied");
      }
      Ownership next;
      next.owner = c.new_owner;
      next.epoch = c.expected_epoch + 1;
      next.updated_at = now;
      next.failover_id = c.failover_id;
      w.compares.push_back(Unchanged(keys[i], mod_revision));
      w.ops.push_back(PutOp(keys[i], etcd_records::EncodeOwnership(next)));
    }
    auto done = Commit(w, "change the ownership of " + std::to_string(changes.size()) + " tables");
    if (!done.ok()) return done.status();
    if (*done) return Status::Ok();
  }
  return Status::Conflict("the ownership of this batch kept changing while it was written");
}

// ---- Audit --------------------------------------------------------------------------------

Status EtcdStore::AppendAudit(const AuditEvent& event) {
  std::lock_guard lock(mu_);
  if (Status s = ValidateAudit(event); !s.ok()) return s;
  Write w;
  w.why = &event;
  auto done = Commit(w, "append to the audit log");
  return done.ok() ? Status::Ok() : done.status();
}

Result<std::vector<AuditEvent>> EtcdStore::ListAudit(const AuditQuery& query) {
  std::lock_guard lock(mu_);
  const std::string space = Key("audit", "");
  std::vector<AuditEvent> out;
  Status failed = Status::Ok();
  Status s = Scan(Key("audit", Padded(query.after_seq + 1)), EtcdClient::PrefixEnd(space),
                  [&](EtcdKeyValue& kv) {
                    AuditEvent e;
                    failed = etcd_records::Decode(kv.key, kv.value, e);
                    if (!failed.ok()) return false;
                    if (query.target && e.target != *query.target) return true;
                    out.push_back(std::move(e));
                    return query.limit == 0 || out.size() < query.limit;
                  });
  if (!s.ok()) return s;
  if (!failed.ok()) return failed;
  return out;
}

Result<std::int64_t> EtcdStore::LastAuditSeq() {
  std::lock_guard lock(mu_);
  if (Status s = ReadCounter(); !s.ok()) return s;
  return counter_->seq;
}

// ---- Webhook deliveries -------------------------------------------------------------------

Status EtcdStore::RecordWebhookDelivery(const WebhookDelivery& d, const AuditEvent& why) {
  std::lock_guard lock(mu_);
  if (d.key.empty()) return Status::InvalidArgument("a webhook delivery needs a key");
  if (Status s = ValidateAudit(why); !s.ok()) return s;
  WebhookDelivery stored = d;
  if (stored.received_at == 0) stored.received_at = clock_->Now();
  Write w;
  w.compares.push_back(Absent(Key("webhooks", d.key)));
  w.ops.push_back(PutOp(Key("webhooks", d.key), etcd_records::Encode(stored)));
  w.why = &why;
  auto done = Commit(w, "record webhook delivery " + d.key);
  if (!done.ok()) return done.status();
  if (!*done) return Status::Conflict("webhook delivery " + d.key + " is recorded");
  return Status::Ok();
}

Result<std::optional<WebhookDelivery>> EtcdStore::GetWebhookDelivery(const std::string& key) {
  std::lock_guard lock(mu_);
  return Read<WebhookDelivery>(Key("webhooks", key));
}

Result<std::vector<WebhookDelivery>> EtcdStore::ListWebhookDeliveries(const std::string& source,
                                                                      const std::string& alert) {
  std::lock_guard lock(mu_);
  auto kvs = All("webhooks");
  if (!kvs.ok()) return kvs.status();
  // Oldest first: a key's create revision is when it was recorded.
  std::sort(kvs->begin(), kvs->end(), [](const EtcdKeyValue& a, const EtcdKeyValue& b) {
    return a.create_revision < b.create_revision;
  });
  const bool all = source.empty() && alert.empty();
  std::vector<WebhookDelivery> out;
  for (const EtcdKeyValue& kv : *kvs) {
    WebhookDelivery d;
    if (Status s = etcd_records::Decode(kv.key, kv.value, d); !s.ok()) return s;
    if (all || (d.source == source && d.alert == alert)) out.push_back(std::move(d));
  }
  return out;
}

Result<std::unique_ptr<StateStore>> OpenEtcdStore(std::shared_ptr<EtcdClient> etcd,
                                                  EtcdStoreOptions options,
                                                  std::shared_ptr<Clock> clock) {
  if (etcd == nullptr) return Status::InvalidArgument("the etcd state store needs a client");
  if (clock == nullptr) return Status::InvalidArgument("the state store needs a clock");
  if (options.prefix.empty() || options.prefix.back() != '/')
    return Status::InvalidArgument("state.etcd.prefix must end with '/', got '" + options.prefix +
                                   "'");
  if (options.max_txn_ops < 8)
    return Status::InvalidArgument("state.etcd.max_txn_ops must be at least 8");
  const bool writes = !options.read_only;
  auto store = std::make_unique<EtcdStore>(std::move(etcd), std::move(options), std::move(clock));
  if (writes) {
    if (Status s = store->Start(); !s.ok()) return s;
  }
  return std::unique_ptr<StateStore>(std::move(store));
}

}  // namespace icewarden
