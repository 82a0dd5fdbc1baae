#include <nlohmann/json.hpp>

#include <algorithm>

#include "orchestrator/cluster/cluster_internal.h"
#include "orchestrator/config/config.h"

namespace icewarden {

using nlohmann::json;

json ClusterStatusJson(Leadership& leadership, const ReplicaViews& views, const Config& config) {
  const auto lease = leadership.Lease();
  json out = {{"role", lease ? "leader" : "standby"}, {"replica", leadership.options().replica}};
  auto leader = leadership.Leader();
  out["leader"] = leader.ok() ? LeaderJson(*leader) : json(nullptr);
  if (!leader.ok()) out["etcd_error"] = leader.status().ToString();
  if (lease) {
    out["lease"] = {{"ttl_s", leadership.options().ttl.count()},
                    {"since_renewal_ms", lease->since_renewal.count()},
                    {"may_act_for_ms", lease->may_act_for.count()}};
  }
  const std::vector<ReplicaView> seen = views.Snapshot();
  json list = json::array();
  for (const ReplicaView& v : seen) {
    json regions = json::object();
    for (const auto& [name, s] : v.regions) regions[name] = SightJson(s);
    const auto& configured = config.state.etcd.replicas;
    list.push_back(
        {{"replica", v.replica},
         {"self", v.replica == leadership.options().replica},
         {"configured", configured.empty() || std::find(configured.begin(), configured.end(),
                                                        v.replica) != configured.end()},
         {"heard_ms_ago", v.heard_ms_ago ? json(*v.heard_ms_ago) : json(nullptr)},
         {"regions", std::move(regions)}});
  }
  out["views"] = std::move(list);
  if (auto error = views.LastError()) out["views_error"] = *error;
  out["replicas"] = config.state.etcd.replicas;
  json quorum = json::object();
  for (const RegionConfig& rc : config.regions) {
    QuorumVerdict v = JudgeUnreachable(rc.name, QuorumRulesFor(config, rc.name), seen);
    json votes = json::array();
    for (const ReplicaVote& vote : v.by_replica)
      votes.push_back({{"replica", vote.replica},
                       {"silent_for_window", vote.silent_long_enough},
                       {"saw", vote.saw}});
    quorum[rc.name] = {{"unreachable", v.unreachable},
                       {"votes", v.votes},
                       {"needed", v.needed},
                       {"why", v.why},  // what a failover waiting for this evidence waits on
                       {"by_replica", std::move(votes)}};
  }
  out["quorum"] = std::move(quorum);
  return out;
}

}  // namespace icewarden
