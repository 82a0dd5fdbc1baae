#include "actions/catalog_load.h"

#include <memory>

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

}  // namespace icewarden
