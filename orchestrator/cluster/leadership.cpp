#include "orchestrator/cluster/cluster.h"

#include <nlohmann/json.hpp>

#include "state/json_text.h"

namespace icewarden {
namespace {

using nlohmann::json;
using Steady = std::chrono::steady_clock;

std::int64_t Ticks(Steady::time_point t) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count();
}

std::string Value(const LeadershipOptions& o) {
  return DumpJson(json{{"replica", o.replica}, {"api", o.api}});
}

}  // namespace

Leadership::Leadership(std::shared_ptr<EtcdClient> etcd, LeadershipOptions options)
    : etcd_(std::move(etcd)), options_(std::move(options)) {
  if (!options_.log) options_.log = [](const std::string&) {};
  key_ = std::make_unique<EtcdLeaderKey>(*etcd_, options_.key, Value(options_), options_.ttl);
}

Leadership::~Leadership() {
  stop_ = true;
  if (keeper_.joinable()) keeper_.join();
  if (watchdog_.joinable()) watchdog_.join();
}

bool Leadership::TryLead() {
  // A held key is one read away: only an absent one is worth a lease and a txn.
  auto holder = Leader();
  if (holder.ok() && holder->has_value()) {
    const std::string said = "standby: " + (*holder)->replica + " leads at " + (*holder)->api;
    if (said != last_said_) options_.log(said);
    last_said_ = said;
    return false;
  }
  auto won = key_->TryAcquire();
  std::string said;
  if (!won.ok()) {
    said = "cannot reach etcd to campaign: " + won.status().ToString();
  } else if (won->has_value()) {
    term_ = **won;
    options_.log("leader: " + options_.replica + " holds " + options_.key + " (term " +
                 std::to_string(term_->revision) + ", lease " +
                 std::to_string(options_.ttl.count()) + " s)");
    return true;
  } else {
    auto holder = Leader();
    said = holder.ok() && holder->has_value()
               ? "standby: " + (*holder)->replica + " leads at " + (*holder)->api
               : "standby: waiting for the leader key";
  }
  if (said != last_said_) options_.log(said);
  last_said_ = said;
  return false;
}

bool Leadership::Campaign(const std::atomic<bool>& stop) {
  // The key is gone as soon as the old leader's lease expires; a standby that looked only
  // every TTL/3 would add up to that to every takeover. A read every 250 ms is cheap.
  const auto every =
      std::min<Steady::duration>(std::chrono::duration_cast<Steady::duration>(options_.ttl) / 3,
                                 std::chrono::milliseconds(250));
  while (!stop) {
    if (TryLead()) return true;
    const auto until = Steady::now() + every;
    while (!stop && Steady::now() < until)
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return false;
}

EtcdCompare Leadership::Fence() const {
  // This term's, fixed: the keeper's renewals never change it, and a term that ended makes
  // every write that carries it fail, as it must.
  return {options_.key, EtcdCompare::Target::kCreateRevision, EtcdCompare::Result::kEqual,
          term_ ? term_->revision : -1, ""};
}

void Leadership::Keep(std::function<void(const std::string& why)> on_lost) {
  on_lost_ = std::move(on_lost);
  renewed_at_ = Ticks(Steady::now());
  act_until_ = Ticks(term_->act_until);
  keeper_ = std::thread([this] { KeepLoop(); });
  // act_until is watched apart from the renewals: a renewal blocks for as long as etcd takes to
  // answer (up to state.etcd.timeout, after whatever else queued on the shared client), and in
  // a silent partition every one of them takes that long, past act_until and past the lease.
  watchdog_ = std::thread([this] { WatchLoop(); });
}

void Leadership::Lose(const std::string& why) {
  if (lost_.exchange(true)) return;  // once, whichever thread sees it first
  on_lost_(why);
}

void Leadership::WatchLoop() {
  while (!stop_ && !lost_) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    if (Ticks(Steady::now()) >= act_until_) {
      Lose("the lease could have expired (no renewal since " +
           std::to_string(options_.ttl.count()) + " s minus the margin)");
      return;
    }
  }
}

void Leadership::KeepLoop() {
  const auto every = std::chrono::duration_cast<Steady::duration>(options_.ttl) / 3;
  auto act_until = term_->act_until;
  auto next = Steady::now() + every;
  while (!stop_ && !lost_) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    const auto now = Steady::now();
    // Checked first: after a pause (SIGSTOP, a stalled VM) the bound may be long gone, and no
    // renewal now can say the term lasted through the pause.
    if (now >= act_until) {
      Lose("the lease could have expired (no renewal since " +
           std::to_string(options_.ttl.count()) + " s minus the margin)");
      return;
    }
    if (now < next) continue;
    std::lock_guard lock(mu_);
    if (stop_) return;
    auto renewed = key_->Renew();
    if (renewed.ok()) {
      act_until = renewed->act_until;
      next = Steady::now() + every;
      renewed_at_ = Ticks(Steady::now());
      act_until_ = Ticks(act_until);
    } else if (renewed.status().code() == StatusCode::kFailedPrecondition) {
      Lose(renewed.status().message());
      return;
    } else {
      // etcd did not answer: try again soon, until act_until says to stop.
      options_.log("leader: cannot renew the lease yet: " + renewed.status().ToString());
      next = Steady::now() + std::chrono::milliseconds(200);
    }
  }
}

void Leadership::Resign() {
  stop_ = true;
  if (keeper_.joinable()) keeper_.join();
  if (watchdog_.joinable()) watchdog_.join();
  std::lock_guard lock(mu_);
  if (Status s = key_->Resign(); !s.ok())
    options_.log("leader: could not give the key up (it expires with its lease): " + s.ToString());
  else
    options_.log("leader: " + options_.replica + " gave up " + options_.key);
}

std::optional<Leadership::LeaseAge> Leadership::Lease() const {
  const std::int64_t renewed = renewed_at_, until = act_until_;
  if (renewed == 0) return std::nullopt;
  const std::int64_t now = Ticks(Steady::now());
  using std::chrono::milliseconds;
  using std::chrono::nanoseconds;
  return LeaseAge{std::chrono::duration_cast<milliseconds>(nanoseconds(now - renewed)),
                  std::chrono::duration_cast<milliseconds>(
                      nanoseconds(std::max<std::int64_t>(until - now, 0)))};
}

json LeaderJson(const std::optional<LeaderInfo>& leader) {
  if (!leader) return nullptr;
  return {{"replica", leader->replica}, {"api", leader->api}, {"term", leader->term}};
}

Result<std::optional<LeaderInfo>> Leadership::Leader() {
  auto r = etcd_->Range(options_.key);
  if (!r.ok()) return r.status();
  if (r->kvs.empty()) return std::optional<LeaderInfo>();
  json v = json::parse(r->kvs[0].value, nullptr, false);
  LeaderInfo info;
  info.term = r->kvs[0].create_revision;
  if (v.is_object()) {
    info.replica = v.value("replica", "");
    info.api = v.value("api", "");
  }
  return std::optional<LeaderInfo>(std::move(info));
}

}  // namespace icewarden
