#include "orchestrator/gateway/gateway_handler.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "orchestrator/config/config.h"
#include "orchestrator/gateway/catalog_route.h"
#include "orchestrator/gateway/region_catalogs.h"
#include "state/state_store.h"

namespace icewarden {
namespace {

using json = nlohmann::json;
using namespace std::chrono_literals;

constexpr const char* kRegionHeader = "X-Icewarden-Region";
// How long an engine is asked to wait before resending a refused write: the store is polled
// every few ms, and a failover's fence steps take seconds, so a second is neither a storm nor
// a stall.
constexpr int kRetryAfterSeconds = 1;
constexpr auto kAuditEvery = std::chrono::minutes(1);

ApiResponse IcebergError(int status, const std::string& type, const std::string& message) {
  ApiResponse r;
  r.status = status;
  r.body = json{{"error", {{"message", message}, {"type", type}, {"code", status}}}}.dump();
  return r;
}

ApiResponse RetryLater(const std::string& message) {
  ApiResponse r = IcebergError(503, "ServiceUnavailableException", message);
  r.headers.emplace_back("Retry-After", std::to_string(kRetryAfterSeconds));
  return r;
}

// Headers that describe one hop, not the request (RFC 9110 7.6.1), and those the transport
// sets itself. Accept-Encoding too: the gateway reads bodies it forwards (the config it
// rewrites, errors it reports), so it asks catalogs for identity bodies. Node's fetch (so
// iceberg-js) sends `gzip, deflate` on every request, and a catalog that honours it would
// hand the gateway a body it cannot read.
bool HopByHop(const std::string& lower) {
  static const char* const kNames[] = {"connection", "keep-alive",     "proxy-connection",
                                       "te",         "trailer",        "transfer-encoding",
                                       "upgrade",    "content-length", "host",
                                       "server",     "date",           "accept-encoding"};
  return std::any_of(std::begin(kNames), std::end(kNames),
                     [&](const char* n) { return lower == n; });
}

HttpRequest Outbound(const ApiRequest& in, std::string url) {
  HttpRequest out;
  out.method = in.method;
  out.url = std::move(url);
  for (const auto& [name, value] : in.headers) {
    if (!HopByHop(name)) out.headers.Add(name, value);
  }
  out.body = in.body;
  return out;
}

std::string Lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

ApiResponse Inbound(HttpResponse in, const std::string& region) {
  ApiResponse out;
  out.status = in.status;
  out.content_type = "application/json";
  for (const auto& [name, value] : in.headers.fields()) {
    const std::string lower = Lower(name);
    if (lower == "content-type") {
      out.content_type = value;
    } else if (!HopByHop(lower)) {
      out.headers.emplace_back(name, value);
    }
  }
  out.headers.emplace_back(kRegionHeader, region);
  out.body = std::move(in.body);
  return out;
}

// How a failed exchange reads to the engine. A write that may have reached the catalog has
// an unknown outcome (502, as the spec's CommitStateUnknown); one that did not is safe to
// resend (503 with Retry-After).
ApiResponse ExchangeFailed(const Status& error, bool write, const std::string& region) {
  ApiResponse r;
  if (write && RequestMayHaveBeenDelivered(error)) {
    const bool timed_out = error.message().find("deadline") != std::string::npos;
    r = IcebergError(timed_out ? 504 : 502, "CommitStateUnknownException",
                     "the request was sent to region " + region +
                         "'s catalog but no complete answer came back (" + error.message() +
                         "): the commit may or may not have happened; reload the table and look "
                         "before committing again");
  } else {
    r = RetryLater("region " + region + "'s catalog could not be reached (" + error.message() +
                   "); nothing was sent");
  }
  r.headers.emplace_back(kRegionHeader, region);
  return r;
}

}  // namespace

GatewayHandler::GatewayHandler(const Config& config, const GatewayConfig& gateway,
                               std::string advertise, StateStore& store, RegionCatalogs& catalogs,
                               WriteAdmission& admission, CommitQueue& queue,
                               GatewayMetrics& metrics)
    : config_(config),
      gateway_(gateway),
      advertise_(std::move(advertise)),
      store_(store),
      catalogs_(catalogs),
      admission_(admission),
      queue_(queue),
      metrics_(metrics) {}

ApiResponse GatewayHandler::Handle(const ApiRequest& request) {
  if (request.target.rfind("/v1/", 0) != 0) return Admin(request);
  auto classified =
      ClassifyRequest({request.method, request.target, request.body}, gateway_.prefix, "\x1F");
  if (auto* e = std::get_if<RouteError>(&classified)) {
    ApiResponse r = IcebergError(e->status, e->type, e->message);
    if (!e->allow.empty()) r.headers.emplace_back("Allow", e->allow);
    metrics_.CountRequest("invalid", r.status, "");
    return r;
  }
  const CatalogRoute& route = std::get<CatalogRoute>(classified);
  ApiResponse answer;
  switch (route.kind) {
    case RouteKind::kConfig:
      answer = ConfigEndpoint(request);
      break;
    case RouteKind::kOAuthTokens:
    case RouteKind::kRead:
    case RouteKind::kTableLoad:
      answer = Read(request, route);
      break;
    default:
      answer = Write(request, route);
  }
  std::string region;
  for (const auto& [name, value] : answer.headers) {
    if (name == kRegionHeader) region = value;
  }
  metrics_.CountRequest(route.operation, answer.status, region);
  return answer;
}

ApiResponse GatewayHandler::Admin(const ApiRequest& request) {
  const std::string path = request.target.substr(0, request.target.find('?'));
  if (request.method != "GET") {
    return IcebergError(405, "MethodNotAllowedException", "only GET is served at " + path);
  }
  auto snapshot = admission_.Snapshot();
  if (path == "/healthz") return JsonResponse(200, json{{"status", "ok"}});
  if (path == "/readyz") {
    // Ready when it can decide writes; reads alone would work without the store, but an
    // engine sent here expects to commit.
    if (snapshot->readable) return JsonResponse(200, json{{"status", "ready"}});
    return JsonResponse(503, json{{"status", "not_ready"}, {"reason", snapshot->error}});
  }
  if (path == "/metrics") {
    ApiResponse r;
    r.content_type = "text/plain; version=0.0.4; charset=utf-8";
    const WriteAdmission::KeptRows kept = admission_.Kept();
    r.body = metrics_.Render(
        {queue_.Waiting(), admission_.InFlight(), snapshot->readable, kept.hits, kept.reads});
    return r;
  }
  const std::string closures = "/icewarden/v1/closures/";
  if (path.rfind(closures, 0) == 0 && path.size() > closures.size()) {
    const std::string id = path.substr(closures.size());
    WriteAdmission::Closure c = admission_.ClosureOf(id);
    return JsonResponse(200, json{{"gateway", gateway_.name},
                                  {"failover", id},
                                  {"store_readable", c.store_readable},
                                  {"seen", c.seen},
                                  {"phase", c.phase},
                                  {"closes", c.closes},
                                  {"in_flight", c.in_flight},
                                  {"confirmed", c.confirmed},
                                  {"refreshes", c.refreshes}});
  }
  if (path == "/icewarden/v1/status") {
    return JsonResponse(200, json{{"gateway", gateway_.name},
                                  {"region", gateway_.region},
                                  {"prefix", gateway_.prefix},
                                  {"forward_to", gateway_.forward_to},
                                  {"store_readable", snapshot->readable},
                                  {"store_error", snapshot->error},
                                  {"queued", queue_.Waiting()},
                                  {"in_flight", admission_.InFlight()}});
  }
  return IcebergError(404, "NoSuchRouteException",
                      "no route at '" + path + "': catalog routes start with /v1/");
}

std::vector<std::string> GatewayHandler::ReadOrder(const std::string& first) const {
  std::vector<std::string> order;
  auto add = [&](const std::string& r) {
    if (!r.empty() && std::find(order.begin(), order.end(), r) == order.end() &&
        std::find(gateway_.forward_to.begin(), gateway_.forward_to.end(), r) !=
            gateway_.forward_to.end()) {
      order.push_back(r);
    }
  };
  add(first);
  add(gateway_.region);
  auto snapshot = admission_.Snapshot();
  for (const Region& r : snapshot->regions) {
    if (r.health == RegionHealth::kHealthy) add(r.name);
  }
  return order;
}

ApiResponse GatewayHandler::ConfigEndpoint(const ApiRequest& request) {
  Status last = Status::Unavailable("no region to read the config from");
  for (const std::string& region : ReadOrder("")) {
    const std::string warehouse = catalogs_.Warehouse(region);
    std::string url = "/v1/config";
    if (!warehouse.empty()) url += "?warehouse=" + warehouse;
    auto t0 = std::chrono::steady_clock::now();
    auto answer = catalogs_.SendToRoot(region, Outbound(request, url), gateway_.forward_timeout);
    metrics_.ObserveForward(region, false, std::chrono::steady_clock::now() - t0);
    if (!answer.ok()) {
      last = answer.status();
      continue;
    }
    if (answer->status != 200) return Inbound(std::move(answer).value(), region);
    json config = json::parse(answer->body, nullptr, false);
    if (!config.is_object()) {
      return IcebergError(502, "BadGatewayException",
                          "region " + region +
                              "'s catalog answered GET /v1/config with a body "
                              "that is not a JSON object");
    }
    // Engines come back here, under this gateway's prefix, whatever the region calls itself.
    if (!config.contains("overrides") || !config["overrides"].is_object()) {
      config["overrides"] = json::object();
    }
    if (config.contains("defaults") && config["defaults"].is_object()) {
      config["defaults"].erase("uri");
      config["defaults"].erase("prefix");
      config["defaults"].erase("namespace-separator");
    }
    config["overrides"]["uri"] = advertise_;
    config["overrides"]["prefix"] = gateway_.prefix;
    // Engines join namespace levels with what this gateway parses (the unit separator), not
    // with what the read region advertises: the gateway forwards paths as sent, to regions that
    // may advertise different separators, and the spec obliges every catalog to accept %1F.
    config["overrides"]["namespace-separator"] = "%1F";
    ApiResponse r = JsonResponse(200, config);
    r.headers.emplace_back(kRegionHeader, region);
    return r;
  }
  return RetryLater("no region's catalog answered GET /v1/config: " + last.message());
}

ApiResponse GatewayHandler::Read(const ApiRequest& request, const CatalogRoute& route) {
  std::string first;
  if (route.kind == RouteKind::kTableLoad && !route.tables.empty()) {
    // A load that precedes a commit must see the owner's latest metadata, or the commit's
    // requirements fail against a replica that trails: loads go to the owner when it may be.
    if (auto row = admission_.OwnershipOf(store_, route.tables.front()); row.ok() && *row) {
      first = (*row)->owner;
    } else {
      first = config_.OwnerFor(route.tables.front().ToString());
    }
  }
  Status last = Status::Unavailable("no region to read from");
  for (const std::string& region : ReadOrder(first)) {
    auto t0 = std::chrono::steady_clock::now();
    auto answer =
        route.kind == RouteKind::kOAuthTokens
            ? catalogs_.SendToRoot(region, Outbound(request, "/v1/oauth/tokens" + route.query),
                                   gateway_.forward_timeout)
            : catalogs_.Send(region, Outbound(request, route.rest + route.query),
                             gateway_.forward_timeout);
    metrics_.ObserveForward(region, false, std::chrono::steady_clock::now() - t0);
    // Any HTTP answer is the answer; only silence moves the read to the next region.
    if (answer.ok()) return Inbound(std::move(answer).value(), region);
    last = answer.status();
  }
  return RetryLater("no region's catalog answered: " + last.message());
}

ApiResponse GatewayHandler::Refuse(const ApiRequest& request, const WriteVerdict& verdict) {
  metrics_.CountRefusal(verdict.refusal);
  AuditRefusal(request, verdict);
  switch (verdict.kind) {
    case WriteVerdict::Kind::kOwnedElsewhere:
      return IcebergError(409,
                          "OwnedByAnotherRegion; owner=" + verdict.region +
                              "; epoch=" + std::to_string(verdict.epoch),
                          verdict.reason);
    case WriteVerdict::Kind::kSpansOwners:
      return IcebergError(400, "BadRequestException", verdict.reason);
    default:
      return RetryLater(verdict.reason);
  }
}

void GatewayHandler::AuditRefusal(const ApiRequest& request, const WriteVerdict& verdict) {
  const std::string table = verdict.table.ToString();
  const std::string key = table + '\0' + verdict.refusal;
  const auto now = std::chrono::steady_clock::now();
  {
    std::lock_guard lock(audit_mu_);
    auto it = audited_.find(key);
    if (it != audited_.end() && now - it->second < kAuditEvery) return;
    audited_[key] = now;
    // Forget what is older than a minute once in a while, so the map stays as small as the
    // set of tables refused in the last minute.
    if (audited_.size() > 10000) {
      std::erase_if(audited_, [&](const auto& e) { return now - e.second >= kAuditEvery; });
    }
  }
  AuditEvent event;
  event.actor = "gateway:" + gateway_.name;
  event.source = request.remote;
  event.action = "gateway.refused";
  event.target = table;
  event.reason = verdict.reason;
  json detail{{"refusal", verdict.refusal}};
  if (!verdict.failover_id.empty()) detail["failover"] = verdict.failover_id;
  if (!verdict.region.empty()) detail["owner"] = verdict.region;
  if (verdict.epoch != 0) detail["epoch"] = verdict.epoch;
  event.detail_json = detail.dump();
  if (Status s = store_.AppendAudit(event); !s.ok()) {
    spdlog::warn("gateway {}: could not audit a refusal of {}: {}", gateway_.name, table,
                 s.message());
  }
}

ApiResponse GatewayHandler::Write(const ApiRequest& request, const CatalogRoute& route) {
  // The rows as of the current snapshot (kept or read: WriteAdmission::OwnershipOf); a
  // namespace write is decided by the owner of the tables in it (or of a new table there), with
  // no epoch.
  auto read_records = [&]() -> Result<std::vector<TableRecord>> {
    std::vector<TableRecord> records;
    if (!IsTableWrite(route.kind)) {
      TableIdent first{route.namespace_levels, ""};
      OwnershipQuery q;
      q.after = first;
      q.limit = 1;
      auto rows = store_.ListOwnership(q);
      if (!rows.ok()) return rows.status();
      TableRecord r;
      r.table = first;
      if (!rows->empty() && rows->front().table.namespace_levels == route.namespace_levels) {
        r.rule_owner = rows->front().owner;
      } else {
        r.rule_owner = config_.OwnerFor(TableIdent{route.namespace_levels, "*"}.ToString());
      }
      records.push_back(std::move(r));
      return records;
    }
    for (const TableIdent& t : route.tables) {
      auto row = admission_.OwnershipOf(store_, t);
      if (!row.ok()) return row.status();
      records.push_back(TableRecord{t, *row, config_.OwnerFor(t.ToString())});
    }
    return records;
  };
  auto unreadable = [&](const Status& s) {
    WriteVerdict v;
    v.refusal = "store_unreadable";
    v.table = route.tables.empty() ? TableIdent{route.namespace_levels, ""} : route.tables.front();
    v.reason = "the gateway cannot read the ownership record (" + s.message() +
               "), so it cannot tell which region may write; retry shortly";
    return Refuse(request, v);
  };

  auto records = read_records();
  if (!records.ok()) return unreadable(records.status());
  std::uint64_t ticket = 0;
  WriteVerdict verdict = admission_.Admit(*records, &ticket);
  if (verdict.kind != WriteVerdict::Kind::kForward) return Refuse(request, verdict);
  struct ReleaseOnExit {
    WriteAdmission& admission;
    std::uint64_t ticket;
    ~ReleaseOnExit() { admission.Release(ticket); }
  } release{admission_, ticket};

  CommitQueue::Turn turn;
  if (IsTableWrite(route.kind)) {
    CommitQueue::Refusal refusal = CommitQueue::Refusal::kNone;
    turn = queue_.Enter(route.tables, gateway_.forward_timeout, &refusal);
    if (refusal != CommitQueue::Refusal::kNone) {
      metrics_.CountRefusal("queue_full");
      return RetryLater(std::string(refusal == CommitQueue::Refusal::kFull
                                        ? "too many writes are waiting for table "
                                        : "a write waited too long for its turn at table ") +
                        route.tables.front().ToString() + " at this gateway; retry shortly");
    }
    // The turn may have come after ownership moved: decide again on the rows as of the
    // snapshot current now, and send only at the epochs the first decision relied on.
    auto again = read_records();
    if (!again.ok()) return unreadable(again.status());
    WriteVerdict now = admission_.Recheck(ticket, *again);
    if (now.kind != WriteVerdict::Kind::kForward) return Refuse(request, now);
    if (now.region != verdict.region || now.epochs != verdict.epochs) {
      WriteVerdict moved = now;
      moved.kind = WriteVerdict::Kind::kRetryLater;
      moved.refusal = "epoch_moved";
      moved.reason = "the ownership of " + route.tables.front().ToString() +
                     " changed while the write waited for its turn (now region " + now.region +
                     "); nothing was sent: retry";
      metrics_.CountRefusal(moved.refusal);
      return RetryLater(moved.reason);
    }
  }
  auto t0 = std::chrono::steady_clock::now();
  auto answer = catalogs_.Send(verdict.region, Outbound(request, route.rest + route.query),
                               gateway_.forward_timeout);
  metrics_.ObserveForward(verdict.region, true, std::chrono::steady_clock::now() - t0);
  if (!answer.ok()) return ExchangeFailed(answer.status(), true, verdict.region);
  ApiResponse r = Inbound(std::move(answer).value(), verdict.region);
  if (!verdict.epochs.empty()) {
    r.headers.emplace_back("X-Icewarden-Epoch", std::to_string(verdict.epochs.front().second));
  }
  return r;
}

}  // namespace icewarden
