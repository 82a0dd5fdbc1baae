// switchover.demotion_token: the zero-loss handover of a switchover (DESIGN.md rule 8).
//
// Capture (journaled by the executor before the first attempt, so the same token is used by
// every attempt and after a restart) reads, for every table of the scope the old owner owns in
// the store, the old owner's current main snapshot: the demotion token. The old owner is fenced
// by then (the runbook's fence steps ran), so nothing moves it any more.
//
// Run waits, up to `within`, until the target's main branch is at exactly the token's snapshot
// for every table. A target past the token (a later sequence number, or any snapshot where the
// token has none) holds commits the old owner never had: the switchover stops at once, since
// promoting it would fork the table's history. A table still behind at the bound fails the step
// with the table, how many commits it lacks and by how long it trails; the executor then
// compensates the fence and nothing is promoted (the step comes before ownership.transfer).
//
// Idempotent: it reads only. No compensation: there is nothing to undo.
#include <algorithm>
#include <nlohmann/json.hpp>

#include "actions/catalog_checks.h"
#include "actions/catalog_load.h"
#include "actions/catalog_scope.h"
#include "actions/catalog_session.h"
#include "actions/param_reader.h"
#include "actions/parsed_action.h"
#include "health/catalog_model.h"
#include "health/replication_lag.h"
#include "state/state_store.h"

namespace icewarden {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;

constexpr std::size_t kMaxTokenDetailRows = 50;
constexpr std::size_t kMaxReasonTables = 5;

struct DemotionTokenParams {
  std::string region, owner, scope;  // empty: the failover's to, from and scope
  std::chrono::milliseconds within{2min};
  std::chrono::milliseconds poll_interval{500ms};
  int concurrency = 16;
};

// One table's token: where its main branch was in the fenced old owner.
struct TokenEntry {
  TableIdent table;
  std::optional<std::int64_t> snapshot_id;  // nullopt: the table had no snapshot
  std::optional<std::int64_t> sequence_number;
  std::optional<std::int64_t> timestamp_ms;
};

// The main branch of a loaded table: refs["main"], else current-snapshot-id.
std::optional<std::int64_t> MainSnapshot(const TableSnapshotView& t) {
  if (auto it = t.refs.find("main"); it != t.refs.end() && it->second >= 0) return it->second;
  if (t.current_snapshot_id && *t.current_snapshot_id >= 0) return t.current_snapshot_id;
  return std::nullopt;
}

const SnapshotInfo* FindSnapshot(const TableSnapshotView& t, std::int64_t id) {
  for (const SnapshotInfo& s : t.snapshots)
    if (s.snapshot_id == id) return &s;
  return nullptr;
}

TokenEntry EntryOf(const TableIdent& table, const TableSnapshotView& view) {
  TokenEntry e{table, MainSnapshot(view), std::nullopt, std::nullopt};
  if (e.snapshot_id) {
    if (const SnapshotInfo* s = FindSnapshot(view, *e.snapshot_id)) {
      e.sequence_number = s->sequence_number;
      e.timestamp_ms = s->timestamp_ms;
    }
  }
  return e;
}

json OptJson(const std::optional<std::int64_t>& v) { return v ? json(*v) : json(nullptr); }

std::optional<std::int64_t> OptInt(const json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_number_integer()) return std::nullopt;
  return it->get<std::int64_t>();
}

// Where a target stands against one table's token.
struct Standing {
  enum class Kind { kAtToken, kBehind, kPast, kUnread } kind = Kind::kUnread;
  std::optional<std::int64_t> snapshot_id;
  int missing_commits = 0;           // kBehind, when sequence numbers tell
  std::chrono::milliseconds lag{0};  // kBehind: token's commit time - the target's
  std::string why;                   // one clause, after the table's name
};

Standing Compare(const TokenEntry& token, const TableSnapshotView& target,
                 const std::string& region) {
  Standing s;
  s.snapshot_id = MainSnapshot(target);
  if (s.snapshot_id == token.snapshot_id) {
    s.kind = Standing::Kind::kAtToken;
    return s;
  }
  if (!token.snapshot_id) {
    s.kind = Standing::Kind::kPast;
    s.why = region + " has snapshot " + std::to_string(*s.snapshot_id) +
            " where the old owner has none: it holds commits the old owner never had";
    return s;
  }
  const SnapshotInfo* mine = s.snapshot_id ? FindSnapshot(target, *s.snapshot_id) : nullptr;
  std::optional<std::int64_t> my_seq = mine ? mine->sequence_number : std::nullopt;
  std::optional<std::int64_t> my_ts =
      mine ? std::optional<std::int64_t>(mine->timestamp_ms) : std::nullopt;
  // Commit order: sequence numbers when both have them (format v2), else writers' clocks.
  bool past = false;
  if (my_seq && token.sequence_number)
    past = *my_seq >= *token.sequence_number;
  else if (my_ts && token.timestamp_ms)
    past = *my_ts >= *token.timestamp_ms;
  if (past) {
    s.kind = Standing::Kind::kPast;
    s.why = region + " is at snapshot " + std::to_string(*s.snapshot_id) +
            (my_seq ? " (sequence " + std::to_string(*my_seq) + ")" : "") +
            ", not at or before the token's " + std::to_string(*token.snapshot_id) +
            ": it holds commits the old owner never had";
    return s;
  }
  s.kind = Standing::Kind::kBehind;
  if (my_seq && token.sequence_number)
    s.missing_commits = static_cast<int>(*token.sequence_number - *my_seq);
  else if (!s.snapshot_id && token.sequence_number)
    s.missing_commits = static_cast<int>(*token.sequence_number);  // it has none of them
  if (my_ts && token.timestamp_ms && *token.timestamp_ms > *my_ts)
    s.lag = std::chrono::milliseconds(*token.timestamp_ms - *my_ts);
  std::string at = s.snapshot_id ? "snapshot " + std::to_string(*s.snapshot_id) : "no snapshot";
  s.why = region + " is at " + at + ", behind the token's " + std::to_string(*token.snapshot_id) +
          (s.missing_commits > 0 ? " by " + std::to_string(s.missing_commits) + " commits" : "") +
          (s.lag.count() > 0 ? " (" + FormatLagDuration(s.lag) + " of commits)" : "");
  return s;
}

class DemotionTokenAction final : public ParsedAction<DemotionTokenParams> {
 public:
  explicit DemotionTokenAction(ActionEnv env) : env_(std::move(env)) {}
  std::string_view kind() const override { return "switchover.demotion_token"; }
  bool idempotent() const override { return true; }

  // The token: the fenced old owner's main snapshot of every table of the scope.
  Result<std::string> Capture(const json& params, const ActionContext& ctx) override {
    std::vector<ParamError> errors;
    std::optional<DemotionTokenParams> p = Read(params, errors);
    if (!p) return Status::InvalidArgument(FirstParamError(errors));
    const Regions r = RegionsOf(*p, ctx);
    if (r.owner.empty() || r.target.empty() || r.owner == r.target)
      return Status::InvalidArgument("needs two different regions, owner '" + r.owner +
                                     "' and target '" + r.target + "'");
    if (env_.store == nullptr)
      return Status::FailedPrecondition("no state store is configured for actions");
    auto scope = CatalogScope::Parse(r.scope);
    if (!scope.ok()) return scope.status();
    auto rows = ListScopeOwnership(*env_.store, *scope, r.owner, kMaxScopeTables);
    if (!rows.ok()) return rows.status();
    std::vector<TableIdent> tables;
    tables.reserve(rows->size());
    for (const Ownership& o : *rows) tables.push_back(o.table);

    CatalogSession session(env_);
    auto client = session.Client(r.owner);
    if (!client.ok()) return client.status();
    // The fence steps have just read these tables of the fenced owner: mostly 304s.
    auto views = LoadTablesSeen(session, ObservationsFor(env_, ctx), r.owner, **client, tables,
                                p->concurrency, ctx);
    json entries = json::array();
    for (std::size_t i = 0; i < tables.size(); ++i) {
      if (!views[i])
        return Status::Unavailable("the step's deadline passed while reading " + r.owner);
      if (!views[i]->ok())
        return Status::Unavailable("reading the demotion token of " + tables[i].ToString() +
                                   " in " + r.owner + ": " + views[i]->status().ToString());
      const TokenEntry e = EntryOf(tables[i], (*views[i])->table);
      entries.push_back({{"table", e.table.ToString()},
                         {"namespace", e.table.namespace_levels},
                         {"name", e.table.name},
                         {"snapshot_id", OptJson(e.snapshot_id)},
                         {"sequence_number", OptJson(e.sequence_number)},
                         {"timestamp_ms", OptJson(e.timestamp_ms)}});
    }
    return json{{"owner", r.owner},
                {"target", r.target},
                {"scope", r.scope},
                {"captured_at", session.clock().Now()},
                {"tables", std::move(entries)}}
        .dump();
  }

 protected:
  std::optional<DemotionTokenParams> Read(const json& params,
                                          std::vector<ParamError>& errors) const override {
    CheckParamKeys(params, {"region", "owner", "scope", "within", "poll_interval", "concurrency"},
                   &errors);
    DemotionTokenParams p;
    if (auto v = StringParam(params, "region", &errors)) p.region = *v;
    if (auto v = StringParam(params, "owner", &errors)) p.owner = *v;
    if (auto v = StringParam(params, "scope", &errors)) {
      p.scope = *v;
      if (auto s = CatalogScope::Parse(*v); !s.ok())
        errors.push_back({"scope", s.status().message()});
    }
    if (auto v = DurationParam(params, "within", &errors)) {
      if (v->count() <= 0)
        errors.push_back({"within",
                          "must be more than 0: how long the target may take to "
                          "reach the token"});
      else
        p.within = *v;
    }
    if (auto v = DurationParam(params, "poll_interval", &errors)) {
      if (v->count() <= 0)
        errors.push_back({"poll_interval", "must be more than 0"});
      else
        p.poll_interval = *v;
    }
    if (auto v = IntParam(params, "concurrency", 1, 256, &errors))
      p.concurrency = static_cast<int>(*v);
    if (!errors.empty()) return std::nullopt;
    return p;
  }

  std::string PlanSpec(const DemotionTokenParams& p) const override {
    std::string target = p.region.empty() ? "the 'to' region" : p.region;
    std::string owner = p.owner.empty() ? "the 'from' region" : p.owner;
    std::string scope = p.scope.empty() ? "the failover's scope" : p.scope;
    return "record " + owner + "'s current main snapshot of every table of " + scope +
           " (the demotion token), then wait up to " + FormatLagDuration(p.within) + " for " +
           target +
           "'s main branch to be at exactly those snapshots; stop before promoting "
           "if a table does not get there";
  }

  ActionResult RunSpec(const DemotionTokenParams& p, const ActionContext& ctx) override {
    const Regions r = RegionsOf(p, ctx);
    json before = json::parse(ctx.before_json.empty() ? "null" : ctx.before_json, nullptr, false);
    if (!before.is_object() || !before.contains("tables") || !before["tables"].is_array())
      return ActionResult::Failed("no demotion token was recorded before this step ran");
    std::vector<TokenEntry> token;
    for (const json& t : before["tables"]) {
      TokenEntry e;
      e.table.namespace_levels = t.value("namespace", std::vector<std::string>{});
      e.table.name = t.value("name", "");
      e.snapshot_id = OptInt(t, "snapshot_id");
      e.sequence_number = OptInt(t, "sequence_number");
      e.timestamp_ms = OptInt(t, "timestamp_ms");
      token.push_back(std::move(e));
    }
    const std::string owner = before.value("owner", r.owner);
    const std::string target = before.value("target", r.target);

    CatalogSession session(env_);
    auto client = session.Client(target);
    if (!client.ok()) return ActionResult::Failed(client.status().message());
    const auto started = std::chrono::steady_clock::now();
    ActionContext bounded = ctx;
    bounded.deadline = std::min(ctx.deadline, started + p.within);

    std::vector<std::size_t> pending(token.size());
    for (std::size_t i = 0; i < token.size(); ++i) pending[i] = i;
    std::vector<std::string> etags(token.size());
    std::vector<Standing> last(token.size());
    std::vector<std::string> errors(token.size());
    int rounds = 0;
    for (;;) {
      ++rounds;
      const auto round_started = std::chrono::steady_clock::now();
      std::vector<TableIdent> tables;
      std::vector<std::string> tags;
      for (std::size_t i : pending) {
        tables.push_back(token[i].table);
        tags.push_back(etags[i]);
      }
      auto views =
          LoadTables(session, **client, tables, tags, p.concurrency, bounded, SnapshotsMode::kRefs);
      std::vector<std::size_t> still;
      for (std::size_t k = 0; k < pending.size(); ++k) {
        const std::size_t i = pending[k];
        if (!views[k]) {
          still.push_back(i);
          continue;
        }
        if (!views[k]->ok()) {
          errors[i] = views[k]->status().ToString();
          still.push_back(i);
          continue;
        }
        if ((*views[k])->not_modified) {
          still.push_back(i);
          continue;
        }
        errors[i].clear();
        etags[i] = (*views[k])->table.etag;
        last[i] = Compare(token[i], (*views[k])->table, target);
        if (last[i].kind == Standing::Kind::kPast)
          return Past(token, last, i, owner, target, started);
        if (last[i].kind != Standing::Kind::kAtToken) still.push_back(i);
      }
      pending = std::move(still);
      if (pending.empty()) break;
      // Polls start poll_interval apart: a first round over every table of a large scope takes
      // longer than the interval, and the few tables still behind after it (those the old owner
      // committed to just before the fence) are due again at once (a wait of 0).
      const auto due_in = std::chrono::ceil<std::chrono::milliseconds>(
          round_started + p.poll_interval - std::chrono::steady_clock::now());
      if (bounded.expired() || !session.Sleep(bounded, std::max(due_in, 0ms))) break;
    }
    const auto waited = std::chrono::duration_cast<std::chrono::milliseconds>(
        std::chrono::steady_clock::now() - started);
    json detail{{"owner", owner},
                {"target", target},
                {"tables", token.size()},
                {"at_token", token.size() - pending.size()},
                {"waited_ms", waited.count()},
                {"rounds", rounds},
                {"within_ms", p.within.count()},
                {"captured_at", before.value("captured_at", json(nullptr))}};
    if (pending.empty())
      return ActionResult::Succeeded(target + " is at the demotion token of all " +
                                         std::to_string(token.size()) + " tables (captured in " +
                                         owner + ") after " + FormatLagDuration(waited),
                                     detail.dump());

    // Most commits missing first: those are the tables to look at.
    std::stable_sort(pending.begin(), pending.end(), [&](std::size_t a, std::size_t b) {
      return last[a].missing_commits > last[b].missing_commits;
    });
    json rows = json::array();
    std::string names;
    for (std::size_t k = 0; k < pending.size(); ++k) {
      const std::size_t i = pending[k];
      const std::string why = !errors[i].empty()    ? target + " could not be read: " + errors[i]
                              : last[i].why.empty() ? target + " did not answer in time"
                                                    : last[i].why;
      if (k < kMaxReasonTables) {
        // Appended piece by piece: GCC 12's -O3 -Wrestrict misfires on "(k ? a : b) + string".
        if (k > 0) names += "; ";
        names += token[i].table.ToString();
        names += ": ";
        names += why;
      }
      if (k < kMaxTokenDetailRows)
        rows.push_back({{"table", token[i].table.ToString()},
                        {"token_snapshot_id", OptJson(token[i].snapshot_id)},
                        {"target_snapshot_id", OptJson(last[i].snapshot_id)},
                        {"missing_commits", last[i].missing_commits},
                        {"lag_ms", last[i].lag.count()},
                        {"reason", why}});
    }
    detail["behind"] = rows;
    detail["behind_count"] = pending.size();
    return ActionResult::Failed(
        std::to_string(pending.size()) + " of " + std::to_string(token.size()) +
            " tables did not reach the demotion token in " + target + " within " +
            FormatLagDuration(p.within) + ": " + names +
            (pending.size() > kMaxReasonTables ? "; ..." : "") + "; not promoting",
        detail.dump());
  }

 private:
  struct Regions {
    std::string owner, target, scope;
  };
  static Regions RegionsOf(const DemotionTokenParams& p, const ActionContext& ctx) {
    return {p.owner.empty() ? ctx.from : p.owner, p.region.empty() ? ctx.to : p.region,
            p.scope.empty() ? ctx.scope : p.scope};
  }

  static ActionResult Past(const std::vector<TokenEntry>& token, const std::vector<Standing>& last,
                           std::size_t i, const std::string& owner, const std::string& target,
                           std::chrono::steady_clock::time_point started) {
    const auto waited = std::chrono::duration_cast<std::chrono::milliseconds>(
        std::chrono::steady_clock::now() - started);
    json detail{{"owner", owner},
                {"target", target},
                {"tables", token.size()},
                {"waited_ms", waited.count()},
                {"diverged",
                 {{"table", token[i].table.ToString()},
                  {"token_snapshot_id", OptJson(token[i].snapshot_id)},
                  {"target_snapshot_id", OptJson(last[i].snapshot_id)}}}};
    return ActionResult::Failed(token[i].table.ToString() + ": " + last[i].why +
                                    "; not promoting: reconcile the table by hand",
                                detail.dump());
  }

  ActionEnv env_;
};

}  // namespace

std::unique_ptr<Action> MakeDemotionTokenAction(const ActionEnv& env) {
  return std::make_unique<DemotionTokenAction>(env);
}

}  // namespace icewarden
