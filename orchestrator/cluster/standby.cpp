#include <nlohmann/json.hpp>

#include <set>
#include <string_view>

#include "orchestrator/api/query.h"
#include "orchestrator/cluster/cluster_internal.h"

namespace icewarden {
namespace {

using nlohmann::json;

// Whether a standby answers a GET of `target` from the record itself (cluster_internal.h says
// which). A query it cannot parse is answered here too: the API's 400 says what is wrong.
bool AnsweredHere(const SplitTarget& target) {
  static const std::set<std::string_view, std::less<>> kReads = {
      "/api/v1/session", "/api/v1/regions", "/api/v1/cluster", "/api/v1/failovers",
      "/api/v1/audit"};
  if (kReads.count(target.path) != 0) return true;
  auto query = QueryParams::Parse(target.query);
  if (!query.ok()) return true;
  // ?state= filters on lag, which only the leader measures.
  if (target.path == "/api/v1/ownership") return !query->Get("state");
  // ?plan=true is what the failover would run now: the leader's runbooks and guards.
  constexpr std::string_view kOneFailover = "/api/v1/failovers/";
  if (target.path.substr(0, kOneFailover.size()) == kOneFailover)
    return query->Get("plan").value_or("false") != "true";
  return false;
}

}  // namespace

std::function<ApiResponse(const ApiRequest&)> StandbyHandler(Leadership& leadership, Api& reads) {
  return [&leadership, &reads](const ApiRequest& req) -> ApiResponse {
    const std::string& replica = leadership.options().replica;
    const SplitTarget target = SplitRequestTarget(req.target);
    if (target.path == "/healthz") return JsonResponse(200, json{{"status", "ok"}});
    if (req.method == "GET" && AnsweredHere(target)) {
      ApiResponse r = reads.Handle(req);
      r.headers.emplace_back("X-Icewarden-Replica", replica + " (standby)");
      return r;
    }
    auto leader = leadership.Leader();
    json about = {{"role", "standby"}, {"replica", replica}};
    if (leader.ok()) {
      about["leader"] = LeaderJson(*leader);
    } else {
      about["leader"] = nullptr;
      about["etcd"] = leader.status().ToString();
    }
    if (target.path == "/readyz") {
      about["ready"] = false;
      return JsonResponse(503, about);
    }
    if (!leader.ok() || !leader->has_value() || (*leader)->api.empty()) {
      return JsonErrorResponse(
          503, "no_leader",
          "replica " + replica + " is a standby and no replica leads right now" +
              (leader.ok() ? "" : " (etcd: " + leader.status().message() + ")") +
              "; try again in a few seconds");
    }
    ApiResponse r = JsonErrorResponse(307, "standby",
                                      "replica " + replica + " is a standby; " +
                                          (*leader)->replica + " leads at " + (*leader)->api);
    r.headers.emplace_back("Location", (*leader)->api + req.target);
    return r;
  };
}

}  // namespace icewarden
