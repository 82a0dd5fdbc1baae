// fence.catalog_quiet: evidence that the old owner has stopped writing. Watches the scope's
// tables in one region's catalog and succeeds only after a whole window in which it observed,
// positively, that no table moved: a baseline of every table at the start and a successful
// observation of every table after the window, all with the same metadata location and
// current snapshot. Anything it cannot observe fails the fence ("cannot observe"): fencing by
// evidence must never be assumed from silence.
#include <map>
#include <nlohmann/json.hpp>

#include "actions/catalog_checks.h"
#include "actions/catalog_load.h"
#include "actions/catalog_scope.h"
#include "actions/catalog_session.h"
#include "actions/param_reader.h"
#include "actions/parsed_action.h"
#include "actions/table_observations.h"
#include "health/replication_lag.h"
#include "state/state_store.h"

namespace icewarden {

namespace {

using namespace std::chrono_literals;

constexpr std::size_t kMaxFenceDetailRows = 100;

struct Seen {
  bool present = false;
  std::string metadata_location;
  std::optional<std::int64_t> snapshot_id;
  std::int64_t snapshot_at = 0;  // the current snapshot's timestamp, 0 when unknown
  std::string etag;

  bool same(const Seen& o) const {
    return present == o.present && metadata_location == o.metadata_location &&
           snapshot_id == o.snapshot_id;
  }
};

Seen FromView(const TableSnapshotView& v) {
  Seen s;
  s.present = true;
  s.metadata_location = v.metadata_location;
  s.snapshot_id = v.current_snapshot_id;
  s.etag = v.etag;
  for (const auto& snap : v.snapshots)
    if (v.current_snapshot_id && snap.snapshot_id == *v.current_snapshot_id)
      s.snapshot_at = snap.timestamp_ms;
  return s;
}

std::string SnapshotText(const Seen& s) {
  if (!s.present) return "absent";
  return s.snapshot_id ? std::to_string(*s.snapshot_id) : "none";
}

struct QuietFenceParams {
  std::string region, owner, scope;
  std::chrono::milliseconds window{30s};
  std::chrono::milliseconds poll_interval{1s};
  int concurrency = 16;
};
class CatalogQuietFence final : public ParsedAction<QuietFenceParams> {
 public:
  explicit CatalogQuietFence(ActionEnv env) : env_(std::move(env)) {}
  std::string_view kind() const override { return "fence.catalog_quiet"; }
  bool idempotent() const override { return true; }

 protected:
  std::optional<QuietFenceParams> Read(const nlohmann::json& params,
                                       std::vector<ParamError>& errors) const override {
    QuietFenceParams p = Parse(params, &errors);
    if (!errors.empty()) return std::nullopt;
    return p;
  }

  std::string PlanSpec(const QuietFenceParams& p) const override {
    std::string region = p.region.empty() ? "the 'from' region" : p.region;
    std::string scope = p.scope.empty() ? "the failover's scope" : p.scope;
    return "watch " + region + "'s catalog for " + FormatLagDuration(p.window) + " (a poll every " +
           FormatLagDuration(p.poll_interval) +
           ") and fail on any new "
           "commit to a table of " +
           scope + ", or when a table cannot be observed";
  }

  ActionResult RunSpec(const QuietFenceParams& p, const ActionContext& ctx) override {
    std::string region = p.region.empty() ? ctx.from : p.region;
    std::string owner = p.owner.empty() ? ctx.from : p.owner;
    std::string scope_text = p.scope.empty() ? ctx.scope : p.scope;
    if (region.empty()) return ActionResult::Failed("no region to watch");
    if (env_.store == nullptr)
      return ActionResult::Failed("no state store is configured for actions");
    auto scope = CatalogScope::Parse(scope_text);
    if (!scope.ok()) return ActionResult::Failed(scope.status().message());
    auto rows = ListScopeOwnership(*env_.store, *scope, owner, kMaxScopeTables);
    if (!rows.ok()) return ActionResult::Failed(rows.status().message());
    std::vector<TableIdent> tables;
    for (const auto& row : *rows) tables.push_back(row.table);
    if (tables.empty())
      return ActionResult::Failed("nothing to watch: no table of " + scope_text + " is owned by " +
                                  owner + " in the store");
    auto now = std::chrono::steady_clock::now();
    if (ctx.deadline < now + p.window)
      return ActionResult::Failed("the step's timeout ends before the " +
                                  FormatLagDuration(p.window) +
                                  " quiet window could pass; give the step a longer timeout");

    CatalogSession session(env_);
    auto client = session.Client(region);
    if (!client.ok()) return ActionResult::Failed(client.status().message());

    std::vector<Seen> baseline(tables.size()), last(tables.size());
    std::vector<bool> observed_after_window(tables.size(), false);
    int polls = 0, errors_seen = 0;
    auto detail = [&](const std::string& extra_key = "", const nlohmann::json& extra = {}) {
      nlohmann::json rows_json = nlohmann::json::array();
      for (size_t i = 0; i < tables.size() && i < kMaxFenceDetailRows; ++i)
        rows_json.push_back({{"table", tables[i].ToString()},
                             {"baseline_snapshot", SnapshotText(baseline[i])},
                             {"last_snapshot", SnapshotText(last[i])},
                             {"metadata_location", last[i].metadata_location}});
      nlohmann::json d{{"region", region},
                       {"scope", scope_text},
                       {"window_ms", p.window.count()},
                       {"tables_watched", tables.size()},
                       {"polls", polls},
                       {"poll_errors", errors_seen},
                       {"tables", rows_json}};
      if (!extra_key.empty()) d[extra_key] = extra;
      return DumpJson(d);
    };

    // One round: load every table (304 when unchanged); returns a failure result on change.
    // Only the metadata location and the main branch's snapshot are compared, so the loads
    // ask for the referenced snapshots only (a table's whole history can be megabytes).
    // This step's own record of what it saw, when the daemon keeps none for the failover.
    TableObservations own;
    TableObservations* seen = ObservationsFor(env_, ctx);
    if (seen == nullptr) seen = &own;
    auto poll = [&](bool is_baseline, bool after_window) -> std::optional<ActionResult> {
      // Every poll after the baseline asks with the last ETag (304 when unchanged), through
      // the failover's observations when the daemon keeps them, so that a later step reading
      // these tables gets 304s too.
      auto answers = LoadTablesSeen(session, seen, region, **client, tables, p.concurrency, ctx);
      ++polls;
      for (size_t i = 0; i < tables.size(); ++i) {
        if (!answers[i]) continue;  // expired; the caller notices
        const auto& a = *answers[i];
        Seen seen;
        if (!a.ok()) {
          if (a.status().code() != StatusCode::kNotFound) {
            ++errors_seen;
            if (is_baseline)
              return ActionResult::Failed("cannot observe " + tables[i].ToString() + " in " +
                                              region + ": " + a.status().ToString() +
                                              "; a quiet window needs positive evidence",
                                          detail());
            continue;
          }
        } else if (a->not_modified) {
          seen = last[i];
        } else {
          seen = FromView(a->table);
        }
        if (is_baseline) {
          baseline[i] = last[i] = seen;
          continue;
        }
        last[i] = seen;
        if (after_window) observed_after_window[i] = true;
        if (!seen.same(baseline[i])) {
          std::string at = seen.snapshot_at > 0 ? FormatUnixMillis(seen.snapshot_at)
                                                : FormatUnixMillis(session.clock().Now());
          return ActionResult::Failed(
              tables[i].ToString() + " got snapshot " + SnapshotText(seen) + " at " + at + " in " +
                  region + " (was " + SnapshotText(baseline[i]) +
                  "): the old owner is still writing",
              detail("changed", {{"table", tables[i].ToString()},
                                 {"snapshot", SnapshotText(seen)},
                                 {"metadata_location", seen.metadata_location}}));
        }
      }
      return std::nullopt;
    };

    auto expired_result = [&] {
      size_t missing = 0;
      std::string first;
      for (size_t i = 0; i < tables.size(); ++i)
        if (!observed_after_window[i]) {
          if (first.empty()) first = tables[i].ToString();
          ++missing;
        }
      return ActionResult::Failed("cannot observe " + std::to_string(missing) + " tables of " +
                                      scope_text + " in " + region + " after the window (first " +
                                      first +
                                      ") before the deadline; a quiet "
                                      "window needs positive evidence",
                                  detail());
    };

    if (auto failed = poll(true, false)) return *failed;
    if (ctx.expired()) return expired_result();
    auto start = std::chrono::steady_clock::now();
    auto window_end = start + p.window;
    while (true) {
      auto now2 = std::chrono::steady_clock::now();
      bool after = now2 >= window_end;
      if (!after) {
        auto wait =
            std::min<std::chrono::steady_clock::duration>(p.poll_interval, window_end - now2);
        if (!session.Sleep(ctx, std::chrono::duration_cast<std::chrono::milliseconds>(wait) + 1ms))
          return expired_result();
        after = std::chrono::steady_clock::now() >= window_end;
      }
      if (auto failed = poll(false, after)) return *failed;
      if (ctx.expired()) return expired_result();
      if (after && std::all_of(observed_after_window.begin(), observed_after_window.end(),
                               [](bool b) { return b; }))
        break;
      if (after && !session.Sleep(ctx, p.poll_interval)) return expired_result();
    }
    return ActionResult::Succeeded("no new commit on " + std::to_string(tables.size()) +
                                       " tables of " + scope_text + " in " + region + " for " +
                                       FormatLagDuration(p.window),
                                   detail());
  }

 private:
  static QuietFenceParams Parse(const nlohmann::json& params, std::vector<ParamError>* errors) {
    CheckParamKeys(params, {"region", "owner", "scope", "window", "poll_interval", "concurrency"},
                   errors);
    QuietFenceParams p;
    if (auto v = StringParam(params, "region", errors)) p.region = *v;
    if (auto v = StringParam(params, "owner", errors)) p.owner = *v;
    if (auto v = StringParam(params, "scope", errors)) {
      p.scope = *v;
      if (auto s = CatalogScope::Parse(*v); !s.ok())
        errors->push_back({"scope", s.status().message()});
    }
    if (!params.is_object() || !params.contains("window"))
      errors->push_back({"window", "is required: how long the catalog must stay quiet (\"30s\")"});
    if (auto v = DurationParam(params, "window", errors)) {
      if (v->count() <= 0)
        errors->push_back({"window", "must be more than 0"});
      else
        p.window = *v;
    }
    if (auto v = DurationParam(params, "poll_interval", errors)) {
      if (*v < kMinPollInterval)
        errors->push_back(
            {"poll_interval", "must be at least " + FormatParamDuration(kMinPollInterval)});
      else
        p.poll_interval = *v;
    }
    if (auto v = IntParam(params, "concurrency", 1, 256, errors))
      p.concurrency = static_cast<int>(*v);
    return p;
  }
  ActionEnv env_;
};

}  // namespace

std::unique_ptr<Action> MakeCatalogQuietFence(const ActionEnv& env) {
  return std::make_unique<CatalogQuietFence>(env);
}

}  // namespace icewarden
