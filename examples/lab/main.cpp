// icewarden-lab: the local multi-region lab in one process. See docs/lab.md.
//
//   icewarden-lab --data DIR --admin 127.0.0.1:18180
//     --region us-east-1=127.0.0.1:18181 --region eu-central-1=127.0.0.1:18182
//     --default-owner us-east-1 --owner 'eu[.].*=eu-central-1'
//     --replication-lag-ms 2000 --workload-interval-ms 1000
//
// After every listener is bound it prints one line per listener and then "lab: ready" to stdout
// (flushed), so scripts and tests can use port 0 and read the ports back. SIGINT or SIGTERM stop
// it in order.
#include <signal.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <iostream>

#include "examples/lab/lab.h"

namespace {

using icewarden::lab::Lab;
using icewarden::lab::LabOptions;

// "NAME=VALUE" -> both halves; false without '=' or with an empty half.
bool SplitPair(const std::string& text, std::string* name, std::string* value) {
  auto equals = text.rfind('=');
  if (equals == std::string::npos || equals == 0 || equals + 1 == text.size()) return false;
  *name = text.substr(0, equals);
  *value = text.substr(equals + 1);
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"icewarden-lab: Iceberg REST catalogs per region, replication and faults"};
  LabOptions options;
  std::string admin = "127.0.0.1:18180";
  std::vector<std::string> regions;
  std::vector<std::string> owners;
  std::vector<std::string> workload_via;
  std::string oauth_client;
  bool no_workload = false;
  app.add_option("--data", options.data_dir, "folder for REGION.db files")->required();
  app.add_option("--admin", admin, "admin API listen address HOST:PORT (port 0: ephemeral)");
  app.add_option("--region", regions, "NAME=HOST:PORT, once per region")->required();
  app.add_option("--default-owner", options.default_owner, "owner of unmatched tables");
  app.add_option("--owner", owners, "REGEX=REGION ownership rule (last match wins)");
  app.add_option("--replication-lag-ms", options.replication_lag_ms, "replication lag");
  app.add_option("--workload-interval-ms", options.workload_interval_ms, "workload interval");
  app.add_flag("--no-workload", no_workload, "start with the workload generator disabled");
  app.add_option("--workload-via", workload_via,
                 "REGION=URL: that region's writers commit through the catalog gateway at URL");
  app.add_option("--token", options.token, "static bearer token every /v1 route requires");
  app.add_option("--oauth-client", oauth_client, "ID:SECRET for POST /v1/oauth/tokens");
  app.add_option("--seed-tables", options.seed_tables, "extra tables to seed (scale tests)");
  app.add_option("--server-threads", options.server_threads,
                 "requests each region serves at once (default 16)");
  app.add_option("--warehouse", options.warehouse, "warehouse name, used as the catalog prefix");
  CLI11_PARSE(app, argc, argv);

  options.workload_enabled = !no_workload;
  if (!icewarden::lab::ParseHostPort(admin, &options.admin_host, &options.admin_port)) {
    std::cerr << "icewarden-lab: --admin must be HOST:PORT, got " << admin << "\n";
    return 2;
  }
  for (const auto& text : regions) {
    icewarden::lab::RegionOption region;
    std::string address;
    if (!SplitPair(text, &region.name, &address) ||
        !icewarden::lab::ParseHostPort(address, &region.host, &region.port)) {
      std::cerr << "icewarden-lab: --region must be NAME=HOST:PORT, got " << text << "\n";
      return 2;
    }
    options.regions.push_back(region);
  }
  for (const auto& text : workload_via) {
    std::string region, url;
    if (!SplitPair(text, &region, &url) || url.rfind("http://", 0) != 0) {
      std::cerr << "icewarden-lab: --workload-via must be REGION=http://HOST:PORT, got " << text
                << "\n";
      return 2;
    }
    options.workload_gateways[region] = url;
  }
  for (const auto& text : owners) {
    icewarden::lab::OwnershipRule rule;
    if (!SplitPair(text, &rule.match, &rule.owner)) {
      std::cerr << "icewarden-lab: --owner must be REGEX=REGION, got " << text << "\n";
      return 2;
    }
    options.owner_rules.push_back(rule);
  }
  if (!oauth_client.empty()) {
    auto colon = oauth_client.find(':');
    if (colon == std::string::npos || colon == 0 || colon + 1 == oauth_client.size()) {
      std::cerr << "icewarden-lab: --oauth-client must be ID:SECRET\n";
      return 2;
    }
    options.oauth_client_id = oauth_client.substr(0, colon);
    options.oauth_client_secret = oauth_client.substr(colon + 1);
  }

  // Block the stop signals before any thread starts so that only sigwait below sees them.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

  Lab lab(options);
  if (auto status = lab.Start(); !status.ok()) {
    std::cerr << "icewarden-lab: " << status.message() << "\n";
    return 1;
  }
  for (const auto& name : lab.region_names()) {
    std::printf("lab: region %s %s\n", name.c_str(), lab.region_url(name).c_str());
  }
  std::printf("lab: admin %s\n", lab.admin_url().c_str());
  std::printf("lab: ready\n");
  std::fflush(stdout);

  int signal = 0;
  sigwait(&stop_signals, &signal);
  std::printf("lab: stopping on signal %d\n", signal);
  std::fflush(stdout);
  lab.Stop();
  return 0;
}
