// The HTTP API's router and every handler behind it (orchestrator/api/), over a fresh daemon
// per input: an in-memory store, two regions, a failover route, a drill, webhook receivers.
// Whatever the request, the answer is a status and a body; nothing crashes or hangs.
//
// Input: "METHOD TARGET\n", header lines "name: value\n", an empty line, then the body.
// The tokens are tok-viewer, tok-operator, tok-approver and tok-admin (bearer), the
// Alertmanager receiver's am-token. Seeds: tests/fuzz/seeds/api/.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include <spdlog/spdlog.h>
#include "actions/action.h"
#include "health/lag_monitor.h"
#include "orchestrator/api/api.h"
#include "orchestrator/dashboard/dashboard.h"
#include "orchestrator/watch/live_view.h"

#include "orchestrator/config/config.h"
#include "orchestrator/drills/drill_service.h"
#include "orchestrator/failovers/failover_service.h"
#include "orchestrator/failovers/route_table.h"
#include "orchestrator/orchestrator.h"
#include "orchestrator/webhooks/webhooks.h"
#include "state/clock.h"
#include "state/drill_store.h"
#include "state/region_health_machine.h"
#include "state/sqlite_store.h"

namespace {

using namespace icewarden;

// The runbook and config files, written once per process.
const std::string& ConfigText() {
  static const std::string text = [] {
    char dir[] = "/tmp/icewarden-fuzz-api-XXXXXX";
    if (mkdtemp(dir) == nullptr) std::abort();
    const std::string runbook = std::string(dir) + "/runbook.yaml";
    std::ofstream(runbook) << "name: fuzz\n"
                              "fence: []\n"
                              "promote:\n"
                              "  - {id: settle, action: wait, params: {duration: 1ms}}\n"
                              "verify: []\n";
    return "api:\n"
           "  listen: 127.0.0.1:0\n"
           "  tokens:\n"
           "    - {name: viewer, role: viewer, token_env: viewer}\n"
           "    - {name: operator, role: operator, token_env: operator}\n"
           "    - {name: approver, role: approver, token_env: approver}\n"
           "    - {name: admin, role: admin, token_env: admin}\n"
           "state: {path: \":memory:\"}\n"
           "regions:\n"
           "  - {name: us-east-1, catalog_uri: \"http://127.0.0.1:9/\"}\n"
           "  - {name: eu-central-1, catalog_uri: \"http://127.0.0.1:9/\"}\n"
           "ownership:\n"
           "  default_owner: us-east-1\n"
           "  rules: [{match: \"eu.*\", owner: eu-central-1}]\n"
           "failovers:\n"
           "  - {name: us-to-eu, from: us-east-1, to: eu-central-1, runbook: " +
           runbook +
           "}\n"
           "  - {name: eu-to-us, from: eu-central-1, to: us-east-1, runbook: " +
           runbook +
           "}\n"
           "webhooks:\n"
           "  alertmanager: [{name: am, token_env: am}]\n"
           "  generic: [{name: ci, secret_env: ci, max_skew: 5m}]\n"
           "  rules:\n"
           "    - {name: p, match: {alertname: Down, severity: critical}, effect: "
           "propose_failover, route: us-to-eu}\n"
           "    - {name: s, match: {alertname: Down}, effect: mark_suspect}\n"
           "drills:\n"
           "  - {name: weekly, route: us-to-eu, mode: plan}\n";
  }();
  return text;
}

std::optional<std::string> Env(const std::string& name) {
  if (name == "am") return "am-token";
  if (name == "ci") return "ci-secret";
  return "tok-" + name;
}

struct Daemon {
  std::shared_ptr<Clock> clock = SystemClock();
  Config config;
  std::unique_ptr<StateStore> store;
  std::unique_ptr<Orchestrator> orchestrator;
  ActionRegistry actions;
  std::optional<RouteTable> routes;
  std::unique_ptr<FailoverService> failovers;
  std::unique_ptr<WebhookReceiver> webhooks;
  std::unique_ptr<DrillService> drills;
  std::unique_ptr<Api> api;
  LiveView live;
  Dashboard dashboard = Dashboard::Embedded();

  bool Start() {
    ConfigLoad load = ParseConfig(ConfigText(), "fuzz.yaml", Env);
    if (!load.config) return false;
    config = *load.config;
    auto opened = OpenSqliteStore(SqliteStoreOptions{":memory:"}, clock);
    if (!opened.ok()) return false;
    store = std::move(*opened);
    orchestrator = std::make_unique<Orchestrator>(config, *store, clock);
    if (!orchestrator->Start().ok()) return false;
    ActionEnv env;
    env.clock = clock;
    env.store = store.get();
    if (!registerBuiltinActions(actions, env).ok()) return false;
    std::vector<std::string> errors;
    routes = RouteTable::Load(config, actions, &errors);
    if (!routes) return false;

    FailoverServiceDeps f;
    f.config = &config;
    f.routes = &*routes;
    f.store = store.get();
    f.orchestrator = orchestrator.get();
    f.clock = clock;
    f.actions = &actions;
    f.env = Env;
    failovers = std::make_unique<FailoverService>(f);

    auto region_event = [this](const std::string& region, const HealthInput& input,
                               const std::string& actor) -> Result<HealthDecision> {
      auto r = store->GetRegion(region);
      if (!r.ok()) return r.status();
      if (!r->has_value()) return Status::NotFound(region);
      HealthDecision decision = ApplyHealthEvent(**r, input, {});
      if (Status s = orchestrator->RecordRegionHealth(decision, actor); !s.ok()) return s;
      return decision;
    };
    WebhookReceiverDeps w;
    w.config = &config;
    w.store = store.get();
    w.failovers = failovers.get();
    w.clock = clock;
    w.region_event = region_event;
    webhooks = std::make_unique<WebhookReceiver>(w);

    DrillServiceDeps d;
    d.config = &config;
    d.routes = &*routes;
    d.store = store.get();
    d.drills = DrillStoreOf(*store);
    d.failovers = failovers.get();
    d.actions = &actions;
    d.clock = clock;
    d.env = Env;
    d.sleep = [](std::chrono::milliseconds) {};
    d.run_inline = true;  // nothing outlives the input
    drills = std::make_unique<DrillService>(d);

    api = std::make_unique<Api>(config.api, *store, *clock, [] { return true; });
    api->SetFailoverService(failovers.get());
    api->SetWebhookReceiver(webhooks.get());
    api->SetRegionEvents(region_event);
    api->SetDrillService(drills.get());
    // The dashboard's routes, and tables with a lag round for the ownership filters.
    api->SetDashboard(&dashboard);
    std::vector<OwnershipChange> claims;
    LagReport lag;
    for (const char* t : {"eu.orders", "sales.orders", "sales.eu.returns", "salesx.t"}) {
      TableIdent table = *TableIdent::Parse(t);
      claims.push_back({table, 0, t[0] == 'e' ? "eu-central-1" : "us-east-1", ""});
      TableLag row;
      row.table = table;
      row.owner = claims.back().new_owner;
      row.replica = t[0] == 'e' ? "us-east-1" : "eu-central-1";
      row.state = t[1] == 'a' ? LagState::kBehind : LagState::kCaughtUp;
      row.lag = std::chrono::milliseconds(t[1] == 'a' ? 1500 : 0);
      lag.tables.push_back(row);
    }
    std::sort(lag.tables.begin(), lag.tables.end(), [](const TableLag& a, const TableLag& b) {
      return std::tie(a.table, a.replica) < std::tie(b.table, b.replica);
    });
    lag.at = clock->Now();
    if (!store
             ->CompareAndSetOwnership(claims,
                                      {0, 0, "fuzz", "fuzz", "ownership.claim", "", "seed", "{}"})
             .ok())
      return false;
    live.PublishLag(std::move(lag));
    api->SetLiveView(&live);
    return true;
  }
};

ApiRequest ReadRequest(const std::string& in) {
  ApiRequest req;
  req.remote = "127.0.0.1:40000";
  size_t pos = in.find('\n');
  const std::string first = in.substr(0, pos);
  const size_t space = first.find(' ');
  req.method = first.substr(0, space);
  req.target = space == std::string::npos ? "/" : first.substr(space + 1);
  while (pos != std::string::npos) {
    const size_t start = pos + 1;
    pos = in.find('\n', start);
    const std::string line = in.substr(start, pos == std::string::npos ? pos : pos - start);
    if (line.empty()) {
      if (pos != std::string::npos) req.body = in.substr(pos + 1);
      break;
    }
    const size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string name = line.substr(0, colon);
    for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    std::string value = line.substr(colon + 1);
    if (!value.empty() && value[0] == ' ') value.erase(0, 1);
    req.headers[name] = value;
  }
  return req;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  spdlog::set_level(spdlog::level::off);  // a log line per input is most of the time otherwise
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 64 * 1024) return 0;
  Daemon daemon;
  if (!daemon.Start()) std::abort();  // the harness itself is broken
  ApiResponse res =
      daemon.api->Handle(ReadRequest(std::string(reinterpret_cast<const char*>(data), size)));
  if (res.status < 100 || res.status > 599) std::abort();
  // For whoever writes seeds: what each one reached.
  if (std::getenv("ICEWARDEN_FUZZ_VERBOSE") != nullptr)
    std::fprintf(stderr, "%d %s\n", res.status, res.body.substr(0, 160).c_str());
  return 0;
}
