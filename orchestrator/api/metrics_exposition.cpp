#include "orchestrator/api/metrics_exposition.h"

#include <algorithm>
#include <array>
#include <cstdio>
#include <vector>

#include "orchestrator/drills/drill_service.h"
#include "orchestrator/failovers/automation_pause.h"
#include "orchestrator/readiness/readiness.h"
#include "orchestrator/watch/live_view.h"
#include "state/audit_seal.h"

namespace icewarden {
namespace {

// Label values escape backslash, double quote and newline (format 0.0.4).
std::string EscapeLabel(std::string_view v) {
  std::string out;
  out.reserve(v.size());
  for (char c : v) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '"') {
      out += "\\\"";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

using Labels = std::vector<std::pair<std::string_view, std::string>>;

class Page {
 public:
  void Family(std::string_view name, std::string_view help, std::string_view type) {
    out_ += "# HELP ";
    out_ += name;
    out_ += ' ';
    out_ += help;
    out_ += "\n# TYPE ";
    out_ += name;
    out_ += ' ';
    out_ += type;
    out_ += '\n';
  }

  void Sample(std::string_view name, const Labels& labels, std::uint64_t value) {
    out_ += name;
    if (!labels.empty()) {
      out_ += '{';
      for (std::size_t i = 0; i < labels.size(); ++i) {
        if (i > 0) out_ += ',';
        out_ += labels[i].first;
        out_ += "=\"";
        out_ += EscapeLabel(labels[i].second);
        out_ += '"';
      }
      out_ += '}';
    }
    out_ += ' ';
    out_ += std::to_string(value);
    out_ += '\n';
  }

  std::string Take() { return std::move(out_); }

 private:
  std::string out_;
};

constexpr std::array<RegionHealth, 3> kHealthStates{RegionHealth::kHealthy, RegionHealth::kDegraded,
                                                    RegionHealth::kUnreachable};

constexpr std::array<FailoverPhase, 12> kPhases{
    FailoverPhase::kProposed,     FailoverPhase::kApproved,   FailoverPhase::kFencing,
    FailoverPhase::kFenced,       FailoverPhase::kPromoting,  FailoverPhase::kVerifying,
    FailoverPhase::kCompleted,    FailoverPhase::kAborted,    FailoverPhase::kFailed,
    FailoverPhase::kCompensating, FailoverPhase::kRolledBack, FailoverPhase::kNeedsAttention,
};

}  // namespace

std::string RenderMetrics(StateStore& store, const MetricsSnapshot& snapshot) {
  auto regions = store.ListRegions();
  auto owned = store.CountOwnershipByOwner();
  auto active = store.ListActiveFailovers();
  const bool store_up = regions.ok() && owned.ok() && active.ok();

  Page page;
  page.Family("icewarden_build_info", "Build information; the value is always 1.", "gauge");
  page.Sample("icewarden_build_info",
              {{"version", snapshot.version}, {"revision", snapshot.revision}}, 1);

  page.Family("icewarden_state_store_up",
              "1 if the state store answered every read for this page, 0 if one failed.", "gauge");
  page.Sample("icewarden_state_store_up", {}, store_up ? 1 : 0);

  page.Family("icewarden_region_health",
              "Region health: 1 for the region's current state, 0 for the others.", "gauge");
  if (regions.ok()) {
    for (const Region& r : *regions)
      for (RegionHealth h : kHealthStates)
        page.Sample("icewarden_region_health", {{"region", r.name}, {"state", RegionHealthName(h)}},
                    r.health == h ? 1 : 0);
  }

  page.Family("icewarden_region_fenced", "1 if the region is fenced (may not commit), else 0.",
              "gauge");
  if (regions.ok()) {
    for (const Region& r : *regions)
      page.Sample("icewarden_region_fenced", {{"region", r.name}}, r.fenced ? 1 : 0);
  }

  page.Family("icewarden_region_maintenance", "1 if the region is in maintenance, else 0.",
              "gauge");
  if (regions.ok()) {
    for (const Region& r : *regions)
      page.Sample("icewarden_region_maintenance", {{"region", r.name}}, r.maintenance ? 1 : 0);
  }

  page.Family("icewarden_tables_owned", "Tables whose writes the region owns.", "gauge");
  if (owned.ok()) {
    for (const auto& [region, count] : *owned)
      page.Sample("icewarden_tables_owned", {{"region", region}},
                  static_cast<std::uint64_t>(count < 0 ? 0 : count));
  }

  page.Family("icewarden_failovers", "Active (not terminal) failovers by phase.", "gauge");
  if (active.ok()) {
    for (FailoverPhase p : kPhases) {
      if (IsTerminal(p)) continue;
      std::uint64_t n = 0;
      for (const Failover& f : *active) n += f.phase == p ? 1 : 0;
      page.Sample("icewarden_failovers", {{"phase", FailoverPhaseName(p)}}, n);
    }
  }

  page.Family("icewarden_http_requests_total", "HTTP API responses sent, by status code.",
              "counter");
  for (const auto& [code, count] : snapshot.http_responses)
    page.Sample("icewarden_http_requests_total", {{"code", std::to_string(code)}}, count);

  return page.Take();
}

// ---- Drills (issue 10 item 3): a separate block so the families above stay as they are. ----

std::string RenderPauseMetrics(const std::vector<Pause>& pauses, std::int64_t now_ms) {
  Page page;
  page.Family("icewarden_automation_paused",
              "1 for each scope where webhooks and scheduled drills propose nothing (icewarden "
              "pause).",
              "gauge");
  for (const Pause& p : pauses) page.Sample("icewarden_automation_paused", {{"scope", p.scope}}, 1);
  page.Family("icewarden_automation_pause_overdue_seconds",
              "How long a pause has outlived the --for it was given; 0 before that or without "
              "one.",
              "gauge");
  for (const Pause& p : pauses)
    page.Sample("icewarden_automation_pause_overdue_seconds", {{"scope", p.scope}},
                static_cast<std::uint64_t>(PauseOverdueMillis(p, now_ms) / 1000));
  return page.Take();
}

std::string RenderConfigReloadMetrics(bool last_successful, std::int64_t last_success_ms) {
  Page page;
  page.Family("icewarden_config_last_reload_successful",
              "Whether the last config reload (SIGHUP or POST /api/v1/config/reload) applied.",
              "gauge");
  page.Sample("icewarden_config_last_reload_successful", {}, last_successful ? 1 : 0);
  page.Family("icewarden_config_last_reload_success_timestamp_seconds",
              "When a config was last loaded successfully (Unix seconds; the start counts).",
              "gauge");
  page.Sample("icewarden_config_last_reload_success_timestamp_seconds", {},
              static_cast<std::uint64_t>(last_success_ms / 1000));
  return page.Take();
}

std::string RenderAuditSealMetrics(const AuditSealStatus* status) {
  Page page;
  page.Family("icewarden_audit_chain_intact",
              "Whether the daemon's latest pass found every audit event sealed to the one "
              "before it (icewarden audit verify).",
              "gauge");
  if (status) page.Sample("icewarden_audit_chain_intact", {}, status->report.intact ? 1 : 0);
  page.Family("icewarden_audit_chain_events", "Audit events the latest seal check read.", "gauge");
  if (status)
    page.Sample("icewarden_audit_chain_events", {},
                static_cast<std::uint64_t>(status->report.events));
  page.Family("icewarden_audit_chain_broken_at_seq",
              "The first audit event whose seal does not hold (0 when the log is intact).",
              "gauge");
  if (status)
    page.Sample("icewarden_audit_chain_broken_at_seq", {},
                static_cast<std::uint64_t>(status->report.broken_at));
  page.Family("icewarden_audit_chain_last_check_timestamp_seconds",
              "When the latest seal check ran (Unix seconds, this daemon's clock).", "gauge");
  if (status)
    page.Sample("icewarden_audit_chain_last_check_timestamp_seconds", {},
                static_cast<std::uint64_t>(status->checked_at / 1000));
  return page.Take();
}

std::string RenderDrillMetrics(const std::vector<DrillMetric>& drills) {
  Page page;
  auto seconds = [](double v) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.3f", v);
    return std::string(buf);
  };
  std::string out;
  page.Family("icewarden_drill_last_success_timestamp_seconds",
              "When the drill's latest passing run finished (Unix seconds); absent when none "
              "has passed.",
              "gauge");
  out += page.Take();
  for (const DrillMetric& d : drills) {
    if (d.last_success_at <= 0) continue;
    out += "icewarden_drill_last_success_timestamp_seconds{drill=\"" + EscapeLabel(d.drill) +
           "\"} " + seconds(static_cast<double>(d.last_success_at) / 1000.0) + "\n";
  }
  page.Family("icewarden_drill_last_rto_seconds",
              "The RTO measured by the drill's latest run that measured one (shadow or live).",
              "gauge");
  out += page.Take();
  for (const DrillMetric& d : drills) {
    if (d.last_rto_ms < 0) continue;
    out += "icewarden_drill_last_rto_seconds{drill=\"" + EscapeLabel(d.drill) + "\"} " +
           seconds(static_cast<double>(d.last_rto_ms) / 1000.0) + "\n";
  }
  return out;
}

// ---- readiness, probe latency and webhooks (issue 10 items 5 and 6) --------------------------

namespace {

// Short seconds (bucket bounds, sums), as Prometheus reads floats.
std::string SecondsText(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

}  // namespace

std::string RenderReadinessMetrics(const std::vector<RouteReadiness>* routes) {
  Page page;
  page.Family("icewarden_failover_route_ready",
              "1 if the failover route would pass its guards, secrets and every step's preflight "
              "at the latest readiness round, else 0.",
              "gauge");
  UnixMillis at = 0;
  if (routes != nullptr) {
    for (const RouteReadiness& r : *routes) {
      page.Sample("icewarden_failover_route_ready", {{"route", r.route}}, r.ready ? 1 : 0);
      at = std::max(at, r.checked_at);
    }
  }
  std::string out = page.Take();
  out +=
      "# HELP icewarden_readiness_round_timestamp_seconds When the latest readiness round "
      "started checking.\n"
      "# TYPE icewarden_readiness_round_timestamp_seconds gauge\n";
  if (routes != nullptr && at > 0)
    out += "icewarden_readiness_round_timestamp_seconds " + std::to_string(at / 1000) + "." +
           std::to_string(1000 + at % 1000).substr(1) + "\n";
  return out;
}

std::string RenderProbeLatencyMetrics(
    const std::map<std::pair<std::string, std::string>, LatencyHistogram>& histograms) {
  std::string out =
      "# HELP icewarden_probe_duration_seconds How long each probe of a region took, by probe "
      "kind.\n"
      "# TYPE icewarden_probe_duration_seconds histogram\n";
  for (const auto& [key, h] : histograms) {
    const std::string labels =
        "region=\"" + EscapeLabel(key.first) + "\",kind=\"" + EscapeLabel(key.second) + "\"";
    std::uint64_t cumulative = 0;
    for (std::size_t i = 0; i < kProbeLatencyBuckets.size(); ++i) {
      cumulative += h.buckets[i];
      out += "icewarden_probe_duration_seconds_bucket{" + labels + ",le=\"" +
             SecondsText(kProbeLatencyBuckets[i]) + "\"} " + std::to_string(cumulative) + "\n";
    }
    out += "icewarden_probe_duration_seconds_bucket{" + labels + ",le=\"+Inf\"} " +
           std::to_string(h.count) + "\n";
    out +=
        "icewarden_probe_duration_seconds_sum{" + labels + "} " + SecondsText(h.sum_seconds) + "\n";
    out +=
        "icewarden_probe_duration_seconds_count{" + labels + "} " + std::to_string(h.count) + "\n";
  }
  return out;
}

const char* WebhookOutcome(int status) {
  if (status >= 200 && status < 300) return "accepted";
  if (status == 401) return "unauthorized";
  if (status == 403) return "forbidden";
  if (status == 409) return "replay";
  if (status >= 500) return "error";
  return "rejected";
}

std::string RenderWebhookMetrics(
    const std::map<std::pair<std::string, std::string>, std::uint64_t>& counts) {
  Page page;
  page.Family("icewarden_webhook_requests_total",
              "Webhook requests answered, by endpoint and outcome.", "counter");
  for (const auto& [key, n] : counts)
    page.Sample("icewarden_webhook_requests_total",
                {{"endpoint", key.first}, {"outcome", key.second}}, n);
  return page.Take();
}

// ---- end of readiness, probe latency and webhooks --------------------------------------------

}  // namespace icewarden
