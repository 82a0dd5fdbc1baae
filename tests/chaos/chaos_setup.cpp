#include "tests/chaos/chaos_setup.h"

#include <fstream>
#include <sstream>

namespace icewarden::chaos {
namespace {

// The fence step passes whenever the old owner's catalog stays quiet for a second (the lab runs
// without its workload), so most failovers are fenced by evidence; one that is not waits for the
// driver's operator. The promote steps have one effect each kind of action can have: a
// non-idempotent call (once only, ever), the ownership transfer (epochs) and an idempotent call
// (re-run after a crash with the same Idempotency-Key, never after it succeeded), with a wait
// between them. A switchover first waits for the target to hold the old owner's demotion token
// (no workload: at once).
std::string Runbook(const ChaosLayout& l, const std::string& kind) {
  std::ostringstream y;
  y << "name: chaos-" << kind << "\n"
    << "description: a " << kind << " whose effects land at the chaos run's effect sink\n"
    << "guards:\n  - kind: leadership\n  - kind: target_healthy\n  - kind: no_overlap\n"
    << "fence:\n"
    << "  - id: old-catalog-quiet\n    action: fence.catalog_quiet\n"
    << "    params: {region: \"${from}\", window: 1s, poll_interval: 200ms}\n"
    << "    timeout: 10s\n    on_failure: continue\n"
    << "promote:\n";
  if (kind == "switchover")
    y << "  - id: demotion-token\n    action: switchover.demotion_token\n"
      << "    params: {within: 30s, poll_interval: 200ms}\n    timeout: 1m\n";
  y << "  - id: notify\n    action: http.request\n"
    << "    params:\n      url: " << l.sink_notify << "\n      method: POST\n"
    << "      headers: {X-Chaos-Incarnation: \"${env.ICEWARDEN_CHAOS_INCARNATION}\"}\n"
    << "      body: \"${failover.id}\"\n"
    << "    timeout: 5s\n    on_failure: continue\n"
    // Holds the promotion open for a while, so that a fault often lands in the middle of it
    // and the next leader has to resume it from the journal.
    << "  - id: hold\n    action: wait\n    params: {duration: 1500ms}\n    timeout: 10s\n"
    << "  - id: transfer-ownership\n    action: ownership.transfer\n"
    << "    params: {scope: \"${scope}\", write_catalog_properties: true}\n"
    << "    timeout: 1m\n    retry: {attempts: 3, initial_backoff: 500ms, max_backoff: 2s}\n"
    << "  - id: confirm\n    action: fence.http\n"
    << "    params:\n      url: " << l.sink_confirm << "\n      method: PUT\n"
    << "      headers: {X-Chaos-Incarnation: \"${env.ICEWARDEN_CHAOS_INCARNATION}\"}\n"
    << "    timeout: 5s\n    retry: {attempts: 3, initial_backoff: 200ms, max_backoff: 1s}\n"
    << "verify:\n"
    << "  - id: ownership-markers\n    action: verify.ownership_markers\n"
    << "    params: {region: \"${to}\"}\n"
    << "    retry: {attempts: 3, initial_backoff: 500ms, max_backoff: 2s}\n";
  return y.str();
}

std::string Config(const ChaosLayout& l, const std::string& replica, int port) {
  std::ostringstream y;
  y << "api:\n  listen: 127.0.0.1:" << port << "\n  tokens:\n"
    << "    - {name: olga, role: operator, token_file: operator.token}\n"
    << "    - {name: abe, role: approver, token_file: approver.token}\n"
    << "    - {name: ada, role: admin, token_file: admin.token}\n"
    << "state:\n  backend: etcd\n  etcd:\n    endpoints: [";
  for (std::size_t i = 0; i < l.etcd_endpoints.size(); ++i)
    y << (i ? ", " : "") << l.etcd_endpoints[i];
  y << "]\n    max_txn_ops: 1024\n    leader_ttl: " << l.ttl_seconds << "s\n"
    << "    replica: " << replica << "\n    replicas: [";
  for (std::size_t i = 0; i < l.replicas.size(); ++i) y << (i ? ", " : "") << l.replicas[i];
  y << "]\n"
    << "regions:\n"
    << "  - {name: us-east-1, catalog_uri: \"" << l.us_catalog << "\", warehouse: lab}\n"
    << "  - {name: eu-central-1, catalog_uri: \"" << l.eu_catalog << "\", warehouse: lab}\n"
    << "ownership:\n  default_owner: us-east-1\n  rules:\n"
    << "    - {match: \"eu.*\", owner: eu-central-1}\n"
    << "policies:\n  max_staleness: 1h\n  cooldown: 0s\n  approval_ttl: 15m\n"
    << "  unreachable_for: 2s\n"
    << "  fencing_evidence: [steps_and_quiet_window, old_region_unreachable, operator]\n"
    << "  lag_interval: 300ms\n"
    << "  probe: {interval: 250ms, timeout: 200ms, fall: 3, rise: 2}\n"
    << "failovers:\n";
  for (const char* kind : {"failover", "switchover"}) {
    for (auto [from, to] :
         {std::pair{"us-east-1", "eu-central-1"}, std::pair{"eu-central-1", "us-east-1"}}) {
      y << "  - {name: " << kind << "-" << from << "-to-" << to << ", kind: " << kind
        << ", from: " << from << ", to: " << to << ", scope: \"*\", runbook: " << l.dir << "/chaos-"
        << kind << ".yaml}\n";
    }
  }
  return y.str();
}

}  // namespace

void WriteChaosFiles(const ChaosLayout& layout, const std::vector<int>& ports) {
  std::ofstream(layout.dir + "/operator.token") << kOperatorToken << "\n";
  std::ofstream(layout.dir + "/approver.token") << kApproverToken << "\n";
  std::ofstream(layout.dir + "/admin.token") << kAdminToken << "\n";
  for (const char* kind : {"failover", "switchover"})
    std::ofstream(layout.dir + "/chaos-" + kind + ".yaml") << Runbook(layout, kind);
  for (std::size_t i = 0; i < layout.replicas.size(); ++i)
    std::ofstream(layout.dir + "/" + layout.replicas[i] + ".yaml")
        << Config(layout, layout.replicas[i], ports[i]);
}

}  // namespace icewarden::chaos
