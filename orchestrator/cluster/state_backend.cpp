#include "orchestrator/cluster/cluster.h"

#include <unistd.h>

#include <spdlog/spdlog.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <thread>

#include "orchestrator/api/api.h"
#include "orchestrator/api/http_server.h"
#include "orchestrator/cluster/cluster_internal.h"
#include "orchestrator/config/config.h"
#include "orchestrator/service/service.h"
#include "state/etcd_store.h"
#include "state/sqlite_store.h"

namespace icewarden {
namespace {

std::string HostName() {
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) != 0 || name[0] == '\0') return "icewarden";
  return name;
}

// The client of the etcd cluster that state.etcd names, with its TLS and credentials.
std::shared_ptr<EtcdClient> EtcdClientFor(const EtcdStateConfig& e) {
  return std::make_shared<EtcdClient>(
      EtcdClientOptions{e.endpoints,
                        e.timeout,
                        {e.tls.ca_file, e.tls.cert_file, e.tls.key.value()},
                        {e.auth.username, e.auth.password.value()}});
}

// Probes every region into `live` and serves the standby answers until Campaign wins (true) or
// a signal stops the server (false). A replica that wins at once never stands by, nor probes
// here: its CatalogWatch does.
Result<bool> StandBy(const HttpServerOptions& http, Leadership& leadership,
                     const ReplicaViews& views, const Config& config, LiveView& live,
                     std::shared_ptr<EtcdClient> etcd, std::shared_ptr<Clock> clock,
                     const std::string& about) {
  if (leadership.TryLead()) return true;
  // A standby's view is one vote on whether a region is unreachable.
  auto prober = StandbyProber::Start(config, live, clock);
  if (!prober.ok()) return prober.status();
  // Reads are answered from the shared record, never written: no fence is needed for that.
  EtcdStoreOptions ro;
  ro.prefix = config.state.etcd.prefix;
  ro.read_only = true;
  auto record = OpenEtcdStore(std::move(etcd), ro, clock);
  if (!record.ok()) return record.status();
  Api reads(config.api, **record, *clock, [] { return false; });
  reads.SetLiveView(&live);
  reads.SetClusterStatus(
      [&leadership, &views, &config] { return ClusterStatusJson(leadership, views, config); });
  HttpServer server(http, StandbyHandler(leadership, reads));
  if (Status s = server.Listen(); !s.ok()) {
    return s.WithMessage("standby: cannot listen on " + http.host + ":" +
                         std::to_string(http.port) + ": " + s.message());
  }
  std::cout << "icewarden: standby " << config.api.tls.scheme() << "://" << http.host << ":"
            << server.port() << " (" << about << ")" << std::endl;
  // A standby is started as far as systemd goes: it answers, and it takes over by itself.
  if (Status s = NotifySupervisor("READY=1\nSTATUS=standby: following the leader"); !s.ok())
    spdlog::warn("cannot tell the supervisor the standby is ready: {}", s.message());
  std::atomic<bool> stopped{false};
  std::thread serving([&] {
    server.Run();
    stopped = true;
  });
  bool leads = false;
  {
    SupervisorWatchdog watchdog(
        [&server](std::chrono::milliseconds budget) { return server.Responsive(budget); });
    leads = leadership.Campaign(stopped);
  }
  server.Stop();
  serving.join();
  return leads;
}

}  // namespace

Result<std::unique_ptr<StateStore>> OpenExistingState(const Config& config,
                                                      std::shared_ptr<Clock> clock,
                                                      bool read_only) {
  if (config.state.backend != "etcd") {
    if (!std::filesystem::exists(config.state.path)) {
      return Status::NotFound("state store " + config.state.path +
                              " does not exist yet: `icewarden serve` creates it");
    }
    SqliteStoreOptions options{config.state.path};
    options.read_only = read_only;
    auto store = OpenSqliteStore(options, std::move(clock));
    if (!store.ok())
      return store.status().WithMessage("state store " + config.state.path + ": " +
                                        store.status().message());
    return store;
  }
  EtcdStoreOptions options;
  options.prefix = config.state.etcd.prefix;
  options.max_txn_ops = static_cast<std::size_t>(config.state.etcd.max_txn_ops);
  options.read_only = read_only;
  return OpenEtcdStore(EtcdClientFor(config.state.etcd), options, std::move(clock));
}

Result<std::optional<ServeState>> OpenServeState(
    const Config& config, const HttpServerOptions& http, std::shared_ptr<Clock> clock,
    LiveView& live, std::function<void(const std::string& why)> on_lost) {
  ServeState state;
  if (config.state.backend != "etcd") {
    std::filesystem::path path = config.state.path;
    if (path.has_parent_path()) std::filesystem::create_directories(path.parent_path());
    auto store = OpenSqliteStore(SqliteStoreOptions{config.state.path}, clock);
    if (!store.ok())
      return store.status().WithMessage("state store " + config.state.path + ": " +
                                        store.status().message());
    state.store = std::move(store).value();
    state.description = "state " + config.state.path;
    return std::optional<ServeState>(std::move(state));
  }

  const EtcdStateConfig& e = config.state.etcd;
  // Standbys send clients to this URL, so it must name a port they can reach: a port the
  // kernel picks is not known before the server listens, and a standby's and a leader's
  // server may get different ones.
  if (e.advertise.empty() && http.port == 0) {
    return Status::InvalidArgument(
        "api.listen " + config.api.listen +
        " asks for any free port, but with state.backend: etcd the other replicas send "
        "clients to this replica's address: give api.listen (or --listen) a fixed port, or set "
        "state.etcd.advertise to the URL clients reach it at");
  }
  auto etcd = EtcdClientFor(e);
  // A member that answers but refuses us (wrong password, a user without a role on the
  // prefix, a CA or certificate it does not accept) will refuse every retry too: stop with
  // that, rather than stand by forever. A cluster that does not answer is waited for.
  if (auto first = etcd->Range(e.prefix + "leader"); !first.ok()) {
    const StatusCode code = first.status().code();
    if (code == StatusCode::kUnauthenticated || code == StatusCode::kPermissionDenied ||
        code == StatusCode::kInvalidArgument)
      return first.status();
  }
  LeadershipOptions lo;
  lo.key = e.prefix + "leader";
  lo.replica = e.replica.empty() ? HostName() : e.replica;
  lo.api = e.advertise.empty() ? config.api.tls.scheme() + "://" + config.api.listen : e.advertise;
  lo.ttl = std::chrono::duration_cast<std::chrono::seconds>(e.leader_ttl);
  lo.log = [](const std::string& line) { spdlog::info("{}", line); };
  if (!e.replicas.empty() &&
      std::find(e.replicas.begin(), e.replicas.end(), lo.replica) == e.replicas.end()) {
    return Status::InvalidArgument("replica '" + lo.replica +
                                   "' is not in state.etcd.replicas; name it there, or start "
                                   "this replica with --replica NAME of one listed");
  }
  state.leadership = std::make_unique<Leadership>(etcd, lo);
  ReplicaViewsOptions vo;
  vo.prefix = e.prefix;
  vo.replica = lo.replica;
  for (const RegionConfig& rc : config.regions) vo.regions.push_back(rc.name);
  vo.ttl = lo.ttl;
  vo.log = lo.log;
  state.views = std::make_unique<ReplicaViews>(etcd, vo, live, clock);
  state.views->Start();
  std::string endpoints;
  for (const std::string& url : e.endpoints) endpoints += (endpoints.empty() ? "" : ",") + url;
  const std::string about = "state etcd " + endpoints + " " + e.prefix + ", replica " + lo.replica;
  auto leads = StandBy(http, *state.leadership, *state.views, config, live, etcd, clock, about);
  if (!leads.ok()) return leads.status();
  if (!*leads) return std::optional<ServeState>();

  EtcdStoreOptions so;
  so.prefix = e.prefix;
  so.max_txn_ops = static_cast<std::size_t>(e.max_txn_ops);
  so.fence = [fence = state.leadership->Fence()] { return std::optional<EtcdCompare>(fence); };
  // Kept from here: opening the store and everything after happen within the term.
  state.leadership->Keep(std::move(on_lost));
  auto store = OpenEtcdStore(etcd, so, std::move(clock));
  if (!store.ok()) return store.status();
  state.store = std::move(store).value();
  state.description = about + ", leader";
  return std::optional<ServeState>(std::move(state));
}

}  // namespace icewarden
