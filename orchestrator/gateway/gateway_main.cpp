// CmdGateway: loads the config, opens the state store the orchestrator writes, and serves one
// gateway until a signal.

#include <spdlog/spdlog.h>

#include <iostream>
#include <nlohmann/json.hpp>

#include "orchestrator/api/http_server.h"
#include "orchestrator/cluster/cluster.h"
#include "orchestrator/config/config.h"
#include "orchestrator/gateway/commit_queue.h"
#include "orchestrator/gateway/gateway.h"
#include "orchestrator/gateway/gateway_handler.h"
#include "orchestrator/gateway/gateway_metrics.h"
#include "orchestrator/gateway/region_catalogs.h"
#include "orchestrator/gateway/write_admission.h"
#include "orchestrator/service/service.h"

namespace icewarden {
namespace {

ApiResponse SpecError(int status, std::string_view, const std::string& message) {
  ApiResponse r;
  r.status = status;
  const char* type = status == 413   ? "PayloadTooLargeException"
                     : status == 431 ? "RequestHeaderFieldsTooLargeException"
                     : status == 503 ? "ServiceUnavailableException"
                     : status >= 500 ? "InternalServerError"
                                     : "BadRequestException";
  r.body =
      nlohmann::json{{"error", {{"message", message}, {"type", type}, {"code", status}}}}.dump();
  if (status == 503) r.headers.emplace_back("Retry-After", "1");
  return r;
}

}  // namespace

int CmdGateway(const GatewayCommandOptions& options) {
  auto log_format = ParseLogFormat(options.log_format);
  if (!log_format.ok()) {
    std::cerr << "icewarden gateway: " << log_format.status().message() << '\n';
    return kExitUsage;
  }
  ConfigureLogging("icewarden-gateway", *log_format);
  ConfigLoad load = LoadConfig(options.config_path);
  if (!load.errors.empty()) {
    for (const auto& e : load.errors) std::cerr << e.ToString() << '\n';
    return kExitUsage;
  }
  Config config = std::move(*load.config);
  {
    std::vector<std::string> regions;
    for (const RegionConfig& r : config.regions) regions.push_back(r.name);
    ConfigureLogging("icewarden-gateway", *log_format, std::move(regions));
  }
  if (!options.state_path.empty()) config.state.path = options.state_path;
  std::vector<std::string> names;
  for (const auto& g : config.gateways) names.push_back(g.name);
  const GatewayConfig* found = nullptr;
  if (options.name.empty() && config.gateways.size() == 1) {
    found = &config.gateways.front();
  } else {
    found = config.FindGateway(options.name);
  }
  if (found == nullptr) {
    std::string list;
    for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
    std::cerr << "icewarden gateway: "
              << (config.gateways.empty() ? options.config_path + " has no gateways: section"
                  : options.name.empty()
                      ? "the config has several gateways; choose one with --name (" + list + ")"
                      : "no gateway named '" + options.name + "' in " + options.config_path +
                            "; gateways are " + list)
              << '\n';
    return kExitUsage;
  }
  GatewayConfig gateway = *found;
  if (!options.listen.empty()) gateway.listen = options.listen;

  ApiConfig api;
  api.listen = gateway.listen;
  api.read_timeout = gateway.forward_timeout;
  api.write_timeout = gateway.forward_timeout;
  auto http = HttpServerOptionsFor(api);
  if (!http.ok()) {
    std::cerr << "icewarden gateway: listen " << gateway.listen << ": " << http.status().message()
              << '\n';
    return kExitUsage;
  }
  http->body_limit = gateway.max_body_bytes;
  http->threads = gateway.threads;
  // Each request holds its thread for the forward to a catalog (a lane, region_catalogs.h), so
  // a loop per thread: the thread woken for a connection's bytes answers it, without a hand-off
  // between threads per event (issue 29's throughput; docs/gateway.md, "Threads").
  http->loop_per_thread = true;
  http->local_error = SpecError;
  if (gateway.tls.enabled())
    http->tls = HttpServerTls{gateway.tls.cert_file, gateway.tls.key.value(), ""};

  // Unfenced on etcd: a gateway writes nothing but audit events, which any replica may append.
  auto store = OpenExistingState(config, SystemClock(), /*read_only=*/false);
  if (!store.ok()) {
    std::cerr << "icewarden gateway: " << store.status().message() << '\n';
    return kExitFailed;
  }
  RegionCatalogs catalogs(config, gateway.forward_to);
  for (const std::string& problem : catalogs.ReadConfigs()) {
    spdlog::warn("{} (read again on first use)", problem);
  }
  WriteAdmission admission(gateway.forward_to);
  StoreWatch watch(**store, admission, gateway.store_poll);
  watch.Start();
  CommitQueue queue(gateway.queue_per_table);
  GatewayMetrics metrics;

  std::unique_ptr<GatewayHandler> handler;
  HttpServer server(*http,
                    [&handler](const ApiRequest& request) { return handler->Handle(request); });
  if (Status s = server.Listen(); !s.ok()) {
    std::cerr << "icewarden gateway: cannot listen on " << gateway.listen << ": " << s.message()
              << '\n';
    return kExitFailed;
  }
  std::string advertise = gateway.advertise;
  if (advertise.empty()) {
    advertise = std::string(gateway.tls.enabled() ? "https://" : "http://") + http->host + ":" +
                std::to_string(server.port());
  }
  handler = std::make_unique<GatewayHandler>(config, gateway, advertise, **store, catalogs,
                                             admission, queue, metrics);
  // The one line scripts and tests wait for, on stdout.
  std::cout << "icewarden gateway " << gateway.name << ": " << advertise << "/v1/" << gateway.prefix
            << " (reads: " << gateway.region << ")" << std::endl;
  if (Status s = NotifySupervisor("READY=1\nSTATUS=gateway " + gateway.name + " serving"); !s.ok())
    spdlog::warn("cannot tell the supervisor the gateway is ready: {}", s.message());
  {
    SupervisorWatchdog watchdog(
        [&server](std::chrono::milliseconds budget) { return server.Responsive(budget); });
    server.Run();
  }
  (void)NotifySupervisor("STOPPING=1");
  watch.Stop();
  return kExitOk;
}

}  // namespace icewarden
