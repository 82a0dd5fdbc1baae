#include "orchestrator/cli/client.h"

#include <httplib.h>

#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>

#include "orchestrator/cli/cli.h"
#include "orchestrator/cli/http.h"
#include "orchestrator/cli/text_table.h"

namespace icewarden {
namespace {

using nlohmann::json;

struct Fetched {
  int exit_code = kExitOk;
  json body;
};

std::string Str(const json& j, const char* key) {
  if (!j.contains(key) || j[key].is_null()) return "-";
  if (j[key].is_string()) return j[key].get<std::string>();
  return j[key].dump();
}

// GETs `path` from the daemon. On failure prints what went wrong and how to fix it, and
// returns the exit code: 3 for 401/403, 1 for everything else.
Fetched Get(const ClientOptions& o, const std::string& path) {
  ApiAnswer a = CallApi(o, "GET", path);
  return Fetched{a.exit_code, a.exit_code == kExitOk ? std::move(a.body) : json()};
}

bool AsJson(const ClientOptions& o, const json& body) {
  if (o.output != "json") return false;
  std::cout << body.dump(2) << '\n';
  return true;
}

// "since 2025-01-02T03:04:05Z (6 rounds)" while the region gives no answer at all, "-"
// while it answers: only silence counts as unreachable for fencing (DESIGN.md rule 7).
std::string Silence(const json& r) {
  if (!r.contains("silent_since") || r["silent_since"].is_null()) return "-";
  return "since " + Str(r, "silent_since") + " (" + Str(r, "silent_rounds") + " rounds)";
}

void PrintRegions(const json& regions) {
  TextTable t({"REGION", "HEALTH", "FENCED", "MAINTENANCE", "SINCE", "SILENT", "REASON"});
  for (const auto& r : regions)
    t.AddRow({Str(r, "name"), Str(r, "health"), r.value("fenced", false) ? "yes" : "no",
              r.value("maintenance", false) ? "yes" : "no", Str(r, "since"), Silence(r),
              Str(r, "reason")});
  t.Print(std::cout);
}

void PrintFailovers(const json& failovers) {
  TextTable t({"ID", "KIND", "PHASE", "FROM", "TO", "SCOPE", "UPDATED", "LAST REASON"});
  for (const auto& f : failovers)
    t.AddRow({Str(f, "id"), Str(f, "kind"), Str(f, "phase"), Str(f, "from"), Str(f, "to"),
              Str(f, "scope"), Str(f, "updated_at"), Str(f, "last_reason")});
  t.Print(std::cout);
}

bool IsActive(const json& f) {
  const std::string phase = Str(f, "phase");
  return phase != "completed" && phase != "aborted" && phase != "rolled_back";
}

}  // namespace

int CmdStatus(const ClientOptions& o) {
  Fetched regions = Get(o, "/api/v1/regions");
  if (regions.exit_code != kExitOk) return regions.exit_code;
  Fetched failovers = Get(o, "/api/v1/failovers?limit=100");
  if (failovers.exit_code != kExitOk) return failovers.exit_code;
  json active = json::array();
  for (const auto& f : failovers.body["failovers"])
    if (IsActive(f)) active.push_back(f);
  if (AsJson(o, json{{"regions", regions.body["regions"]}, {"active_failovers", active}}))
    return kExitOk;
  PrintRegions(regions.body["regions"]);
  std::cout << '\n';
  if (active.empty()) {
    std::cout << "No active failovers.\n";
  } else {
    PrintFailovers(active);
  }
  return kExitOk;
}

int CmdOwnershipList(const ClientOptions& o, const std::string& owner, int limit) {
  // Pages through the API so a 100,000-table listing never sits in one response.
  json all = json::array();
  std::optional<std::string> after;
  const int page = limit > 0 && limit < 1000 ? limit : 1000;
  for (;;) {
    std::string path = "/api/v1/ownership?limit=" + std::to_string(page);
    if (!owner.empty()) path += "&owner=" + httplib::detail::encode_query_param(owner);
    if (after) path += "&after=" + httplib::detail::encode_query_param(*after);
    Fetched f = Get(o, path);
    if (f.exit_code != kExitOk) return f.exit_code;
    for (auto& t : f.body["tables"]) {
      all.push_back(std::move(t));
      if (limit > 0 && static_cast<int>(all.size()) >= limit) break;
    }
    const json& next = f.body["next_after"];
    if (next.is_null() || (limit > 0 && static_cast<int>(all.size()) >= limit)) break;
    after = next.get<std::string>();
  }
  if (AsJson(o, json{{"tables", all}})) return kExitOk;
  TextTable t({"TABLE", "OWNER", "EPOCH", "UPDATED", "FAILOVER"});
  for (const auto& row : all)
    t.AddRow({Str(row, "table"), Str(row, "owner"), Str(row, "epoch"), Str(row, "updated_at"),
              Str(row, "failover_id")});
  t.Print(std::cout);
  return kExitOk;
}

int CmdFailoverList(const ClientOptions& o, int limit) {
  Fetched f = Get(o, "/api/v1/failovers?limit=" + std::to_string(limit));
  if (f.exit_code != kExitOk) return f.exit_code;
  if (AsJson(o, f.body)) return kExitOk;
  if (f.body["failovers"].empty()) {
    std::cout << "No failovers.\n";
    return kExitOk;
  }
  PrintFailovers(f.body["failovers"]);
  return kExitOk;
}

int CmdFailoverShow(const ClientOptions& o, const std::string& id) {
  Fetched f = Get(o, "/api/v1/failovers/" + httplib::detail::encode_query_param(id));
  if (f.exit_code != kExitOk) return f.exit_code;
  if (AsJson(o, f.body)) return kExitOk;
  const json& fo = f.body.contains("failover") ? f.body["failover"] : f.body;
  for (const char* key : {"id", "kind", "phase", "scope", "from", "to", "runbook", "proposed_by",
                          "reason", "last_reason", "created_at", "updated_at"})
    std::cout << key << ": " << Str(fo, key) << '\n';
  std::cout << "approvals:\n";
  for (const auto& a : fo.value("approvals", json::array()))
    std::cout << "  - " << Str(a, "by") << " at " << Str(a, "at") << ": " << Str(a, "reason")
              << '\n';
  std::cout << "fencing: ";
  if (fo.contains("fencing") && !fo["fencing"].is_null())
    std::cout << Str(fo["fencing"], "kind") << " by " << Str(fo["fencing"], "by") << ": "
              << Str(fo["fencing"], "reason") << '\n';
  else if (fo.value("evidence_wait", json()).is_string())
    std::cout << "not confirmed; no evidence yet: " << Str(fo, "evidence_wait") << '\n';
  else
    std::cout << "not confirmed\n";
  const json steps = f.body.value("steps", fo.value("steps", json::array()));
  if (!steps.empty()) {
    std::cout << '\n';
    TextTable t({"STEP", "SECTION", "ACTION", "STATE", "ATTEMPT", "REASON"});
    for (const auto& s : steps)
      t.AddRow({Str(s, "step_id"), Str(s, "section"), Str(s, "action"), Str(s, "state"),
                Str(s, "attempt"), Str(s, "reason")});
    t.Print(std::cout);
  }
  return kExitOk;
}

int CmdAuditList(const ClientOptions& o, long long after_seq, int limit) {
  Fetched f = Get(o, "/api/v1/audit?after_seq=" + std::to_string(after_seq) +
                         "&limit=" + std::to_string(limit));
  if (f.exit_code != kExitOk) return f.exit_code;
  if (AsJson(o, f.body)) return kExitOk;
  TextTable t({"SEQ", "AT", "ACTOR", "SOURCE", "ACTION", "TARGET", "REASON"});
  for (const auto& e : f.body["events"])
    t.AddRow({Str(e, "seq"), Str(e, "at"), Str(e, "actor"), Str(e, "source"), Str(e, "action"),
              Str(e, "target"), Str(e, "reason")});
  t.Print(std::cout);
  return kExitOk;
}

namespace {

std::string Millis(const json& j, const char* key) {
  if (!j.contains(key) || !j[key].is_number()) return "-";
  long long ms = j[key].get<long long>();
  if (ms < 1000) return std::to_string(ms) + "ms";
  long long s = ms / 1000;
  if (s < 120) return std::to_string(s) + "s";
  if (s < 7200) return std::to_string(s / 60) + "m" + std::to_string(s % 60) + "s";
  if (s < 172800) return std::to_string(s / 3600) + "h" + std::to_string((s % 3600) / 60) + "m";
  return std::to_string(s / 86400) + "d";
}

// "1.4s" below 10s, where a tenth of a second is worth reading; Millis's form above.
std::string ShortMillis(long long ms) {
  if (ms < 1000 || ms >= 10'000) return Millis(json{{"ms", ms}}, "ms");
  return std::to_string(ms / 1000) + "." + std::to_string(ms % 1000 / 100) + "s";
}

// What an unknown row's numbers are worth: the last comparison of the pair and the bound
// it gives the RPO now ("last known 2 commits / 1.4s, 35s ago; RPO ≤ 36s").
std::string LastKnownText(const json& row) {
  const json last = row.value("last_known", json());
  if (!last.is_object()) return "never compared: RPO unbounded";
  const int missing = last.value("missing_commits", 0);
  return "last known " + std::to_string(missing) + (missing == 1 ? " commit / " : " commits / ") +
         ShortMillis(last.value("lag_ms", 0LL)) + ", " + ShortMillis(last.value("age_ms", 0LL)) +
         " ago; RPO ≤ " + ShortMillis(row.value("lag_bound_ms", 0LL));
}

}  // namespace

int CmdLag(const ClientOptions& o, const LagOptions& filter) {
  std::string path = "/api/v1/lag";
  std::string sep = "?";
  for (auto [name, value] : {std::pair{"table", &filter.table}, std::pair{"region", &filter.region},
                             std::pair{"state", &filter.state}}) {
    if (value->empty()) continue;
    path += sep + name + "=" + httplib::detail::encode_query_param(*value);
    sep = "&";
  }
  // Pages through the rows (1,000 at a time); the summary and errors come with every page.
  Fetched f = Get(o, path + sep + "limit=1000");
  if (f.exit_code != kExitOk) return f.exit_code;
  for (json next = f.body["next_after"]; next.is_object();) {
    Fetched more = Get(
        o, path + sep +
               "limit=1000&after=" + httplib::detail::encode_query_param(next.value("table", "")) +
               "&after_replica=" + httplib::detail::encode_query_param(next.value("replica", "")));
    if (more.exit_code != kExitOk) return more.exit_code;
    for (auto& row : more.body["tables"]) f.body["tables"].push_back(std::move(row));
    next = more.body["next_after"];
  }
  f.body["next_after"] = nullptr;
  if (AsJson(o, f.body)) return kExitOk;
  const json& sum = f.body["summary"];
  const std::string measured =
      Str(sum, "total_missing") + " commits missing, worst " + Millis(sum, "worst_lag_ms") +
      (sum.value("worst_table", json()).is_string()
           ? " (" + Str(sum, "worst_table") + " in " + Str(sum, "worst_replica") + ")"
           : std::string()) +
      (sum.value("any_divergence", false) ? ", DIVERGENCE FOUND" : "");
  std::cout << "lag at " << Str(f.body, "at") << ": " << Str(sum, "tables") << " table replicas, ";
  if (sum.value("complete", true)) {
    std::cout << measured << '\n';
  } else {
    // What was measured covers only the rows compared this round, so it comes after the
    // bound that also covers the others (their last comparison plus its age).
    std::cout << "incomplete (a catalog could not be read)";
    if (sum.contains("worst_bound_ms")) {
      std::cout << ": RPO ≤ " << ShortMillis(sum.value("worst_bound_ms", 0LL));
      if (sum.value("worst_bound_table", json()).is_string())
        std::cout << " (" << Str(sum, "worst_bound_table") << " in "
                  << Str(sum, "worst_bound_replica") << ")";
      if (int n = sum.value("unbounded", 0); n > 0)
        std::cout << ", " << n << (n == 1 ? " replica" : " replicas") << " unbounded";
    }
    std::cout << "; where compared, " << measured << '\n';
  }
  for (const auto& e : f.body.value("region_errors", json::array()))
    std::cout << "  error: " << e.get<std::string>() << '\n';
  TextTable t({"TABLE", "OWNER", "REPLICA", "STATE", "MISSING", "LAG", "RETENTION", "REASON"});
  for (const auto& r : f.body["tables"]) {
    // Nothing was measured for an unknown row this round: its 0s are not a lag.
    const bool unknown = r.value("state", "") == "unknown";
    const bool bounded = r.value("lag_bound_ms", json()).is_number();
    const bool split = r.value("split_brain", json()).is_object();
    t.AddRow({Str(r, "table"), Str(r, "owner"), Str(r, "replica"),
              split ? "SPLIT BRAIN" : Str(r, "state"), unknown ? "-" : Str(r, "missing_commits"),
              !unknown  ? Millis(r, "lag_ms")
              : bounded ? "≤" + Millis(r, "lag_bound_ms")
                        : "-",
              unknown ? "-"
                      : Millis(r, "owner_retention_ms") +
                            (r.value("retention_too_short", false) ? " (short)" : ""),
              split     ? Str(r["split_brain"], "reason")
              : unknown ? Str(r, "reason") + "; " + LastKnownText(r)
                        : Str(r, "reason")});
  }
  t.Print(std::cout);
  return kExitOk;
}

}  // namespace icewarden
