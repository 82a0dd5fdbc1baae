#include "orchestrator/cluster/standby.h"

#include <nlohmann/json.hpp>

#include "orchestrator/cluster/leadership.h"
#include "orchestrator/cluster/replica_views.h"

namespace icewarden {
namespace {

using nlohmann::json;

std::string PathOf(const std::string& target) { return target.substr(0, target.find('?')); }

}  // namespace

std::function<ApiResponse(const ApiRequest&)> StandbyHandler(Leadership& leadership,
                                                             const ReplicaViews& views,
                                                             const Config& config) {
  return [&leadership, &views, &config](const ApiRequest& req) -> ApiResponse {
    const std::string path = PathOf(req.target);
    if (path == "/healthz") return JsonResponse(200, json{{"ok", true}});
    if (path == "/api/v1/cluster")
      return JsonResponse(200, ClusterStatusJson(leadership, views, config));
    auto leader = leadership.Leader();
    json about = {{"role", "standby"}, {"replica", leadership.options().replica}};
    if (leader.ok()) {
      about["leader"] = LeaderJson(*leader);
    } else {
      about["leader"] = nullptr;
      about["etcd"] = leader.status().ToString();
    }
    if (path == "/readyz") {
      about["ready"] = false;
      return JsonResponse(503, about);
    }
    if (!leader.ok() || !leader->has_value() || (*leader)->api.empty()) {
      return JsonErrorResponse(
          503, "no_leader",
          "replica " + leadership.options().replica +
              " is a standby and no replica leads right now" +
              (leader.ok() ? "" : " (etcd: " + leader.status().message() + ")") +
              "; try again in a few seconds");
    }
    ApiResponse r =
        JsonErrorResponse(307, "standby",
                          "replica " + leadership.options().replica + " is a standby; " +
                              (*leader)->replica + " leads at " + (*leader)->api);
    r.headers.emplace_back("Location", (*leader)->api + req.target);
    return r;
  };
}

}  // namespace icewarden
