// GatewayMetrics: what a gateway counts, and its /metrics page (Prometheus text format 0.0.4).
//
//   icewarden_gateway_requests_total{route,code,region}   counter; route is the spec's
//                                     operationId ("updateTable"), region "" when none answered
//   icewarden_gateway_refused_total{reason}               counter: store_unreadable,
//                                     spans_owners, failover_in_progress, owner_fenced,
//                                     owned_elsewhere, queue_full, epoch_moved
//   icewarden_gateway_forward_duration_seconds{region,kind}  histogram of each exchange with a
//                                     catalog, kind read | write, buckets from 0.5 ms to 10 s
//   icewarden_gateway_commits_queued, icewarden_gateway_writes_in_flight   gauges (given at render)
//   icewarden_gateway_store_readable  gauge 0/1
//   icewarden_gateway_ownership_reads_total{source}  counter: kept (a row kept for the current
//                                     snapshot) | store (read from the store)
// Label sets are bounded: routes by the spec's operations, codes by HTTP, regions by config.
// Thread-safety: every method may be called from any thread.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <tuple>

namespace icewarden {

class GatewayMetrics {
 public:
  static constexpr std::array<double, 14> kBuckets = {
      0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0};

  void CountRequest(const std::string& route, int code, const std::string& region);
  void CountRefusal(const std::string& reason);
  void ObserveForward(const std::string& region, bool write, std::chrono::nanoseconds took);

  struct Gauges {
    std::size_t queued = 0;
    std::size_t in_flight = 0;
    bool store_readable = false;
    std::int64_t ownership_kept = 0;   // ownership rows answered from those kept
    std::int64_t ownership_store = 0;  // read from the store
  };
  std::string Render(const Gauges& gauges) const;

 private:
  struct Histogram {
    std::array<std::uint64_t, kBuckets.size()> buckets{};
    std::uint64_t count = 0;
    double sum = 0;
  };
  mutable std::mutex mu_;
  std::map<std::tuple<std::string, int, std::string>, std::uint64_t> requests_;
  std::map<std::string, std::uint64_t> refused_;
  std::map<std::pair<std::string, std::string>, Histogram> forwards_;
};

}  // namespace icewarden
