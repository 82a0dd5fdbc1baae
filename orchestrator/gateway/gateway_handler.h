// GatewayHandler: one request to the gateway in, one answer out (the HttpServer does the I/O).
//
//   ClassifyRequest ──read──► RegionCatalogs (read region, then other healthy regions)
//         │
//         └──write──► store rows ─► WriteAdmission::Admit ─► CommitQueue turn ─► rows again,
//                     Recheck (same epochs, still open) ─► RegionCatalogs (the owner) ─► answer
//
// Answers follow the REST spec's error model ({"error": {"message", "type", "code"}}). A
// refused write is 503 with Retry-After when waiting will help (the Java client retries a POST
// only then), 409 when another region writes the table, 400 when a request spans owners; a
// write whose exchange with the catalog failed is 503 when nothing reached the catalog and 502
// (the commit's state is unknown: reload and look) when it may have. Every answer says which
// region answered in X-Icewarden-Region. Refusals are audited once per table, reason and
// minute.
// Thread-safety: Handle may be called from any number of threads at once.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "orchestrator/api/api.h"
#include "orchestrator/gateway/commit_queue.h"
#include "orchestrator/gateway/gateway_metrics.h"
#include "orchestrator/gateway/write_admission.h"

namespace icewarden {

class RegionCatalogs;
class StateStore;
struct CatalogRoute;
struct Config;
struct GatewayConfig;

class GatewayHandler {
 public:
  // Everything passed must outlive the handler. `advertise` is the base URI engines are sent
  // back to by the config endpoint.
  GatewayHandler(const Config& config, const GatewayConfig& gateway, std::string advertise,
                 StateStore& store, RegionCatalogs& catalogs, WriteAdmission& admission,
                 CommitQueue& queue, GatewayMetrics& metrics);

  ApiResponse Handle(const ApiRequest& request);

 private:
  ApiResponse Admin(const ApiRequest& request);
  ApiResponse ConfigEndpoint(const ApiRequest& request);
  ApiResponse Read(const ApiRequest& request, const CatalogRoute& route);
  ApiResponse Write(const ApiRequest& request, const CatalogRoute& route);
  ApiResponse Refuse(const ApiRequest& request, const WriteVerdict& verdict);
  // The regions a read may go to, in order: `first` (when set), the read region, then every
  // other forwardable region that is healthy.
  std::vector<std::string> ReadOrder(const std::string& first) const;
  void AuditRefusal(const ApiRequest& request, const WriteVerdict& verdict);

  const Config& config_;
  const GatewayConfig& gateway_;
  const std::string advertise_;
  StateStore& store_;
  RegionCatalogs& catalogs_;
  WriteAdmission& admission_;
  CommitQueue& queue_;
  GatewayMetrics& metrics_;
  std::mutex audit_mu_;
  std::map<std::string, std::chrono::steady_clock::time_point> audited_;  // table + reason
};

}  // namespace icewarden
