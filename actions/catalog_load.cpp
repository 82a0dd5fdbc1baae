#include "actions/catalog_load.h"

#include <memory>

#include "actions/table_observations.h"
#include "health/in_flight_limit.h"

namespace icewarden {

std::vector<std::optional<Result<LoadTableOutcome>>> LoadTables(
    CatalogSession& session, CatalogClient& client, const std::vector<TableIdent>& tables,
    const std::vector<std::string>& etags, int concurrency, const ActionContext& ctx,
    SnapshotsMode snapshots) {
  using Answers = std::vector<std::optional<Result<LoadTableOutcome>>>;
  struct State {
    Answers answers;
    size_t pending = 0;
    InFlightLimit limit;
    explicit State(int c) : limit(c) {}
  };
  auto state = std::make_shared<State>(concurrency);
  state->answers.resize(tables.size());
  state->pending = tables.size();
  for (size_t i = 0; i < tables.size(); ++i) {
    std::optional<std::string> etag;
    if (i < etags.size() && !etags[i].empty()) etag = etags[i];
    TableIdent table = tables[i];
    state->limit.Run([state, i, table, etag, snapshots, &client](std::function<void()> release) {
      client.LoadTable(
          table, etag,
          [state, i, release](Result<LoadTableOutcome> r) {
            state->answers[i].emplace(std::move(r));
            --state->pending;
            release();
          },
          {}, snapshots);
    });
  }
  session.RunUntil(ctx, [state] { return state->pending == 0; });
  if (state->pending > 0) session.Abandon();
  return state->answers;
}

TableObservations* ObservationsFor(const ActionEnv& env, const ActionContext& ctx) {
  return ctx.failover_id.empty() ? nullptr : env.observations.get();
}

std::vector<std::optional<Result<LoadTableOutcome>>> LoadTablesSeen(
    CatalogSession& session, TableObservations* seen, const std::string& region,
    CatalogClient& client, const std::vector<TableIdent>& tables, int concurrency,
    const ActionContext& ctx) {
  if (seen == nullptr)
    return LoadTables(session, client, tables, {}, concurrency, ctx, SnapshotsMode::kRefs);
  std::vector<std::optional<TableSnapshotView>> before(tables.size());
  std::vector<std::string> etags(tables.size());
  for (size_t i = 0; i < tables.size(); ++i) {
    before[i] = seen->Find(ctx.failover_id, region, tables[i]);
    if (before[i]) etags[i] = before[i]->etag;
  }
  auto answers = LoadTables(session, client, tables, etags, concurrency, ctx, SnapshotsMode::kRefs);
  for (size_t i = 0; i < tables.size(); ++i) {
    if (!answers[i] || !answers[i]->ok()) continue;
    LoadTableOutcome& a = **answers[i];
    if (a.not_modified) {
      if (!before[i]) continue;  // a 304 to no ETag of ours: the caller sees it as it came
      a.not_modified = false;
      a.table = std::move(*before[i]);
      continue;
    }
    seen->Remember(ctx.failover_id, region, tables[i], a.table);
  }
  return answers;
}

}  // namespace icewarden
