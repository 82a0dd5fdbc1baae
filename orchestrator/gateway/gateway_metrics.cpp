#include "orchestrator/gateway/gateway_metrics.h"

#include <sstream>

#include "orchestrator/build_info.h"

namespace icewarden {
namespace {

// Label values come from config names and the spec's operations, but escape anyway.
std::string Label(const std::string& v) {
  std::string out;
  for (char c : v) {
    if (c == '\\' || c == '"') out.push_back('\\');
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out.push_back(c);
  }
  return out;
}

std::string Number(double v) {
  std::ostringstream out;
  out.precision(9);
  out << v;
  return out.str();
}

}  // namespace

void GatewayMetrics::CountRequest(const std::string& route, int code, const std::string& region) {
  std::lock_guard lock(mu_);
  ++requests_[{route, code, region}];
}

void GatewayMetrics::CountRefusal(const std::string& reason) {
  std::lock_guard lock(mu_);
  ++refused_[reason];
}

void GatewayMetrics::ObserveForward(const std::string& region, bool write,
                                    std::chrono::nanoseconds took) {
  const double s = std::chrono::duration<double>(took).count();
  std::lock_guard lock(mu_);
  Histogram& h = forwards_[{region, write ? "write" : "read"}];
  for (std::size_t i = 0; i < kBuckets.size(); ++i) {
    if (s <= kBuckets[i]) {
      ++h.buckets[i];
      break;
    }
  }
  ++h.count;
  h.sum += s;
}

std::string GatewayMetrics::Render(const Gauges& gauges) const {
  std::ostringstream out;
  std::lock_guard lock(mu_);
  out << "# HELP icewarden_build_info Build information; the value is always 1.\n"
         "# TYPE icewarden_build_info gauge\n"
         "icewarden_build_info{version=\""
      << Label(BuildVersion()) << "\",revision=\"" << Label(BuildRevision()) << "\"} 1\n";
  out << "# HELP icewarden_gateway_requests_total Requests answered, by route, status and the "
         "region that answered.\n# TYPE icewarden_gateway_requests_total counter\n";
  for (const auto& [key, n] : requests_) {
    const auto& [route, code, region] = key;
    out << "icewarden_gateway_requests_total{route=\"" << Label(route) << "\",code=\"" << code
        << "\",region=\"" << Label(region) << "\"} " << n << "\n";
  }
  out << "# HELP icewarden_gateway_refused_total Writes refused by the gateway, by reason.\n"
         "# TYPE icewarden_gateway_refused_total counter\n";
  for (const auto& [reason, n] : refused_) {
    out << "icewarden_gateway_refused_total{reason=\"" << Label(reason) << "\"} " << n << "\n";
  }
  out << "# HELP icewarden_gateway_forward_duration_seconds One exchange with a region's catalog.\n"
         "# TYPE icewarden_gateway_forward_duration_seconds histogram\n";
  for (const auto& [key, h] : forwards_) {
    const std::string labels =
        "region=\"" + Label(key.first) + "\",kind=\"" + Label(key.second) + "\"";
    std::uint64_t cumulative = 0;
    for (std::size_t i = 0; i < kBuckets.size(); ++i) {
      cumulative += h.buckets[i];
      out << "icewarden_gateway_forward_duration_seconds_bucket{" << labels << ",le=\""
          << Number(kBuckets[i]) << "\"} " << cumulative << "\n";
    }
    out << "icewarden_gateway_forward_duration_seconds_bucket{" << labels << ",le=\"+Inf\"} "
        << h.count << "\n";
    out << "icewarden_gateway_forward_duration_seconds_sum{" << labels << "} " << Number(h.sum)
        << "\n";
    out << "icewarden_gateway_forward_duration_seconds_count{" << labels << "} " << h.count << "\n";
  }
  out << "# HELP icewarden_gateway_commits_queued Writes waiting for their table's turn.\n"
         "# TYPE icewarden_gateway_commits_queued gauge\n"
      << "icewarden_gateway_commits_queued " << gauges.queued << "\n";
  out << "# HELP icewarden_gateway_writes_in_flight Writes let through and not yet answered.\n"
         "# TYPE icewarden_gateway_writes_in_flight gauge\n"
      << "icewarden_gateway_writes_in_flight " << gauges.in_flight << "\n";
  out << "# HELP icewarden_gateway_store_readable 1 when the last read of the ownership record "
         "succeeded.\n# TYPE icewarden_gateway_store_readable gauge\n"
      << "icewarden_gateway_store_readable " << (gauges.store_readable ? 1 : 0) << "\n";
  out << "# HELP icewarden_gateway_ownership_reads_total Ownership rows the gateway needed, by "
         "where they came from (kept for the current snapshot, or read from the store).\n"
         "# TYPE icewarden_gateway_ownership_reads_total counter\n"
      << "icewarden_gateway_ownership_reads_total{source=\"kept\"} " << gauges.ownership_kept
      << "\n"
      << "icewarden_gateway_ownership_reads_total{source=\"store\"} " << gauges.ownership_store
      << "\n";
  return out.str();
}

}  // namespace icewarden
