#include "orchestrator/cluster/cluster_internal.h"

#include <utility>  // before Asio: Boost 1.74 + GCC 12

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <future>

#include "health/asio_timers.h"
#include "health/probe_scheduler.h"
#include "orchestrator/watch/live_view.h"
#include "orchestrator/watch/region_probes.h"
#include "orchestrator/watch/region_silence.h"
#include "state/clock.h"
#include "state/etcd_client.h"
#include "state/json_text.h"

namespace icewarden {
namespace {

using nlohmann::json;
using Steady = std::chrono::steady_clock;

std::string ViewsPrefix(const std::string& prefix) { return prefix + "views/"; }

// What a peer's view may bring into memory, whatever was put under the prefix: a view of a
// few regions is a few hundred bytes, and a failure's detail is one sentence.
constexpr std::size_t kMaxViewBytes = 64 * 1024;
constexpr std::size_t kMaxDetailBytes = 256;

}  // namespace

json SightJson(const RegionSight& s) {
  return {{"probed", s.probed},
          {"silent", s.silent},
          {"silent_for_ms", s.silent_for_ms},
          {"silent_rounds", s.silent_rounds},
          {"detail", s.detail},
          {"round_age_ms", s.round_age_ms}};
}

std::string ViewJson(const ReplicaView& view) {
  json regions = json::object();
  for (const auto& [name, s] : view.regions) regions[name] = SightJson(s);
  return DumpJson(json{{"replica", view.replica}, {"regions", regions}});
}

std::optional<ReplicaView> ParseViewJson(const std::string& text) {
  json v = json::parse(text, nullptr, false);
  if (!v.is_object() || !v.contains("replica") || !v["replica"].is_string() ||
      !v.contains("regions") || !v["regions"].is_object())
    return std::nullopt;
  ReplicaView view;
  view.replica = v["replica"].get<std::string>();
  for (const auto& [name, r] : v["regions"].items()) {
    if (!r.is_object()) return std::nullopt;
    RegionSight s;
    try {
      s.probed = r.value("probed", false);
      s.silent = r.value("silent", false);
      s.silent_for_ms = r.value("silent_for_ms", std::int64_t{0});
      s.silent_rounds = r.value("silent_rounds", 0);
      s.detail = r.value("detail", "");
      s.round_age_ms = r.value("round_age_ms", std::int64_t{0});
    } catch (const json::exception&) {
      return std::nullopt;  // a field of the wrong type
    }
    view.regions[name] = std::move(s);
  }
  return view;
}

ReplicaViews::ReplicaViews(std::shared_ptr<EtcdClient> etcd, ReplicaViewsOptions options,
                           const LiveView& live, std::shared_ptr<Clock> clock)
    : etcd_(std::move(etcd)), options_(std::move(options)), live_(live), clock_(std::move(clock)) {
  if (!options_.log) options_.log = [](const std::string&) {};
}

ReplicaViews::~ReplicaViews() { Stop(); }

void ReplicaViews::Start() {
  thread_ = std::thread([this] { Loop(); });
}

void ReplicaViews::Stop() {
  stop_ = true;
  if (!thread_.joinable()) return;
  thread_.join();
  if (lease_ != 0) {
    // Revoking the lease deletes the view: the others stop counting it at once.
    if (Status s = etcd_->LeaseRevoke(lease_); !s.ok())
      options_.log("views: could not withdraw this replica's view (its lease ends it): " +
                   s.ToString());
    lease_ = 0;
  }
}

void ReplicaViews::Loop() {
  while (!stop_) {
    const auto next = Steady::now() + options_.period;
    Tick();
    while (!stop_ && Steady::now() < next)
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

void ReplicaViews::Tick() {
  std::optional<std::string> error;
  // Publish: renew the lease (a new one when it is gone), then put the view under it.
  if (lease_ != 0 && !etcd_->LeaseKeepAlive(lease_).ok()) lease_ = 0;
  if (lease_ == 0) {
    auto granted = etcd_->LeaseGrant(options_.ttl);
    if (granted.ok()) {
      lease_ = granted->id;
    } else {
      error = "cannot get a lease for this replica's view: " + granted.status().ToString();
    }
  }
  if (lease_ != 0) {
    const ReplicaView mine = ViewOf(options_.replica, options_.regions, live_, clock_->Now());
    auto put = etcd_->Put(ViewsPrefix(options_.prefix) + options_.replica, ViewJson(mine), lease_);
    if (!put.ok()) {
      error = "cannot publish this replica's view: " + put.status().ToString();
      if (put.status().code() == StatusCode::kNotFound) lease_ = 0;
    }
  }
  // Read: everyone's, noting when each last changed on this replica's clock.
  const std::string prefix = ViewsPrefix(options_.prefix);
  auto range = etcd_->Range(prefix, EtcdClient::PrefixEnd(prefix));
  const auto now = Steady::now();
  std::lock_guard lock(mu_);
  if (!range.ok()) {
    error = "cannot read the replicas' views: " + range.status().ToString();
  } else {
    std::map<std::string, Peer> next;
    for (const EtcdKeyValue& kv : range->kvs) {
      const std::string name = kv.key.substr(prefix.size());
      if (name == options_.replica) continue;
      if (kv.value.size() > kMaxViewBytes) continue;  // not a view: no vote
      auto view = ParseViewJson(kv.value);
      if (!view || view->replica != name) continue;
      // Only the regions this replica's config names are judged.
      std::erase_if(view->regions, [&](const auto& entry) {
        return std::find(options_.regions.begin(), options_.regions.end(), entry.first) ==
               options_.regions.end();
      });
      for (auto& [region, sight] : view->regions)
        if (sight.detail.size() > kMaxDetailBytes) sight.detail.resize(kMaxDetailBytes);
      Peer peer;
      peer.view = std::move(*view);
      peer.mod_revision = kv.mod_revision;
      auto before = peers_.find(name);
      if (before != peers_.end()) {
        peer.changed_at = before->second.mod_revision == kv.mod_revision
                              ? before->second.changed_at
                              : std::optional<Steady::time_point>(now);
      }
      next[name] = std::move(peer);
    }
    peers_ = std::move(next);
  }
  if (error != last_error_) {
    if (error)
      options_.log("views: " + *error);
    else if (last_error_)
      options_.log("views: publishing and reading again");
  }
  last_error_ = std::move(error);
}

std::vector<ReplicaView> ReplicaViews::Snapshot() const {
  std::vector<ReplicaView> out;
  out.push_back(ViewOf(options_.replica, options_.regions, live_, clock_->Now()));
  const auto now = Steady::now();
  std::lock_guard lock(mu_);
  for (const auto& [name, peer] : peers_) {
    ReplicaView view = peer.view;
    if (peer.changed_at) {
      view.heard_ms_ago =
          std::chrono::duration_cast<std::chrono::milliseconds>(now - *peer.changed_at).count();
    }
    out.push_back(std::move(view));
  }
  return out;
}

std::optional<std::string> ReplicaViews::LastError() const {
  std::lock_guard lock(mu_);
  return last_error_;
}

struct StandbyProber::Loop {
  std::shared_ptr<Clock> clock;
  boost::asio::io_context io;
  std::unique_ptr<Timers> timers = MakeAsioTimers(io);
  std::unique_ptr<RegionProbes> probes;
  std::thread thread;
};

StandbyProber::StandbyProber(std::unique_ptr<Loop> loop) : loop_(std::move(loop)) {}

Result<std::unique_ptr<StandbyProber>> StandbyProber::Start(const Config& config, LiveView& live,
                                                            std::shared_ptr<Clock> clock) {
  auto loop = std::make_unique<Loop>();
  loop->clock = std::move(clock);
  RegionProbeSinks sinks;
  sinks.on_round = [&live, clock = loop->clock.get()](const ProbeRound& r) {
    RecordProbeRound(live, r, clock->Now());
  };
  auto probes =
      RegionProbes::Build(config, loop->io, *loop->timers, *loop->clock, std::move(sinks));
  if (!probes.ok()) return probes.status();
  loop->probes = std::move(probes).value();
  Loop* l = loop.get();
  l->thread = std::thread([l] {
    l->probes->Start();
    auto guard = boost::asio::make_work_guard(l->io);
    l->io.run();
  });
  return std::unique_ptr<StandbyProber>(new StandbyProber(std::move(loop)));
}

StandbyProber::~StandbyProber() {
  Loop* l = loop_.get();
  std::promise<void> stopped;
  boost::asio::post(l->io, [l, &stopped] {
    l->probes->Stop();
    stopped.set_value();
  });
  stopped.get_future().wait();
  l->io.stop();
  l->thread.join();
}

}  // namespace icewarden
