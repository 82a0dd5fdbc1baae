// orchestrator/gateway: `icewarden gateway`, a catalog gateway that makes table ownership
// hold at the Iceberg REST protocol (issue 29). This is the room's interface; the files beside
// it are its parts, read in this order:
//
//   catalog_route    what a request asks for (pure)
//   commit_rules     whether a write may go, and where (pure)
//   write_admission  the store as last read, the writes let through, closure confirmations;
//                    StoreWatch polls the store into it
//   commit_queue     one write at a time per table, in arrival order
//   region_catalogs  the regions' catalogs: their prefixes, kept-alive connections
//   gateway_handler  one request: route, decide, queue, forward, answer
//   gateway_metrics  its /metrics page
//   gateway_fence    the runbook action gateway.fence, for the orchestrator's side
//   gateway_main     the command
//
// Engines (Spark, Trino, Flink, pyiceberg, iceberg-js) point their REST catalog URI at a
// gateway instead of at a region's catalog. Reads go to the gateway's region; each write goes
// to the table's owner only while the ownership record lets it: never while a failover that
// moves the table is past `approved` (until it has moved the table), never to a fenced owner,
// never to an owner this gateway may not forward to. docs/gateway.md is the user's page.
// Thread-safety: CmdGateway runs on the calling thread until SIGINT or SIGTERM.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace icewarden {

class Action;
struct Config;

struct GatewayCommandOptions {
  std::string config_path;
  std::string name;                 // which gateways: entry; may be empty when there is only one
  std::string listen;               // overrides its listen when set
  std::string state_path;           // overrides state.path (SQLite) when set
  std::string log_format = "text";  // "text" | "json" (orchestrator/service/service.h)
};

// Serves until SIGINT/SIGTERM. Returns 0, 1 (it could not start) or 2 (bad config or name).
int CmdGateway(const GatewayCommandOptions& options);

// Where the orchestrator asks a gateway about closures: its advertise URL, else
// http(s)://<listen>; empty for a gateway on a port chosen at start without advertise.
struct GatewayEndpoint {
  std::string name;
  std::string url;
  std::string ca_file;  // trusted for its certificate (tls.ca_file); empty: the system's CAs
};
std::vector<GatewayEndpoint> GatewayEndpoints(const Config& config);

// The gateway.fence action kind over these gateways (gateway_fence.cpp), registered next to the
// built-in kinds by whoever holds the config; nullopt where no config is known (`runbook
// validate FILE`): its params are checked for shape only, and it cannot run.
std::unique_ptr<Action> MakeGatewayFenceAction(
    std::optional<std::vector<GatewayEndpoint>> gateways);

}  // namespace icewarden
