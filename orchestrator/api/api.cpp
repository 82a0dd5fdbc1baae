#include "orchestrator/api/api.h"

#include <algorithm>
#include <cstdint>
#include <exception>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string_view>

#include "orchestrator/api/audit.h"
#include "orchestrator/api/auth.h"
#include "orchestrator/api/command_body.h"
#include "orchestrator/api/drills.h"
#include "orchestrator/api/events.h"
#include "orchestrator/api/failovers.h"
#include "orchestrator/api/lag.h"
#include "orchestrator/api/metrics_exposition.h"
#include "orchestrator/api/ownership.h"
#include "orchestrator/api/pauses.h"
#include "orchestrator/api/query.h"
#include "orchestrator/api/readiness.h"
#include "orchestrator/api/regions.h"
#include "orchestrator/api/ui.h"
#include "orchestrator/api/webhooks.h"
#include "orchestrator/build_info.h"
#include "orchestrator/drills/drill_service.h"
#include "orchestrator/failovers/failover_report.h"
#include "orchestrator/failovers/failover_service.h"
#include "orchestrator/readiness/readiness.h"
#include "orchestrator/watch/live_view.h"
#include "state/pause_store.h"
#include "state/record_json.h"

namespace icewarden {
namespace {

using nlohmann::json;

ApiResponse Unauthorized(const std::string& message, bool token_was_sent) {
  ApiResponse res = JsonErrorResponse(401, "unauthorized", message);
  res.headers.emplace_back("WWW-Authenticate",
                           token_was_sent ? "Bearer realm=\"icewarden\", error=\"invalid_token\""
                                          : "Bearer realm=\"icewarden\"");
  return res;
}

// What a route handler is given: the checked query, the decoded id of "{id}" routes, and
// for commands the caller and the body.
struct Call {
  const QueryParams& query;
  const std::string& id;
  const Principal& principal;
  const ApiRequest& request;
};

ActorKind ActorOf(Role role) {
  switch (role) {
    case Role::kAdmin:
      return ActorKind::kAdmin;
    case Role::kApprover:
      return ActorKind::kApprover;
    default:
      return ActorKind::kOperator;
  }
}

}  // namespace

ApiResponse JsonResponse(int status, const json& body) {
  ApiResponse res;
  res.status = status;
  res.body = DumpJson(body);
  return res;
}

ApiResponse JsonErrorResponse(int status, std::string_view code, std::string_view message) {
  ApiResponse res;
  res.status = status;
  res.body = ErrorJson(code, message);
  return res;
}

class Api::Impl {
 public:
  Impl(const ApiConfig& config, StateStore& store, const Clock& clock, std::function<bool()> ready)
      : verifier_(config.tokens), store_(store), clock_(clock), ready_(std::move(ready)) {}

  ApiResponse Handle(const ApiRequest& request) {
    ApiResponse res;
    try {
      res = Dispatch(request);
    } catch (const std::exception& e) {
      res = JsonErrorResponse(500, "internal", std::string("unexpected error: ") + e.what());
    } catch (...) {
      res = JsonErrorResponse(500, "internal", "unexpected error");
    }
    CountResponse(res.status);
    return res;
  }

  void CountResponse(int status) {
    std::lock_guard lock(mu_);
    ++responses_[status];
  }

 private:
  using RouteFn = ApiResponse (Impl::*)(const Call&);
  struct Route {
    std::string_view method;   // GET | POST
    std::string_view pattern;  // exact path, or one "{id}" segment with a prefix and a suffix
    std::optional<Permission> permission;  // nullopt: no token needed
    std::vector<std::string_view> params;  // the query parameters it accepts
    RouteFn fn;
  };

  // The route table, read top to bottom.
  static const std::vector<Route>& Routes() {
    static const std::vector<Route> kRoutes = {
        {"GET", "/healthz", std::nullopt, {}, &Impl::Healthz},
        {"GET", "/readyz", std::nullopt, {}, &Impl::Readyz},
        {"GET", "/metrics", std::nullopt, {}, &Impl::Metrics},
        // The dashboard's page and files: static, no token (the page asks for one).
        {"GET", "/", std::nullopt, {}, &Impl::DashboardIndex},
        {"GET", "/ui/{id}", std::nullopt, {}, &Impl::DashboardAsset},
        {"GET", "/api/v1/session", Permission::kReadRegions, {}, &Impl::Session},
        {"GET", "/api/v1/regions", Permission::kReadRegions, {}, &Impl::Regions},
        {"GET", "/api/v1/cluster", Permission::kReadRegions, {}, &Impl::Cluster},
        {"POST", "/api/v1/regions/{id}/fence", Permission::kSetRegionOverlay, {}, &Impl::Fence},
        {"POST", "/api/v1/regions/{id}/unfence", Permission::kSetRegionOverlay, {}, &Impl::Unfence},
        {"GET",
         "/api/v1/ownership",
         Permission::kReadOwnership,
         {"owner", "namespace", "state", "after", "limit"},
         &Impl::OwnershipList},
        {"GET",
         "/api/v1/failovers",
         Permission::kReadFailovers,
         {"limit", "active"},
         &Impl::FailoverList},
        {"POST", "/api/v1/failovers", Permission::kProposeFailover, {}, &Impl::Propose},
        {"GET",
         "/api/v1/failovers/{id}",
         Permission::kReadFailovers,
         {"plan"},
         &Impl::FailoverDetail},
        {"GET", "/api/v1/failovers/{id}/report", Permission::kReadFailovers, {}, &Impl::Report},
        {"POST",
         "/api/v1/failovers/{id}/approve",
         Permission::kApproveFailover,
         {},
         &Impl::Approve},
        {"POST",
         "/api/v1/failovers/{id}/fencing-confirmation",
         Permission::kConfirmFencing,
         {},
         &Impl::ConfirmFencing},
        {"POST", "/api/v1/failovers/{id}/abort", Permission::kAbortFailover, {}, &Impl::Abort},
        {"POST", "/api/v1/failovers/{id}/ack", Permission::kAckFailover, {}, &Impl::Ack},
        {"GET", "/api/v1/drills", Permission::kReadFailovers, {"limit"}, &Impl::DrillList},
        {"POST", "/api/v1/drills/runs/{id}/notes", Permission::kNoteDrill, {}, &Impl::DrillNote},
        {"GET", "/api/v1/drills/runs/{id}", Permission::kReadFailovers, {}, &Impl::DrillReport},
        {"POST", "/api/v1/drills/{id}/runs", Permission::kRunDrill, {}, &Impl::DrillRun},
        {"GET", "/api/v1/pauses", Permission::kReadFailovers, {}, &Impl::PauseList},
        {"POST", "/api/v1/pauses", Permission::kPauseAutomation, {}, &Impl::Pause},
        {"POST", "/api/v1/pauses/resume", Permission::kPauseAutomation, {}, &Impl::Resume},
        {"POST", "/api/v1/config/reload", Permission::kReloadConfig, {}, &Impl::ReloadConfig},
        // Webhooks authenticate themselves (a receiver's credentials, or a signature).
        {"POST", "/api/v1/webhooks/alertmanager", std::nullopt, {}, &Impl::AlertmanagerWebhook},
        {"POST", "/api/v1/webhooks/generic/{id}", std::nullopt, {}, &Impl::GenericWebhook},
        {"GET",
         "/api/v1/audit",
         Permission::kReadAudit,
         {"after_seq", "limit", "target", "action", "actor"},
         &Impl::Audit},
        {"GET", "/api/v1/readiness", Permission::kReadFailovers, {}, &Impl::Readiness},
        {"GET", "/api/v1/events", Permission::kReadFailovers, {"after"}, &Impl::Events},
        {"GET",
         "/api/v1/lag",
         Permission::kReadRegions,
         {"table", "region", "state", "after", "after_replica", "limit"},
         &Impl::Lag},
    };
    return kRoutes;
  }

 public:
  static std::vector<ApiRouteInfo> RouteInfos() {
    std::vector<ApiRouteInfo> out;
    for (const Route& r : Routes())
      out.push_back(ApiRouteInfo{r.method, r.pattern, r.permission.has_value(), r.params});
    return out;
  }

 private:
  // "/healthz, /readyz, ...": every path once, in the table's order, for a 404.
  static const std::string& RouteList() {
    static const std::string kList = [] {
      std::string out;
      std::set<std::string_view> seen;
      for (const Route& r : Routes())
        if (seen.insert(r.pattern).second) out.append(out.empty() ? "" : ", ").append(r.pattern);
      return out;
    }();
    return kList;
  }

  // Whether `pattern` matches `path`, with the raw id segment for "{id}" patterns.
  static bool PathMatches(std::string_view pattern, std::string_view path, std::string_view* id) {
    constexpr std::string_view kId = "{id}";
    const auto at = pattern.find(kId);
    if (at == std::string_view::npos) return path == pattern;
    const std::string_view prefix = pattern.substr(0, at);
    const std::string_view suffix = pattern.substr(at + kId.size());
    if (path.size() <= prefix.size() + suffix.size()) return false;
    if (!path.starts_with(prefix) || !path.ends_with(suffix)) return false;
    const std::string_view rest =
        path.substr(prefix.size(), path.size() - prefix.size() - suffix.size());
    if (rest.empty() || rest.find('/') != std::string_view::npos) return false;
    *id = rest;
    return true;
  }

  // The route for `method` on `path`; nullptr with *allow listing the path's methods (empty:
  // no route has the path).
  static const Route* Match(std::string_view method, std::string_view path, std::string_view* id,
                            std::string* allow) {
    for (const Route& r : Routes()) {
      std::string_view seg;
      if (!PathMatches(r.pattern, path, &seg)) continue;
      if (r.method == method) {
        *id = seg;
        return &r;
      }
      if (allow->find(r.method) == std::string::npos)
        *allow += (allow->empty() ? "" : ", ") + std::string(r.method);
    }
    return nullptr;
  }

  ApiResponse Dispatch(const ApiRequest& req) {
    if (const std::size_t limit = ApiMaxBodyBytes(req.target); req.body.size() > limit) {
      std::string message = "request body is " + std::to_string(req.body.size()) +
                            " bytes; the limit is " + std::to_string(limit);
      if (limit == kApiMaxWebhookBodyBytes) message.append("; ").append(kApiWebhookBodyAdvice);
      return JsonErrorResponse(413, "payload_too_large", message);
    }
    if (req.target.size() > kApiMaxTargetBytes) {
      return JsonErrorResponse(
          414, "uri_too_long",
          "request target is longer than " + std::to_string(kApiMaxTargetBytes) + " bytes");
    }
    const SplitTarget target = SplitRequestTarget(req.target);
    std::string_view raw_id;
    std::string allow;
    const Route* route = Match(req.method, target.path, &raw_id, &allow);
    if (route == nullptr && allow.empty()) {
      return JsonErrorResponse(404, "not_found",
                               "no route for " + std::string(target.path) + "; the routes are " +
                                   RouteList() + " (docs/openapi.yaml)");
    }
    if (route == nullptr) {
      ApiResponse res = JsonErrorResponse(405, "method_not_allowed",
                                          "method " + req.method + " is not allowed on " +
                                              std::string(target.path) + "; use " + allow);
      res.headers.emplace_back("Allow", allow);
      return res;
    }
    Principal principal;
    if (route->permission) {
      if (auto denied = Authorize(req, *route->permission, &principal)) return *std::move(denied);
    }
    auto query = QueryParams::Parse(target.query);
    if (!query.ok()) return BadRequestResponse(query.status().message());
    if (Status s = query->OnlyAllowed(route->params); !s.ok())
      return BadRequestResponse(s.message());
    auto id = PercentDecode(raw_id, /*plus_is_space=*/false);
    if (!id.ok()) return BadRequestResponse("bad id in path: " + id.status().message());
    return (this->*(route->fn))(Call{*query, *id, principal, req});
  }

  // nullopt when the request carries a token whose role holds `permission`; otherwise the
  // 401 or 403 to send.
  std::optional<ApiResponse> Authorize(const ApiRequest& req, Permission permission,
                                       Principal* out) const {
    auto header = req.headers.find("authorization");
    if (header == req.headers.end()) {
      return Unauthorized("missing bearer token: send Authorization: Bearer TOKEN", false);
    }
    if (header->second.size() > kApiMaxAuthorizationBytes) {
      return Unauthorized("Authorization header is too long", true);
    }
    auto token = BearerToken(header->second);
    if (!token) {
      return Unauthorized("Authorization header is not a bearer token: send Bearer TOKEN", true);
    }
    auto principal = verifier_.Verify(*token);
    if (!principal) return Unauthorized("invalid bearer token", true);
    if (!RoleAllows(principal->role, permission)) {
      return JsonErrorResponse(403, "forbidden",
                               "token '" + principal->name + "' may not " +
                                   PermissionName(permission) + "; that needs the " +
                                   RolesAllowedTo(permission) + " role");
    }
    *out = *principal;
    return std::nullopt;
  }

  // ---- Routes: each forwards to its resource's file ----

  ApiResponse Regions(const Call&) { return HandleRegionList(store_, live_); }
  ApiResponse OwnershipList(const Call& c) {
    const auto lag = live_ != nullptr ? live_->Lag() : nullptr;
    return HandleOwnershipList(store_, lag.get(), c.query);
  }
  ApiResponse Lag(const Call& c) { return HandleLagList(live_, c.query); }
  ApiResponse FailoverList(const Call& c) { return HandleFailoverList(store_, c.query); }
  ApiResponse FailoverDetail(const Call& c) {
    return HandleFailoverDetail(store_, failovers_, readiness_, c.id, c.query, clock_.Now());
  }
  ApiResponse Report(const Call& c) { return HandleFailoverReport(store_, c.id); }
  ApiResponse Audit(const Call& c) { return HandleAuditList(store_, c.query); }
  ApiResponse Events(const Call& c) {
    return HandleEventStream(store_, RoleAllows(c.principal.role, Permission::kReadAudit), c.query,
                             c.request);
  }

  ApiResponse Healthz(const Call&) { return JsonResponse(200, {{"status", "ok"}}); }

  ApiResponse Readyz(const Call&) {
    const bool ready = !ready_ || ready_();
    return JsonResponse(ready ? 200 : 503, {{"status", ready ? "ready" : "not_ready"}});
  }

  ApiResponse Metrics(const Call&) {
    MetricsSnapshot snapshot;
    snapshot.version = BuildVersion();
    snapshot.revision = BuildRevision();
    {
      std::lock_guard lock(mu_);
      snapshot.http_responses = responses_;
    }
    ApiResponse res;
    res.content_type = std::string(kMetricsContentType);
    res.body = RenderMetrics(store_, snapshot);
    {
      auto routes = readiness_ != nullptr ? readiness_->Latest() : nullptr;
      res.body += RenderReadinessMetrics(routes.get());
    }
    {
      std::map<std::pair<std::string, std::string>, std::uint64_t> webhooks;
      {
        std::lock_guard lock(mu_);
        webhooks = webhook_outcomes_;
      }
      res.body += RenderWebhookMetrics(webhooks);
    }
    if (live_ != nullptr) {
      res.body += RenderProbeLatencyMetrics(live_->ProbeLatencies());
      res.body += RenderProbeMetrics(live_->ProbeRounds());
      res.body += RenderUnparsedMetrics(live_->UnparsedResponses());
      if (auto lag = live_->Lag()) res.body += RenderLagMetrics(*lag);
    }
    if (drills_ != nullptr) res.body += RenderDrillMetrics(drills_->Metrics());
    if (reload_status_) {
      const auto [ok, at] = reload_status_();
      res.body += RenderConfigReloadMetrics(ok, at);
    }
    if (audit_seal_) {
      const std::optional<AuditSealStatus> seal = audit_seal_();
      res.body += RenderAuditSealMetrics(seal ? &*seal : nullptr);
    }
    if (PauseStore* pauses = PauseStoreOf(store_)) {
      // Without the store's answer the families are left out: icewarden_state_store_up says
      // why, and an absent pause must not read as "not paused".
      if (auto listed = pauses->ListPauses(); listed.ok())
        res.body += RenderPauseMetrics(*listed, clock_.Now());
    }
    return res;
  }

 public:
  void SetLiveView(const LiveView* live) { live_ = live; }
  void SetReadiness(const ReadinessBoard* board) { readiness_ = board; }
  void SetFailoverService(FailoverService* service) { failovers_ = service; }
  void SetDrillService(DrillService* service) { drills_ = service; }
  void SetWebhookReceiver(WebhookReceiver* receiver) { webhooks_ = receiver; }
  void SetRegionEvents(RegionEventSink sink) { region_events_ = std::move(sink); }
  void SetDashboard(const Dashboard* dashboard) { dashboard_ = dashboard; }
  void SetClusterStatus(std::function<json()> status) { cluster_status_ = std::move(status); }
  void SetConfigReloadStatus(std::function<std::pair<bool, std::int64_t>()> status) {
    reload_status_ = std::move(status);
  }
  void SetAuditSealStatus(std::function<std::optional<AuditSealStatus>()> status) {
    audit_seal_ = std::move(status);
  }
  void SetConfigReload(std::function<ApiResponse(const std::string& actor)> reload) {
    reload_ = std::move(reload);
  }

 private:
  ApiResponse Fence(const Call& c) { return Overlay(c, HealthEvent::kSetFenced); }
  ApiResponse Unfence(const Call& c) { return Overlay(c, HealthEvent::kClearFenced); }
  ApiResponse Overlay(const Call& c, HealthEvent event) {
    return HandleRegionOverlay(region_events_, event, c.principal.name, c.id, c.request.body,
                               clock_.Now());
  }

  // One replica (SQLite) has no cluster to describe, and says so rather than 404: the CLI's
  // `cluster status` works against every deployment.
  ApiResponse Cluster(const Call&) {
    if (!cluster_status_)
      return JsonResponse(200, json{{"role", "single"},
                                    {"replica", nullptr},
                                    {"leader", nullptr},
                                    {"views", json::array()},
                                    {"replicas", json::array()}});
    return JsonResponse(200, cluster_status_());
  }

  ApiResponse DashboardIndex(const Call&) {
    return DashboardFileResponse(dashboard_, "index.html");
  }
  ApiResponse DashboardAsset(const Call& call) {
    return DashboardFileResponse(dashboard_, call.id);
  }
  ApiResponse Session(const Call& call) { return JsonResponse(200, SessionJson(call.principal)); }

  // ---- Failover commands (failovers.h) ----

  ApiResponse Command(const Call& call, FailoverCommand command) {
    if (failovers_ == nullptr)
      return JsonErrorResponse(503, "unavailable", "this daemon does not run failovers");
    Caller caller{call.principal.name, ActorOf(call.principal.role), call.request.remote};
    return HandleFailoverCommand(*failovers_, command, caller, call.id, call.request.body);
  }
  // ---- Drills (drills.h) ----

  ApiResponse NoDrills() const {
    return JsonErrorResponse(503, "unavailable", "this daemon does not run drills");
  }
  ApiResponse DrillList(const Call& call) {
    if (drills_ == nullptr) return NoDrills();
    auto limit = call.query.Integer("limit", 50, 1, kListPageMax);
    if (!limit.ok()) return BadRequestResponse(limit.status().message());
    return HandleDrillList(*drills_, static_cast<std::size_t>(*limit));
  }
  ApiResponse DrillRun(const Call& call) {
    if (drills_ == nullptr) return NoDrills();
    Caller caller{call.principal.name, ActorOf(call.principal.role), call.request.remote};
    return HandleDrillRun(*drills_, caller, call.id, call.request.body);
  }
  ApiResponse DrillReport(const Call& call) {
    if (drills_ == nullptr) return NoDrills();
    return HandleDrillReport(*drills_, call.id);
  }
  ApiResponse DrillNote(const Call& call) {
    if (drills_ == nullptr) return NoDrills();
    Caller caller{call.principal.name, ActorOf(call.principal.role), call.request.remote};
    return HandleDrillNote(*drills_, caller, call.id, call.request.body);
  }

  ApiResponse ReloadConfig(const Call& call) {
    if (!reload_) return JsonErrorResponse(503, "unavailable", "this daemon does not reload");
    return reload_(call.principal.name);
  }
  ApiResponse PauseList(const Call&) { return HandlePauseList(PauseStoreOf(store_), clock_.Now()); }
  ApiResponse Pause(const Call& call) {
    if (failovers_ == nullptr)
      return JsonErrorResponse(503, "unavailable", "this daemon does not run failovers");
    Caller caller{call.principal.name, ActorOf(call.principal.role), call.request.remote};
    return HandlePause(PauseStoreOf(store_), failovers_->config(), caller, call.request.body,
                       clock_.Now());
  }
  ApiResponse Resume(const Call& call) {
    Caller caller{call.principal.name, ActorOf(call.principal.role), call.request.remote};
    return HandleResume(PauseStoreOf(store_), caller, call.request.body, clock_.Now());
  }

  // Every plan shows whether its route was ready at the latest readiness round.
  ApiResponse Propose(const Call& c) {
    return WithReadiness(readiness_, Command(c, FailoverCommand::kPropose), clock_.Now());
  }
  ApiResponse Readiness(const Call&) { return ReadinessResponse(readiness_); }
  ApiResponse Approve(const Call& c) { return Command(c, FailoverCommand::kApprove); }
  ApiResponse ConfirmFencing(const Call& c) { return Command(c, FailoverCommand::kConfirmFencing); }
  ApiResponse Abort(const Call& c) { return Command(c, FailoverCommand::kAbort); }
  ApiResponse Ack(const Call& c) { return Command(c, FailoverCommand::kAck); }

  // ---- Webhooks (webhooks.h) ----

  ApiResponse AlertmanagerWebhook(const Call& call) {
    ApiResponse res =
        webhooks_ == nullptr
            ? JsonErrorResponse(503, "unavailable", "this daemon does not receive webhooks")
            : HandleAlertmanagerWebhook(*webhooks_, verifier_, call.request);
    CountWebhook("alertmanager", res.status);
    return res;
  }

  ApiResponse GenericWebhook(const Call& call) {
    ApiResponse res =
        webhooks_ == nullptr
            ? JsonErrorResponse(503, "unavailable", "this daemon does not receive webhooks")
            : HandleGenericWebhook(*webhooks_, call.id, call.request);
    CountWebhook("generic", res.status);
    return res;
  }

  // icewarden_webhook_requests_total: one label set per endpoint kind (not per generic name,
  // which a caller chooses) and outcome, so the family stays small.
  void CountWebhook(const char* endpoint, int status) {
    std::lock_guard lock(mu_);
    ++webhook_outcomes_[{endpoint, WebhookOutcome(status)}];
  }

  TokenVerifier verifier_;
  StateStore& store_;
  const Clock& clock_;  // for time-relative fields (readiness age beside a plan)
  std::function<bool()> ready_;
  std::mutex mu_;
  std::map<int, std::uint64_t> responses_;  // status code → count, for /metrics
  std::map<std::pair<std::string, std::string>, std::uint64_t> webhook_outcomes_;  // likewise
  const LiveView* live_ = nullptr;                                // set once before serving starts
  FailoverService* failovers_ = nullptr;                          // likewise
  DrillService* drills_ = nullptr;                                // likewise
  const ReadinessBoard* readiness_ = nullptr;                     // likewise
  WebhookReceiver* webhooks_ = nullptr;                           // likewise
  RegionEventSink region_events_;                                 // likewise
  const Dashboard* dashboard_ = nullptr;                          // likewise
  std::function<json()> cluster_status_;                          // empty: one replica
  std::function<std::pair<bool, std::int64_t>()> reload_status_;  // empty: no families
  std::function<std::optional<AuditSealStatus>()> audit_seal_;    // empty: no families
  std::function<ApiResponse(const std::string& actor)> reload_;   // empty: 503
};

Api::Api(const ApiConfig& config, StateStore& store, const Clock& clock,
         std::function<bool()> ready)
    : impl_(std::make_unique<Impl>(config, store, clock, std::move(ready))) {}

Api::~Api() = default;

std::vector<ApiRouteInfo> Api::RouteTable() { return Impl::RouteInfos(); }

ApiResponse Api::Handle(const ApiRequest& request) { return impl_->Handle(request); }

void Api::CountResponse(int status) { impl_->CountResponse(status); }

void Api::SetLiveView(const LiveView* live) { impl_->SetLiveView(live); }

void Api::SetReadiness(const ReadinessBoard* board) { impl_->SetReadiness(board); }

void Api::SetFailoverService(FailoverService* service) { impl_->SetFailoverService(service); }

void Api::SetDrillService(DrillService* service) { impl_->SetDrillService(service); }

void Api::SetWebhookReceiver(WebhookReceiver* receiver) { impl_->SetWebhookReceiver(receiver); }
void Api::SetRegionEvents(RegionEventSink sink) { impl_->SetRegionEvents(std::move(sink)); }

void Api::SetDashboard(const Dashboard* dashboard) { impl_->SetDashboard(dashboard); }
void Api::SetConfigReloadStatus(std::function<std::pair<bool, std::int64_t>()> status) {
  impl_->SetConfigReloadStatus(std::move(status));
}
void Api::SetAuditSealStatus(std::function<std::optional<AuditSealStatus>()> status) {
  impl_->SetAuditSealStatus(std::move(status));
}
void Api::SetConfigReload(std::function<ApiResponse(const std::string& actor)> reload) {
  impl_->SetConfigReload(std::move(reload));
}
void Api::SetClusterStatus(std::function<json()> status) {
  impl_->SetClusterStatus(std::move(status));
}

}  // namespace icewarden
