#include "orchestrator/watch/catalog_watch.h"

#include <utility>  // before Asio: Boost 1.74 + GCC 12

#include <spdlog/spdlog.h>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>

#include <algorithm>
#include <atomic>
#include <charconv>
#include <future>
#include <map>
#include <set>
#include <thread>

#include "health/asio_timers.h"
#include "health/catalog_client.h"
#include "health/health_tracker.h"
#include "health/lag_monitor.h"
#include "health/probe_scheduler.h"
#include "orchestrator/config/config.h"
#include "orchestrator/orchestrator.h"
#include "orchestrator/watch/live_view.h"
#include "orchestrator/watch/region_probes.h"
#include "orchestrator/watch/region_silence.h"
#include "orchestrator/watch/table_discovery.h"
#include "orchestrator/watch/unparsed_log.h"
#include "state/clock.h"
#include "state/state_store.h"

namespace icewarden {
struct CatalogWatch::Loop {
  Loop(const Config& c, StateStore& s, Orchestrator& o, std::shared_ptr<Clock> cl, LiveView& l)
      : config(c), store(s), orchestrator(o), clock(std::move(cl)), live(l) {}

  const Config& config;
  StateStore& store;
  Orchestrator& orchestrator;
  std::shared_ptr<Clock> clock;
  LiveView& live;

  boost::asio::io_context io;
  std::unique_ptr<Timers> timers = MakeAsioTimers(io);
  std::unique_ptr<HealthTracker> tracker;
  std::unique_ptr<RegionProbes> probes;
  std::unique_ptr<LagMonitor> lag;
  TimerHandle lag_timer;

  TableDiscovery discovery{config, store};
  UnparsedAnswerLog unparsed{live};
  std::atomic<bool> stopping{false};
  std::thread thread;
  // Who the change being persisted came from, and whether persisting it worked: set around
  // ApplyEvent, which calls OnHealthChange on this same thread.
  std::string change_source = "probe";
  CatalogWatch::QuorumCheck quorum;  // set before the thread starts
  Status last_persist = Status::Ok();

  Status Build() {
    auto stored = store.ListRegions();
    if (!stored.ok()) return stored.status();
    std::map<std::string, HealthThresholds> thresholds;
    for (const auto& rc : config.regions)
      thresholds[rc.name] = HealthThresholds{rc.probe.fall, rc.probe.rise};
    tracker = std::make_unique<HealthTracker>(
        *stored, *clock, [this](const HealthDecision& d) { OnHealthChange(d); }, HealthThresholds{},
        thresholds);
    RegionProbeSinks sinks;
    sinks.on_round = [this](const ProbeRound& r) { OnRound(r); };
    sinks.on_unparsed = [this](const std::string& region, const UnparsedAnswer& a) {
      unparsed.Record(region, a);
    };
    auto built = RegionProbes::Build(config, io, *timers, *clock, std::move(sinks));
    if (!built.ok()) return built.status();
    probes = std::move(built).value();

    LagMonitorOptions lag_options;
    lag_options.policy.max_staleness = config.policies.max_staleness;
    lag_options.policy.retention_margin = config.policies.retention_margin;
    lag = std::make_unique<LagMonitor>(
        probes->LagClients(), [this](const TableIdent& t) { return discovery.OwnerOf(t); }, *clock,
        lag_options);
    return Status::Ok();
  }

  void OnRound(const ProbeRound& round) {
    RecordProbeRound(live, round, clock->Now());
    // After recording: this replica's own view, which the quorum reads, has the round.
    std::string withheld = round.silent() && quorum ? quorum(round.region) : std::string();
    auto d = tracker->ApplyRound(round, std::move(withheld));
    if (!d.ok()) spdlog::warn("probe round for {}: {}", round.region, d.status().ToString());
  }

  // A region an alert says is suspect is probed at a quarter of its interval (at least
  // 100 ms, the shortest interval the config accepts) until the alert resolves, so that the
  // probes confirm or overrule the alert within fall rounds of the shorter interval.
  void ProbeFasterWhileSuspect(const std::string& region, HealthEvent event) {
    ProbeScheduler* scheduler = probes->SchedulerOf(region);
    const RegionConfig* rc = config.FindRegion(region);
    if (scheduler == nullptr || rc == nullptr) return;
    std::optional<std::chrono::milliseconds> interval;
    if (event == HealthEvent::kMarkSuspect) {
      interval = std::max(rc->probe.interval / 4, std::chrono::milliseconds(100));
    } else if (event != HealthEvent::kLiftSuspect) {
      return;
    }
    if (Status s = scheduler->SetIntervalOverride(region, interval); !s.ok())
      spdlog::warn("{}: probe interval while suspect: {}", region, s.ToString());
    else if (interval)
      spdlog::info("{}: suspect: probing every {} ms until the suspicion is lifted", region,
                   interval->count());
  }

  void OnHealthChange(const HealthDecision& d) {
    spdlog::info("{}", d.reason);
    last_persist = orchestrator.RecordRegionHealth(d, change_source);
    if (!last_persist.ok())
      spdlog::error("could not persist {}: {}", d.reason, last_persist.ToString());
  }

  void LagRound() {
    if (stopping) return;
    lag->Refresh([this](Result<LagReport> report) {
      if (report.ok()) {
        live.PublishLag(*report);
        discovery.ClaimDiscovered();
      } else {
        spdlog::warn("lag round failed: {}", report.status().ToString());
      }
      if (!stopping)
        lag_timer = timers->RunAfter(config.policies.lag_interval, [this] { LagRound(); });
    });
  }

  void Run() {
    probes->Start();
    LagRound();
    auto guard = boost::asio::make_work_guard(io);
    io.run();
  }
};

CatalogWatch::CatalogWatch(std::unique_ptr<Loop> loop) : loop_(std::move(loop)) {}

CatalogWatch::~CatalogWatch() { Stop(); }

Result<std::unique_ptr<CatalogWatch>> CatalogWatch::Create(const Config& config, StateStore& store,
                                                           Orchestrator& orchestrator,
                                                           std::shared_ptr<Clock> clock,
                                                           LiveView& live) {
  auto loop = std::make_unique<Loop>(config, store, orchestrator, std::move(clock), live);
  if (Status s = loop->Build(); !s.ok()) return s;
  return std::unique_ptr<CatalogWatch>(new CatalogWatch(std::move(loop)));
}

void CatalogWatch::SetUnreachableQuorum(QuorumCheck check) { loop_->quorum = std::move(check); }

void CatalogWatch::Start() {
  Loop* loop = loop_.get();
  loop->thread = std::thread([loop] { loop->Run(); });
}

void CatalogWatch::Stop() {
  if (!loop_ || !loop_->thread.joinable()) return;
  Loop* loop = loop_.get();
  // Stop the schedulers and timers on the loop's own thread, then let it wind down.
  std::promise<void> stopped;
  boost::asio::post(loop->io, [loop, &stopped] {
    loop->stopping = true;
    loop->probes->Stop();
    loop->lag_timer.Cancel();
    stopped.set_value();
  });
  stopped.get_future().wait();
  loop->io.stop();
  loop->thread.join();
}

Result<HealthDecision> CatalogWatch::ApplyHealthEvent(const std::string& region,
                                                      const HealthInput& input,
                                                      const std::string& actor) {
  if (!loop_ || !loop_->thread.joinable() || loop_->stopping)
    return Status::Unavailable("the daemon's health loop is not running");
  Loop* loop = loop_.get();
  auto done = std::make_shared<std::promise<Result<HealthDecision>>>();
  auto answer = done->get_future();
  boost::asio::post(loop->io, [loop, region, input, actor, done] {
    loop->change_source = actor;
    loop->last_persist = Status::Ok();
    Result<HealthDecision> d = loop->tracker->ApplyEvent(region, input);
    loop->change_source = "probe";
    // A lift ends the faster probing even when the machine refused it (an unreachable
    // region has no lift row): the alert is over either way.
    if (d.ok() || input.event == HealthEvent::kLiftSuspect)
      loop->ProbeFasterWhileSuspect(region, input.event);
    if (d.ok() && !loop->last_persist.ok()) {
      done->set_value(loop->last_persist);
      return;
    }
    done->set_value(std::move(d));
  });
  if (answer.wait_for(std::chrono::seconds(5)) != std::future_status::ready)
    return Status::Unavailable("the daemon's health loop did not answer within 5 s");
  return answer.get();
}

}  // namespace icewarden
