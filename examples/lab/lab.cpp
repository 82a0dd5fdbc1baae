#include "examples/lab/lab.h"

#include <chrono>
#include <filesystem>

#include "examples/lab/admin_api.h"
#include "examples/lab/lab_seed.h"
#include "examples/lab/rewind.h"

namespace icewarden::lab {

bool ParseHostPort(const std::string& text, std::string* host, int* port) {
  auto colon = text.rfind(':');
  if (colon == std::string::npos || colon == 0) return false;
  try {
    size_t used = 0;
    int value = std::stoi(text.substr(colon + 1), &used);
    if (used != text.size() - colon - 1 || value < 0 || value > 65535) return false;
    *host = text.substr(0, colon);
    *port = value;
    return true;
  } catch (const std::exception&) {
    return false;
  }
}

int64_t SystemNowMs() {
  using namespace std::chrono;
  return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
}

Lab::Lab(LabOptions options, NowMs now_ms)
    : options_(std::move(options)), now_ms_(std::move(now_ms)) {}

Lab::~Lab() { Stop(); }

LabStatus Lab::Start() {
  if (started_) return LabStatus::Error("the lab is already started");
  if (options_.regions.empty()) return LabStatus::Error("the lab needs at least one region");
  std::error_code error;
  std::filesystem::create_directories(options_.data_dir, error);
  if (error) return LabStatus::Error("cannot create " + options_.data_dir + ": " + error.message());

  std::set<std::string> names;
  for (const auto& option : options_.regions) {
    if (!names.insert(option.name).second) {
      return LabStatus::Error("region " + option.name + " is given twice");
    }
  }
  std::string default_owner =
      options_.default_owner.empty() ? options_.regions.front().name : options_.default_owner;
  if (!names.count(default_owner)) return LabStatus::Error("unknown region: " + default_owner);
  for (const auto& [region, url] : options_.workload_gateways) {
    if (!names.count(region)) {
      return LabStatus::Error("--workload-via " + region + "=" + url + ": unknown region " +
                              region);
    }
  }
  ownership_ = std::make_unique<Ownership>(names, default_owner);
  for (const auto& rule : options_.owner_rules) {
    if (auto status = ownership_->SetRule(rule.match, rule.owner); !status.ok()) return status;
  }

  RegionAuth auth{options_.token, options_.oauth_client_id, options_.oauth_client_secret};
  std::vector<LabRegion*> regions;
  for (const auto& option : options_.regions) {
    auto region = std::make_unique<LabRegion>();
    region->name = option.name;
    LabStatus status = LabStatus::Ok();
    region->store = CatalogStore::Open(options_.data_dir + "/" + option.name + ".db", &status);
    if (!region->store) return status;
    region->api = std::make_unique<CatalogApi>(
        option.name, options_.warehouse, options_.base_location, region->store.get(), now_ms_);
    region->server =
        std::make_unique<RegionServer>(option.name, option.host, option.port, region->api.get(),
                                       auth, now_ms_, options_.server_threads);
    regions.push_back(region.get());
    regions_.push_back(std::move(region));
  }
  try {
    SeedRegions(regions, *ownership_, options_.base_location, options_.seed_tables, now_ms_());
  } catch (const std::exception& e) {
    return LabStatus::Error(std::string("seeding failed: ") + e.what());
  }
  replicator_ =
      std::make_unique<Replicator>(regions, ownership_.get(), now_ms_, options_.replication_lag_ms);
  workload_ =
      std::make_unique<Workload>(regions, replicator_.get(), WorkloadTables(), &commit_log_,
                                 now_ms_, options_.workload_interval_ms, options_.workload_enabled);
  workload_->SetGateways(options_.workload_gateways);
  started_ = true;
  for (auto* region : regions) {
    if (auto status = region->server->Start(); !status.ok()) {
      Stop();
      return status;
    }
  }
  if (options_.serve_admin) {
    if (auto status = StartAdmin(); !status.ok()) {
      Stop();
      return status;
    }
  }
  replicator_->Start();
  workload_->Start();
  return LabStatus::Ok();
}

LabStatus Lab::StartAdmin() {
  admin_ = std::make_unique<httplib::Server>();
  admin_->set_keep_alive_timeout(1);
  admin_->set_payload_max_length(1 << 20);
  RegisterAdminRoutes(*admin_, *this);
  if (options_.admin_port == 0) {
    admin_port_ = admin_->bind_to_any_port(options_.admin_host);
    if (admin_port_ <= 0) return LabStatus::Error("admin: cannot bind " + options_.admin_host);
  } else if (!admin_->bind_to_port(options_.admin_host, options_.admin_port)) {
    return LabStatus::Error("admin: cannot bind " + options_.admin_host + ":" +
                            std::to_string(options_.admin_port));
  } else {
    admin_port_ = options_.admin_port;
  }
  if (!WidenListenBacklog(admin_port_)) {
    return LabStatus::Error("admin: cannot raise the listen backlog of port " +
                            std::to_string(admin_port_) + " (is /proc mounted?)");
  }
  admin_thread_ = std::thread([server = admin_.get()] { server->listen_after_bind(); });
  WaitUntilListening(*admin_);
  return LabStatus::Ok();
}

void Lab::Stop() {
  if (!started_) return;
  started_ = false;
  if (workload_) workload_->Stop();
  if (replicator_) replicator_->Stop();
  if (admin_) {
    admin_->stop();
    if (admin_thread_.joinable()) admin_thread_.join();
    admin_.reset();
  }
  for (auto& region : regions_) region->server->Stop();
}

std::vector<std::string> Lab::region_names() const {
  std::vector<std::string> names;
  for (const auto& region : regions_) names.push_back(region->name);
  return names;
}

LabRegion* Lab::Find(const std::string& region) const {
  for (const auto& candidate : regions_) {
    if (candidate->name == region) return candidate.get();
  }
  return nullptr;
}

int Lab::region_port(const std::string& region) const {
  auto* found = Find(region);
  return found ? found->server->port() : 0;
}

std::string Lab::region_url(const std::string& region) const {
  auto* found = Find(region);
  return found ? found->server->url() : "";
}

std::string Lab::admin_url() const {
  return "http://" + options_.admin_host + ":" + std::to_string(admin_port_);
}

LabStatus Lab::StopRegion(const std::string& region) {
  auto* found = Find(region);
  if (!found) return LabStatus::Error("unknown region: " + region);
  found->server->Stop();
  return LabStatus::Ok();
}

LabStatus Lab::StartRegion(const std::string& region) {
  auto* found = Find(region);
  if (!found) return LabStatus::Error("unknown region: " + region);
  return found->server->Start();
}

LabStatus Lab::SetFaults(const std::string& region, const RegionFaults& faults) {
  auto* found = Find(region);
  if (!found) return LabStatus::Error("unknown region: " + region);
  found->server->SetFaults(faults);
  return LabStatus::Ok();
}

LabStatus Lab::PatchFaults(const std::string& region, const nlohmann::json& patch) {
  auto* found = Find(region);
  if (!found) return LabStatus::Error("unknown region: " + region);
  RegionFaults faults = found->server->faults();
  std::string error;
  if (!faults.Merge(patch, &error)) return LabStatus::Error(error);
  found->server->SetFaults(faults);
  return LabStatus::Ok();
}

LabStatus Lab::ClearFaults(const std::string& region) { return SetFaults(region, RegionFaults{}); }

LabStatus Lab::SetWritesPaused(const std::string& region, bool paused) {
  auto* found = Find(region);
  if (!found) return LabStatus::Error("unknown region: " + region);
  found->api->fence().SetPaused(paused);
  return LabStatus::Ok();
}

LabStatus Lab::RewindRegion(const std::string& region, std::optional<std::string> table,
                            nlohmann::json* result) {
  auto* found = Find(region);
  if (!found) return LabStatus::Error("unknown region: " + region);
  std::optional<TableIdent> only;
  if (table) {
    TableIdent parsed;
    if (!ParseDottedTable(*table, &parsed)) {
      return LabStatus::Error("unknown table: " + *table + " (name it with its namespace, like " +
                              "sales.orders)");
    }
    only = std::move(parsed);
  }
  std::vector<LabRegion*> regions;
  for (const auto& candidate : regions_) regions.push_back(candidate.get());
  return RewindReplicas(found, regions, replicator_->Owners(), only, result);
}

void Lab::SetWorkload(bool enabled, int interval_ms) {
  workload_->SetEnabled(enabled);
  if (interval_ms > 0) workload_->SetIntervalMs(interval_ms);
}

LabStatus Lab::SetRogueWriter(const std::string& region, bool enabled) {
  return workload_->SetRogueWriter(region, enabled);
}

LabStatus Lab::SetOwnershipRule(const std::string& match, const std::string& owner) {
  return ownership_->SetRule(match, owner);
}

LabStatus Lab::SetDefaultOwner(const std::string& owner) {
  return ownership_->SetDefaultOwner(owner);
}

nlohmann::json Lab::State() {
  nlohmann::json regions = nlohmann::json::object();
  for (const auto& region : regions_) {
    regions[region->name] = {{"url", region->server->url()},
                             {"up", region->up()},
                             {"writes_paused", region->api->fence().paused()},
                             {"faults", region->server->faults().ToJson()},
                             {"requests", region->server->requests().ToJson()}};
  }
  nlohmann::json rules = nlohmann::json::array();
  for (const auto& rule : ownership_->rules()) {
    rules.push_back({{"match", rule.match}, {"owner", rule.owner}});
  }
  return {{"regions", regions},
          {"replication", {{"paused", replicator_->paused()}, {"lag_ms", replicator_->lag_ms()}}},
          {"workload", workload_->ToJson()},
          {"ownership", {{"default_owner", ownership_->default_owner()}, {"rules", rules}}},
          {"tables", replicator_->Status()}};
}

nlohmann::json Lab::Commits(std::optional<std::string> table, int64_t since) const {
  return commit_log_.ToJson(table, since);
}

}  // namespace icewarden::lab
