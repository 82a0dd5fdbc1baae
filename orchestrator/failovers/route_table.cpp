#include "orchestrator/failovers/route_table.h"

#include <fstream>
#include <sstream>

#include "actions/action.h"
#include "runbooks/runbook_parser.h"
#include "state/digest.h"
#include "state/table_pattern.h"

namespace icewarden {
namespace {

constexpr std::size_t kMaxRunbookBytes = 1 << 20;

std::optional<std::string> ReadBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream buf;
  buf << in.rdbuf();
  if (buf.str().size() > kMaxRunbookBytes) return std::nullopt;
  return buf.str();
}

// DESIGN.md rule 8 for a switchover route: its runbook promotes only after a
// switchover.demotion_token step has seen the target at the old owner's token. The step must
// come before every ownership.transfer, on its own, and stop the runbook when it fails.
std::optional<std::string> SwitchoverHandoverError(const Runbook& runbook,
                                                   const std::string& runbook_path) {
  constexpr const char* kToken = "switchover.demotion_token";
  const RunbookStep* token = nullptr;
  for (const RunbookStep& step : runbook.promote) {
    if (step.action == kToken) {
      token = &step;
      break;
    }
    if (step.action == "ownership.transfer")
      return step.pos.ToString() + ": step '" + step.id +
             "' transfers ownership before any switchover.demotion_token step: a switchover "
             "promotes only once the target is at the old owner's demotion token; put that step "
             "first";
  }
  if (token == nullptr)
    return runbook_path + ": a switchover route's runbook needs a promote step with action " +
           kToken +
           " before ownership.transfer (it records the old owner's snapshots and waits "
           "for the target to reach them: zero loss)";
  if (token->on_failure == OnFailure::kContinue)
    return token->pos.ToString() + ": step '" + token->id +
           "': on_failure: continue would promote a target that has not reached the demotion "
           "token; use abort or compensate";
  if (!token->parallel_group.empty())
    return token->pos.ToString() + ": step '" + token->id +
           "' must not run in a parallel group: the steps after it must wait for it";
  return std::nullopt;
}

}  // namespace

std::string Sha256Tag(std::string_view bytes) { return "sha256:" + Sha256Hex(bytes); }

std::optional<RouteTable> RouteTable::Load(const Config& config, const ActionRegistry& registry,
                                           std::vector<std::string>* errors) {
  std::vector<LoadedRoute> routes;
  const std::size_t before = errors->size();
  for (const FailoverRouteConfig& rc : config.failovers) {
    const std::string where = config.source_path + ":" + std::to_string(rc.line) + ":" +
                              std::to_string(rc.column) + ": failovers route '" + rc.name + "'";
    // The bytes hashed are the bytes parsed: read once.
    std::optional<std::string> text = ReadBytes(rc.runbook);
    if (!text) {
      errors->push_back(where + ": cannot read runbook " + rc.runbook +
                        " (missing, unreadable or over 1 MiB)");
      continue;
    }
    RunbookLoad load = ParseRunbook(*text, rc.runbook, registry);
    if (!load.ok()) {
      for (const RunbookError& e : load.errors) errors->push_back(e.ToString());
      continue;
    }
    std::vector<std::string> declared;
    for (const RunbookParameter& p : load.runbook->parameters) declared.push_back(p.name);
    for (const auto& [name, value] : rc.params) {
      if (std::find(declared.begin(), declared.end(), name) == declared.end()) {
        errors->push_back(where + ": params." + name + ": runbook " + rc.runbook +
                          " declares no parameter '" + name + "'");
      }
    }
    if (rc.kind == "switchover") {
      if (auto e = SwitchoverHandoverError(*load.runbook, rc.runbook)) {
        errors->push_back(where + ": " + *e);
        continue;
      }
    }
    routes.push_back(LoadedRoute{rc, std::move(*load.runbook), Sha256Tag(*text)});
  }
  if (errors->size() != before) return std::nullopt;
  return RouteTable(std::move(routes));
}

bool RouteTable::Covers(const LoadedRoute& route, FailoverKind kind, const std::string& from,
                        const std::string& to, const std::string& scope) {
  const FailoverRouteConfig& c = route.config;
  return c.kind == FailoverKindName(kind) && c.to == to && (c.from == "*" || c.from == from) &&
         GlobMatch(c.scope, scope);
}

const LoadedRoute* RouteTable::Find(FailoverKind kind, const std::string& from,
                                    const std::string& to, const std::string& scope) const {
  for (const LoadedRoute& r : routes_)
    if (Covers(r, kind, from, to, scope)) return &r;
  return nullptr;
}

const LoadedRoute* RouteTable::Named(const std::string& name) const {
  for (const LoadedRoute& r : routes_)
    if (r.config.name == name) return &r;
  return nullptr;
}

}  // namespace icewarden
