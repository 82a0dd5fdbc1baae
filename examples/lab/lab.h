// Lab: the whole two-region (or N-region) lab in one process, for the icewarden-lab executable
// and for in-process integration tests: a catalog per region (RegionServer over CatalogApi over
// CatalogStore), ownership rules, the replicator, the workload generator and the admin API.
//
//   LabOptions options;
//   options.data_dir = dir;
//   options.regions = {{"us-east-1"}, {"eu-central-1"}};   // port 0: ephemeral
//   options.owner_rules = {{"eu\\..*", "eu-central-1"}};
//   Lab lab(options);
//   if (auto status = lab.Start(); !status.ok()) ...;
//   httplib::Client client(lab.region_url("us-east-1"));
//
// Thread-safety: after Start, every method may be called from any thread. Start and Stop are
// called by the owner only, once each (Stop is idempotent and the destructor calls it).
#pragma once

#include <httplib.h>

#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "examples/lab/commit_log.h"
#include "examples/lab/lab_region.h"
#include "examples/lab/lab_status.h"
#include "examples/lab/ownership.h"
#include "examples/lab/region_faults.h"
#include "examples/lab/replicator.h"
#include "examples/lab/workload.h"

namespace icewarden::lab {

struct RegionOption {
  std::string name;
  std::string host = "127.0.0.1";
  int port = 0;
};

struct LabOptions {
  std::string data_dir;  // DIR/REGION.db per region; created if missing
  std::vector<RegionOption> regions;
  std::string admin_host = "127.0.0.1";
  int admin_port = 0;
  bool serve_admin = true;
  std::string default_owner;  // the first region when empty
  std::vector<OwnershipRule> owner_rules;
  int replication_lag_ms = 2000;
  int workload_interval_ms = 1000;
  bool workload_enabled = true;
  std::map<std::string, std::string> workload_gateways;  // region -> gateway URL (workload.h)
  std::string token;  // static bearer token; auth is off unless this or an OAuth client is set
  std::string oauth_client_id;
  std::string oauth_client_secret;
  int seed_tables = 0;
  int server_threads = 16;        // requests each region serves at once
  std::string warehouse = "lab";  // the catalog prefix
  std::string base_location = "s3://icewarden-lab/warehouse";
};

// "127.0.0.1:18181" -> host and port; false on anything else.
bool ParseHostPort(const std::string& text, std::string* host, int* port);
// The wall clock in Unix milliseconds.
int64_t SystemNowMs();

class Lab {
 public:
  explicit Lab(LabOptions options, NowMs now_ms = SystemNowMs);
  ~Lab();
  Lab(const Lab&) = delete;
  Lab& operator=(const Lab&) = delete;

  // Opens the stores, seeds new ones, binds every listener and starts the background threads.
  LabStatus Start();
  void Stop();

  std::vector<std::string> region_names() const;
  int region_port(const std::string& region) const;  // 0 for an unknown region
  std::string region_url(const std::string& region) const;
  int admin_port() const { return admin_port_; }
  std::string admin_url() const;

  LabStatus StopRegion(const std::string& region);
  LabStatus StartRegion(const std::string& region);
  void PauseReplication() { replicator_->Pause(); }
  void ResumeReplication() { replicator_->Resume(); }
  void SetReplicationLagMs(int lag_ms) { replicator_->SetLagMs(lag_ms); }
  LabStatus SetFaults(const std::string& region, const RegionFaults& faults);
  // Merges the fields of `patch` (RegionFaults' JSON names) into the region's faults.
  LabStatus PatchFaults(const std::string& region, const nlohmann::json& patch);
  LabStatus ClearFaults(const std::string& region);
  // The region's write fence (a writer gateway's "pause writes"): while paused its catalog
  // answers table creates and data commits with 403, property-only commits still apply, and
  // the workload and rogue writer skip it. Pausing returns once the data commits in progress
  // there have finished. In memory: a restarted lab starts with writes open.
  LabStatus SetWritesPaused(const std::string& region, bool paused);
  void SetWorkload(bool enabled, int interval_ms);  // interval_ms <= 0 leaves it unchanged
  LabStatus SetRogueWriter(const std::string& region, bool enabled);
  LabStatus SetOwnershipRule(const std::string& match, const std::string& owner);
  LabStatus SetDefaultOwner(const std::string& owner);

  // Re-seeds the region's diverged replicas from their owners (of `table` only, dotted, when
  // given): each table the region holds but does not own whose copy has diverged is replaced
  // by the owner's current one as replication copies a table to a region lacking it, and the
  // snapshots only the region had are discarded (see rewind.h). On success `result` is what
  // POST /lab/regions/{r}/rewind answers; on failure it is left alone and nothing changed:
  // "unknown region: R", a stopped region or owner, a table unknown, owned by the region or
  // not held there yet.
  LabStatus RewindRegion(const std::string& region, std::optional<std::string> table,
                         nlohmann::json* result);

  // One replication pass / one workload round now, on the caller's thread.
  void ReplicateNow() { replicator_->RunOnce(); }
  int WorkloadRoundNow() { return workload_->RunOnce(); }

  // Regions (up, url, faults, writes_paused), replication, workload, ownership and per-table
  // status.
  nlohmann::json State();
  // The workload's and the rogue writer's successful commits, oldest first (see CommitLog):
  // what GET /lab/commits?table=T&since=N returns.
  nlohmann::json Commits(std::optional<std::string> table = std::nullopt, int64_t since = 0) const;

 private:
  LabRegion* Find(const std::string& region) const;
  LabStatus StartAdmin();

  LabOptions options_;
  NowMs now_ms_;
  std::vector<std::unique_ptr<LabRegion>> regions_;
  std::unique_ptr<Ownership> ownership_;
  std::unique_ptr<Replicator> replicator_;
  CommitLog commit_log_;  // before workload_, which records into it
  std::unique_ptr<Workload> workload_;
  std::unique_ptr<httplib::Server> admin_;
  std::thread admin_thread_;
  int admin_port_ = 0;
  bool started_ = false;
};

}  // namespace icewarden::lab
