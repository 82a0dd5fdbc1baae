// RegionProbes: every region's probes, as the config describes them, on one io_context: per
// region a transport (the region's TLS options and its own connection pool), two catalog
// clients (probes do not wait out 503 Retry-After, since a probe has its own deadline; lag
// rounds ride out a busy catalog) and a probe scheduler. The leader's CatalogWatch and a
// standby's prober (orchestrator/cluster/) build the same probes from the same config, so
// what one replica's view says of a region means what another's does.
//
// Thread-safety: built, started and stopped on the io_context's thread (or before it runs);
// the rounds arrive there too.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "state/status.h"

namespace boost::asio {
class io_context;
}  // namespace boost::asio

namespace icewarden {

class CatalogClient;
class Clock;
class HttpTransport;
class ProbeScheduler;
class TcpConnector;
class Timers;
struct Config;
struct ProbeRound;
struct UnparsedAnswer;

struct RegionProbeSinks {
  std::function<void(const ProbeRound&)> on_round;
  // An answer a catalog gave that icewarden could not parse (DESIGN.md rule 7).
  std::function<void(const std::string& region, const UnparsedAnswer&)> on_unparsed;
};

class RegionProbes {
 public:
  // Fails with kInvalidArgument when a probe cannot be built from its settings (a config
  // error). `config`, `io`, `timers` and `clock` must outlive the probes.
  static Result<std::unique_ptr<RegionProbes>> Build(const Config& config,
                                                     boost::asio::io_context& io, Timers& timers,
                                                     Clock& clock, RegionProbeSinks sinks);
  ~RegionProbes();

  void Start();
  void Stop();  // idempotent; rounds in flight are dropped
  // The lag rounds' clients, by region.
  std::map<std::string, CatalogClient*> LagClients() const;
  // The region's scheduler (nullptr for a region not in the config).
  ProbeScheduler* SchedulerOf(const std::string& region) const;

 private:
  RegionProbes();
  std::unique_ptr<TcpConnector> tcp_;
  std::map<std::string, std::unique_ptr<HttpTransport>> transports_;
  std::map<std::string, std::unique_ptr<CatalogClient>> probe_clients_, lag_clients_;
  std::vector<std::unique_ptr<ProbeScheduler>> schedulers_;
  std::map<std::string, ProbeScheduler*> scheduler_of_;
};

}  // namespace icewarden
