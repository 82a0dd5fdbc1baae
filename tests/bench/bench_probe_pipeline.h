// BenchProbePipeline: the daemon's real probe path, assembled for the benchmarks that measure
// it (detection_bench, probe_cost_bench): an io_context on a thread of its own, Asio timers,
// the Beast transport, one CatalogClient and one catalog_config probe per region, a
// ProbeScheduler and a HealthTracker fed by it. Header-only so that every *_bench.cpp stays
// one executable (tests/bench/CMakeLists.txt).
//
// Thread-safety: Start() and Stop() from the owning thread; the round and transition
// callbacks run on the loop thread and must guard whatever they share with other threads.
// Lifetime: Stop() (also called by the destructor) lets the rounds in flight finish, so the
// transport is destroyed only after the io_context has no work left.
#pragma once

#include <utility>  // before Asio (Boost 1.74 + C++20)

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <fstream>
#include <future>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "health/asio_timers.h"
#include "health/beast_transport.h"
#include "health/catalog_client.h"
#include "health/health_tracker.h"
#include "health/probe.h"
#include "health/probe_kinds.h"
#include "health/probe_scheduler.h"

namespace icewarden::bench {

struct PipelineRegion {
  std::string name;  // "us-east-1"
  std::string url;   // the catalog's base URI: "http://127.0.0.1:40123"
};

struct PipelineOptions {
  ProbeScheduleOptions schedule;
  HealthThresholds thresholds;
  std::string warehouse = "lab";
};

class BenchProbePipeline {
 public:
  using RoundSink = std::function<void(const ProbeRound&)>;
  using TransitionSink = std::function<void(const HealthDecision&)>;

  // Builds every piece; nothing runs until Start(). Errors name the region and the step.
  static Result<std::unique_ptr<BenchProbePipeline>> Make(std::vector<PipelineRegion> regions,
                                                          PipelineOptions options,
                                                          RoundSink on_round,
                                                          TransitionSink on_transition) {
    std::unique_ptr<BenchProbePipeline> p(new BenchProbePipeline());
    p->on_round_ = std::move(on_round);
    p->timers_ = MakeAsioTimers(p->io_);
    p->transport_ = MakeBeastTransport(p->io_);
    std::vector<Region> records;
    for (const auto& r : regions) {
      records.emplace_back();
      records.back().name = r.name;
    }
    p->tracker_ = std::make_unique<HealthTracker>(std::move(records), *p->clock_,
                                                  std::move(on_transition), options.thresholds);
    ProbePipelineRounds sink{p.get()};
    p->scheduler_ =
        std::make_unique<ProbeScheduler>(*p->timers_, SystemRandomBits(), options.schedule, sink);
    if (Status s = registerBuiltinProbes(p->registry_); !s.ok()) return s;
    for (const auto& r : regions) {
      CatalogClientOptions client_options;
      client_options.base_uri = r.url;
      client_options.warehouse = options.warehouse;
      client_options.default_deadline = options.schedule.timeout;
      // A probe reports what the catalog answered now; a 503 is a failed round, not a wait.
      client_options.retry.max_503_retries = 0;
      p->clients_.push_back(std::make_unique<CatalogClient>(
          client_options, CatalogClientEnv{*p->transport_, *p->clock_, SystemRandomBits()}));
      ProbeSpec spec;
      spec.kind = kCatalogConfigProbe;
      spec.region = r.name;
      ProbeContext context{*p->timers_, *p->clock_, *p->clients_.back(), *p->transport_, nullptr};
      auto probe = p->registry_.Create(spec, context);
      if (!probe.ok()) return probe.status();
      std::vector<std::unique_ptr<Probe>> probes;
      probes.push_back(std::move(*probe));
      if (Status s = p->scheduler_->AddRegion(r.name, std::move(probes)); !s.ok()) return s;
    }
    return p;
  }

  ~BenchProbePipeline() { Stop(); }
  BenchProbePipeline(const BenchProbePipeline&) = delete;
  BenchProbePipeline& operator=(const BenchProbePipeline&) = delete;

  // Starts the loop thread and every region's first round.
  void Start() {
    work_.emplace(io_.get_executor());
    boost::asio::post(io_, [this] { scheduler_->Start(); });
    thread_ = std::thread([this] { io_.run(); });
  }

  // Stops the scheduler on the loop, then waits for the exchanges in flight (each bounded
  // by the probe timeout) before the loop thread returns. Idempotent.
  void Stop() {
    if (!thread_.joinable()) return;
    std::promise<void> stopped;
    boost::asio::post(io_, [this, &stopped] {
      scheduler_->Stop();
      stopped.set_value();
    });
    stopped.get_future().wait();
    work_.reset();
    thread_.join();
  }

 private:
  // The scheduler's sink: every round goes to the tracker, then to the benchmark.
  struct ProbePipelineRounds {
    BenchProbePipeline* pipeline;
    void operator()(const ProbeRound& round) const {
      (void)pipeline->tracker_->ApplyRound(round);
      if (pipeline->on_round_) pipeline->on_round_(round);
    }
  };

  BenchProbePipeline() = default;

  // Declaration order is destruction order in reverse: the io_context outlives the rest.
  boost::asio::io_context io_;
  std::optional<boost::asio::executor_work_guard<boost::asio::io_context::executor_type>> work_;
  std::shared_ptr<Clock> clock_ = SystemClock();
  std::unique_ptr<Timers> timers_;
  std::unique_ptr<HttpTransport> transport_;
  ProbeRegistry registry_;
  std::vector<std::unique_ptr<CatalogClient>> clients_;
  std::unique_ptr<HealthTracker> tracker_;
  std::unique_ptr<ProbeScheduler> scheduler_;
  RoundSink on_round_;
  std::thread thread_;
};

// "1.10 3.02 3.61" from /proc/loadavg: the machine is shared, so every result says how busy
// it was.
inline std::string LoadAverage() {
  std::ifstream in("/proc/loadavg");
  std::string one, five, fifteen;
  in >> one >> five >> fifteen;
  return one + " " + five + " " + fifteen;
}

}  // namespace icewarden::bench
