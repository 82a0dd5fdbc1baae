// What a chaos run writes before anything starts: the API tokens, the runbooks whose effect
// steps call the EffectSink, and each replica's config (the lab's two regions, a real etcd
// cluster, failover and switchover routes both ways).
#pragma once

#include <string>
#include <vector>

namespace icewarden::chaos {

inline constexpr const char* kOperatorToken = "chaos-operator-token";
inline constexpr const char* kApproverToken = "chaos-approver-token";
inline constexpr const char* kAdminToken = "chaos-admin-token";

// The runbook's step ids whose action is not idempotent: their key may land once only.
inline const std::vector<std::string> kNonIdempotentSteps{"notify"};

struct ChaosLayout {
  std::string dir;
  std::vector<std::string> etcd_endpoints;
  std::vector<std::string> replicas;
  int ttl_seconds = 2;
  std::string us_catalog, eu_catalog;  // the lab's region URLs
  std::string sink_notify, sink_confirm;
};

// Writes <dir>/*.token, <dir>/chaos-failover.yaml, <dir>/chaos-switchover.yaml and
// <dir>/<replica>.yaml for every replica, each listening on `ports[i]`.
void WriteChaosFiles(const ChaosLayout& layout, const std::vector<int>& ports);

}  // namespace icewarden::chaos
