#include "orchestrator/watch/region_probes.h"

#include <utility>  // before Asio: Boost 1.74 + GCC 12

#include <boost/asio/io_context.hpp>

#include "health/beast_transport.h"
#include "health/catalog_client.h"
#include "health/probe.h"
#include "health/probe_kinds.h"
#include "health/probe_scheduler.h"
#include "health/uuid_v7.h"
#include "orchestrator/config/catalog_options.h"
#include "orchestrator/config/config.h"
#include "state/clock.h"

namespace icewarden {
namespace {

// "http://127.0.0.1:18181/api" -> host "127.0.0.1", port 18181 (80/443 by scheme).
std::optional<HostPort> HostPortOf(const std::string& uri) {
  auto scheme_end = uri.find("://");
  if (scheme_end == std::string::npos) return std::nullopt;
  const bool https = uri.compare(0, scheme_end, "https") == 0;
  std::string authority = uri.substr(scheme_end + 3);
  authority = authority.substr(0, authority.find('/'));
  const auto colon = authority.rfind(':');
  const auto bracket = authority.find(']');
  if (colon != std::string::npos && (bracket == std::string::npos || colon > bracket))
    return ParseHostPort(authority);
  if (authority.size() > 2 && authority.front() == '[' && authority.back() == ']')
    authority = authority.substr(1, authority.size() - 2);
  if (authority.empty()) return std::nullopt;
  return HostPort{authority, static_cast<std::uint16_t>(https ? 443 : 80)};
}

Result<ProbeSpec> SpecFor(const RegionConfig& rc, const std::string& kind) {
  ProbeSpec spec;
  spec.kind = kind;
  spec.region = rc.name;
  const ProbeSettings& p = rc.probe;
  if (!p.canary_table.empty()) spec.table = TableIdent::Parse(p.canary_table);
  spec.allow_writes = kind == "canary_commit";  // listing it is the operator's consent
  if (kind == "tcp") {
    // An explicit target passed config validation with the same parser; a derived one may not.
    auto target = p.tcp_address.empty() ? HostPortOf(rc.catalog_uri) : ParseHostPort(p.tcp_address);
    if (!target)
      return Status::InvalidArgument("region " + rc.name + ": cannot derive tcp target from " +
                                     (p.tcp_address.empty() ? rc.catalog_uri : p.tcp_address));
    spec.host = target->host;
    spec.port = target->port;
  }
  if (kind == "dns") {
    spec.dns_name = p.dns_name;
    auto server = ParseHostPort(p.dns_server);
    if (!server)
      return Status::InvalidArgument("region " + rc.name + ": dns server '" + p.dns_server +
                                     "' is not host:port");
    spec.dns_server_host = server->host;
    spec.dns_server_port = server->port;
    spec.expect = p.dns_expect;
  }
  return spec;
}

}  // namespace

RegionProbes::RegionProbes() = default;
RegionProbes::~RegionProbes() = default;

Result<std::unique_ptr<RegionProbes>> RegionProbes::Build(const Config& config,
                                                          boost::asio::io_context& io,
                                                          Timers& timers, Clock& clock,
                                                          RegionProbeSinks sinks) {
  ProbeRegistry registry;
  if (Status s = registerBuiltinProbes(registry); !s.ok()) return s;
  std::unique_ptr<RegionProbes> p(new RegionProbes());
  p->tcp_ = MakeAsioTcpConnector(io);
  for (const auto& rc : config.regions) {
    CatalogClientOptions options = CatalogOptionsFor(rc);
    auto& transport = p->transports_[rc.name];
    transport = MakeBeastTransport(io, options.tls);
    options.default_deadline = rc.probe.timeout;
    options.retry.max_503_retries = 0;
    if (sinks.on_unparsed) {
      options.on_unparsed = [sink = sinks.on_unparsed, region = rc.name](const UnparsedAnswer& a) {
        sink(region, a);
      };
    }
    auto& probe_client = p->probe_clients_[rc.name];
    probe_client = std::make_unique<CatalogClient>(
        options, CatalogClientEnv{*transport, clock, SystemRandomBits()});
    options.default_deadline = std::chrono::seconds(10);
    options.retry = RetryPolicy{};
    p->lag_clients_[rc.name] = std::make_unique<CatalogClient>(
        options, CatalogClientEnv{*transport, clock, SystemRandomBits()});

    std::vector<std::unique_ptr<Probe>> probes;
    for (const auto& kind : rc.probe.kinds) {
      auto spec = SpecFor(rc, kind);
      if (!spec.ok()) return spec.status();
      auto probe = registry.Create(
          *spec, ProbeContext{timers, clock, *probe_client, *transport, p->tcp_.get()});
      if (!probe.ok())
        return Status::InvalidArgument("region " + rc.name + ", probe " + kind + ": " +
                                       probe.status().message());
      probes.push_back(std::move(*probe));
    }
    ProbeScheduleOptions schedule;
    schedule.interval = rc.probe.interval;
    schedule.timeout = rc.probe.timeout;
    auto scheduler =
        std::make_unique<ProbeScheduler>(timers, SystemRandomBits(), schedule, sinks.on_round);
    if (Status s = scheduler->AddRegion(rc.name, std::move(probes)); !s.ok()) return s;
    p->scheduler_of_[rc.name] = scheduler.get();
    p->schedulers_.push_back(std::move(scheduler));
  }
  return p;
}

void RegionProbes::Start() {
  for (auto& s : schedulers_) s->Start();
}

void RegionProbes::Stop() {
  for (auto& s : schedulers_) s->Stop();
}

std::map<std::string, CatalogClient*> RegionProbes::LagClients() const {
  std::map<std::string, CatalogClient*> out;
  for (const auto& [region, client] : lag_clients_) out[region] = client.get();
  return out;
}

ProbeScheduler* RegionProbes::SchedulerOf(const std::string& region) const {
  auto it = scheduler_of_.find(region);
  return it == scheduler_of_.end() ? nullptr : it->second;
}

}  // namespace icewarden
