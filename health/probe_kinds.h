// The built-in probe kinds, one .cpp file each. Callers create probes through a
// ProbeRegistry (probe.h); these factories are what registerBuiltinProbes() registers.
// Every factory validates the spec fields its kind needs and returns kInvalidArgument
// naming the region and the missing field.
//
//   catalog_config  GET /v1/config, fresh every time: proves the catalog answers now.
//   table_load      loads spec.table; sends If-None-Match with the last ETag, a 304 passes.
//   canary_commit   set-properties icewarden.canary=<timestamp> on spec.table, guarded by
//                   assert-table-uuid from a load; proves the write path. Needs
//                   spec.allow_writes. A commit whose state is unknown fails.
//   tcp             connects to spec.host:spec.port through ProbeContext::tcp.
//   dns             asks spec.dns_server for A (then AAAA) records of spec.dns_name, with
//                   ldns on a worker thread of its own; passes when there is an answer and,
//                   if spec.expect is set, it is among the addresses or CNAME targets.
// Thread-safety: the probes run on the loop thread (probe.h).
#pragma once

#include <memory>

#include "health/probe.h"

namespace boost::asio {
class io_context;
}  // namespace boost::asio

namespace icewarden {

inline constexpr const char* kCatalogConfigProbe = "catalog_config";
inline constexpr const char* kTableLoadProbe = "table_load";
inline constexpr const char* kCanaryCommitProbe = "canary_commit";
inline constexpr const char* kTcpProbe = "tcp";
inline constexpr const char* kDnsProbe = "dns";

// The property canary_commit sets.
inline constexpr const char* kCanaryProperty = "icewarden.canary";

Result<std::unique_ptr<Probe>> MakeCatalogConfigProbe(const ProbeSpec& spec,
                                                      const ProbeContext& ctx);
Result<std::unique_ptr<Probe>> MakeTableLoadProbe(const ProbeSpec& spec, const ProbeContext& ctx);
Result<std::unique_ptr<Probe>> MakeCanaryCommitProbe(const ProbeSpec& spec,
                                                     const ProbeContext& ctx);
Result<std::unique_ptr<Probe>> MakeTcpProbe(const ProbeSpec& spec, const ProbeContext& ctx);
Result<std::unique_ptr<Probe>> MakeDnsProbe(const ProbeSpec& spec, const ProbeContext& ctx);

// The real TcpConnector: Asio resolve + async_connect on `io`, which must outlive it.
std::unique_ptr<TcpConnector> MakeAsioTcpConnector(boost::asio::io_context& io);

}  // namespace icewarden
