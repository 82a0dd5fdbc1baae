// The /metrics page: icewarden's state in the Prometheus text exposition format 0.0.4
// (https://prometheus.io/docs/instrumenting/exposition_formats/), checked by
// `promtool check metrics` in the tests.
// Thread-safety: RenderMetrics reads the store (which serialises itself) and its arguments.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "state/state_store.h"

namespace icewarden {

// The Content-Type of the page.
inline constexpr std::string_view kMetricsContentType = "text/plain; version=0.0.4; charset=utf-8";

struct MetricsSnapshot {
  std::string version;  // icewarden_build_info{version,revision}
  std::string revision;
  std::map<int, std::uint64_t> http_responses;  // status code → responses sent
};

// Families, each with # HELP and # TYPE:
//   icewarden_build_info{version,revision}        gauge, always 1
//   icewarden_state_store_up                      gauge, 0 when a store read failed
//   icewarden_region_health{region,state}         gauge, 1 for the current state, 0 otherwise
//   icewarden_region_fenced{region}               gauge 0/1
//   icewarden_region_maintenance{region}          gauge 0/1
//   icewarden_tables_owned{region}                gauge, from CountOwnershipByOwner
//   icewarden_failovers{phase}                    gauge, active failovers per non-terminal phase
//   icewarden_http_requests_total{code}           counter
// A store failure does not fail the page: the store-derived families are left without
// samples and icewarden_state_store_up is 0, so the scrape still works and can alert.
std::string RenderMetrics(StateStore& store, const MetricsSnapshot& snapshot);

// Drills (DrillMetric, drill_service.h): the latest passing run's end and the latest measured
// RTO per configured drill.
struct DrillMetric;
//   icewarden_drill_last_success_timestamp_seconds{drill}   gauge
//   icewarden_drill_last_rto_seconds{drill}                 gauge
std::string RenderDrillMetrics(const std::vector<DrillMetric>& drills);

struct Pause;
// Paused automation (orchestrator/failovers/automation_pause.h), one sample per paused scope:
//   icewarden_automation_paused{scope}                   gauge, 1 (families always present)
//   icewarden_automation_pause_overdue_seconds{scope}    gauge, past the pause's --for; 0
//                                                        before it or with no --for
// Both computed on this daemon's clock: an alert on overdue > 0 compares no two clocks.
std::string RenderPauseMetrics(const std::vector<Pause>& pauses, std::int64_t now_ms);

// Config reloads, as Prometheus and Alertmanager export theirs:
//   icewarden_config_last_reload_successful                 gauge 0/1
//   icewarden_config_last_reload_success_timestamp_seconds  gauge (the start counts)
std::string RenderConfigReloadMetrics(bool last_successful, std::int64_t last_success_ms);
struct AuditSealStatus;
// The audit log's seal (state/audit_seal.h), from the daemon's latest pass; no samples before
// the first pass (`status` null):
//   icewarden_audit_chain_intact                      gauge 1/0
//   icewarden_audit_chain_events                      gauge, events the pass read
//   icewarden_audit_chain_broken_at_seq               gauge, the first event that does not hold
//                                                     (0 when intact)
//   icewarden_audit_chain_last_check_timestamp_seconds gauge, this daemon's clock
std::string RenderAuditSealMetrics(const AuditSealStatus* status);
// ---- readiness, probe latency and webhooks (issue 10 items 5 and 6) --------------------------

struct RouteReadiness;
struct LatencyHistogram;

// icewarden_failover_route_ready{route}   gauge 1/0, one per configured route, from the latest
//                                         readiness round (no samples before the first)
// icewarden_readiness_round_timestamp_seconds  gauge: when the latest round finished
// `routes` may be null (no round yet, or readiness not evaluated).
std::string RenderReadinessMetrics(const std::vector<RouteReadiness>* routes);

// icewarden_probe_duration_seconds{region,kind}  histogram over every probe of every round,
// fixed buckets (kProbeLatencyBuckets, live_view.h); bounded by regions x configured kinds.
std::string RenderProbeLatencyMetrics(
    const std::map<std::pair<std::string, std::string>, LatencyHistogram>& histograms);

// icewarden_webhook_requests_total{endpoint,outcome}  counter; endpoint alertmanager | generic,
// outcome accepted | unauthorized | forbidden | replay | rejected | error (WebhookOutcome).
std::string RenderWebhookMetrics(
    const std::map<std::pair<std::string, std::string>, std::uint64_t>& counts);
// The outcome label of a webhook response with HTTP status `status`.
const char* WebhookOutcome(int status);

// ---- end of readiness, probe latency and webhooks --------------------------------------------

}  // namespace icewarden
