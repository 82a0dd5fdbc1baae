// The HTTP API as a pure function: ApiRequest in, ApiResponse out. No sockets, no Boost:
// http_server.h does the I/O and calls Api::Handle, and the tests call it directly.
//
// Routes: the table in api.cpp (Api::RouteTable lists it), each forwarding to its resource's
// file here (audit.h, drills.h, events.h, failovers.h, lag.h, ownership.h, pauses.h,
// readiness.h, regions.h, ui.h, webhooks.h). docs/openapi.yaml documents every route, its
// parameters, bodies, answers and permission; tests/unit/orchestrator/openapi_doc_test.cpp
// keeps the two in step.
// Field shapes are in state/record_json.h; permissions per role in auth.cpp.
//
// Errors are {"error":{"code":C,"message":M}}: 400 bad_request (bad or unknown query
// parameter, saying which and how to fix it), 401 unauthorized (with WWW-Authenticate:
// Bearer), 403 forbidden, 404 not_found (route or id), 405 method_not_allowed (with
// Allow), 409 refused / conflict, 413 payload_too_large, 414 uri_too_long, 500 store_error
// (the store's Status) or internal, 503 unavailable / not_ready.
//
// Thread-safety: Handle may be called concurrently from any number of threads.
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "orchestrator/config/config.h"
#include "state/audit_seal.h"
#include "state/clock.h"
#include "state/region_health_machine.h"
#include "state/state_store.h"

namespace icewarden {

class Dashboard;
class DrillService;
class FailoverService;
class LiveView;
class ReadinessBoard;
class WebhookReceiver;

// Applies a region overlay event (fence, unfence) as `actor`, persisting and auditing it.
using RegionEventSink = std::function<Result<HealthDecision>(
    const std::string& region, const HealthInput& input, const std::string& actor)>;

struct ApiRequest {
  std::string method;                          // "GET"
  std::string target;                          // path + query, as sent: "/api/v1/audit?limit=5"
  std::map<std::string, std::string> headers;  // lower-case names
  std::string body;
  std::string remote;  // "127.0.0.1:5555", for the audit log
};

// A response that goes on after its headers (server-sent events): the server calls Poll()
// every poll interval from its event loop and writes what it returns, until Poll() returns
// nullopt, the client goes away, or the server stops. Poll() must be quick (a store read).
class ApiStream {
 public:
  virtual ~ApiStream() = default;
  virtual std::optional<std::string> Poll() = 0;
};

struct ApiResponse {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;  // besides Content-Type
  // Set: `body` is written first, then the stream's text as it comes; no Content-Length,
  // and the connection closes when the stream ends.
  std::shared_ptr<ApiStream> stream;
};

// Largest request body Handle accepts (the server enforces the same limit while reading).
inline constexpr std::size_t kApiMaxBodyBytes = 1 << 20;
// The webhooks' bound instead: Alertmanager posts a whole alert group in one body and does not
// retry a 4xx, so a group over the bound is a page lost. 16 MiB is many times the 3,000-alert
// group (over 1 MiB) of the e2e test; the shipped Alertmanager config caps a group with
// max_alerts, and the 413 says how.
inline constexpr std::string_view kApiWebhookPrefix = "/api/v1/webhooks/";
inline constexpr std::size_t kApiMaxWebhookBodyBytes = 16 << 20;
inline constexpr std::string_view kApiWebhookBodyAdvice =
    "Alertmanager does not retry a 4xx, so this notification is lost: cap each group with "
    "max_alerts in the receiver's webhook_config (examples/alerting/alertmanager.yml sets "
    "10000)";
// The bound for a request target: kApiMaxWebhookBodyBytes under kApiWebhookPrefix, else
// kApiMaxBodyBytes.
inline std::size_t ApiMaxBodyBytes(std::string_view target) {
  return target.substr(0, kApiWebhookPrefix.size()) == kApiWebhookPrefix ? kApiMaxWebhookBodyBytes
                                                                         : kApiMaxBodyBytes;
}
// Longest Authorization header the API reads (a bearer token or a webhook's credentials).
inline constexpr std::size_t kApiMaxAuthorizationBytes = 4096;
// Longest request target Handle accepts.
inline constexpr std::size_t kApiMaxTargetBytes = 8192;

// A JSON error response: {"error":{"code":code,"message":message}}.
ApiResponse JsonErrorResponse(int status, std::string_view code, std::string_view message);
// `body` as the response, written through DumpJson.
ApiResponse JsonResponse(int status, const nlohmann::json& body);

// One row of the router's table, for documentation checks (docs/openapi.yaml is tested
// against it): the method, the path with "{id}" for its one variable segment, whether a
// token is needed, and the query parameters the route accepts.
struct ApiRouteInfo {
  std::string_view method;
  std::string_view pattern;
  bool needs_token = false;
  std::vector<std::string_view> query_params;
};

class Api {
 public:
  // Every route Handle answers, in the order they are matched.
  static std::vector<ApiRouteInfo> RouteTable();

  // `store` and `clock` must outlive the Api. `ready` answers /readyz; an empty function
  // means always ready. Tokens are copied (as digests) from `config`.
  Api(const ApiConfig& config, StateStore& store, const Clock& clock, std::function<bool()> ready);
  ~Api();
  Api(const Api&) = delete;
  Api& operator=(const Api&) = delete;

  // Answers one request. Reads the store; never touches a socket or the wall clock; never
  // throws (an unexpected exception becomes a 500). Every response is counted in
  // icewarden_http_requests_total.
  ApiResponse Handle(const ApiRequest& request);

  // Where observations live (lag, probe rounds). Optional: without it /api/v1/lag answers
  // 503 and /metrics has no lag families. `live` must outlive the Api.
  void SetLiveView(const LiveView* live);

  // Where standing readiness is read (GET /api/v1/readiness, failover plans, /metrics).
  // Optional: without it /api/v1/readiness answers 503. `board` must outlive the Api.
  void SetReadiness(const ReadinessBoard* board);

  // Where the failover commands go (POST routes, failovers.h). Optional: without it they
  // answer 503. `service` must outlive the Api.
  void SetFailoverService(FailoverService* service);

  // Where the drill routes go (drills.h). Optional: without it they answer 503. `service`
  // must outlive the Api.
  void SetDrillService(DrillService* service);

  // Where the webhook routes go. Optional: without it they answer 503. `receiver` must
  // outlive the Api.
  void SetWebhookReceiver(WebhookReceiver* receiver);

  // Where the region overlay commands go (regions.h): in serve, the watch's health machine.
  // Optional: without it they answer 503.
  void SetRegionEvents(RegionEventSink sink);

  // The dashboard's files (GET / and /ui/NAME, ui.h). Optional: without it those routes
  // answer 503. `dashboard` must outlive the Api.
  void SetDashboard(const Dashboard* dashboard);

  // GET /api/v1/cluster's answer (orchestrator/cluster/): the replicas, the leader and every
  // replica's view. Optional: without it the route says this is a single replica.
  void SetClusterStatus(std::function<nlohmann::json()> status);

  // Config reloads (orchestrator/serve/config_reload.h): /metrics'
  // icewarden_config_last_reload_{successful,success_timestamp_seconds} from `status`
  // (successful, Unix ms of the last success), and POST /api/v1/config/reload (admin) answered
  // by `reload`. Optional: without them the families are absent and the route answers 503.
  void SetConfigReloadStatus(std::function<std::pair<bool, std::int64_t>()> status);
  void SetConfigReload(std::function<ApiResponse(const std::string& actor)> reload);
  // The audit log's seal (orchestrator/serve/audit_seal_watch.h): /metrics'
  // icewarden_audit_chain_* from the latest pass. Optional: without it the families are absent.
  void SetAuditSealStatus(std::function<std::optional<AuditSealStatus>()> status);

  // Counts a response that the server produced itself (e.g. 413 while reading), so the
  // metrics see every response.
  void CountResponse(int status);

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace icewarden
