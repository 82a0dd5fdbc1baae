#include "examples/lab/workload.h"

#include <httplib.h>

#include <chrono>
#include <cstdio>
#include <random>

#include "examples/lab/table_metadata.h"

namespace icewarden::lab {
namespace {

constexpr size_t kSnapshotsKept = 100;

int64_t RandomBetween(int64_t low, int64_t high) {
  thread_local std::mt19937_64 engine(std::random_device{}());
  return std::uniform_int_distribution<int64_t>(low, high)(engine);
}

int64_t SummaryNumber(const json& snapshot, const char* key) {
  try {
    return std::stoll(snapshot["summary"].value(key, "0"));
  } catch (const std::exception&) {
    return 0;
  }
}

}  // namespace

json AppendCommit(const json& metadata, const std::string& writer, int64_t now_ms) {
  int64_t parent = MainSnapshotId(metadata);
  json parent_snapshot = json::object();
  for (const auto& snapshot : metadata["snapshots"]) {
    if (snapshot["snapshot-id"].get<int64_t>() == parent) parent_snapshot = snapshot;
  }
  int64_t id = NewSnapshotId();
  int64_t records = RandomBetween(100, 5000);
  int64_t bytes = records * 64;
  auto total = [&](const char* key, int64_t added) {
    return std::to_string((parent_snapshot.empty() ? 0 : SummaryNumber(parent_snapshot, key)) +
                          added);
  };
  json snapshot = {{"snapshot-id", id},
                   {"sequence-number", metadata["last-sequence-number"].get<int64_t>() + 1},
                   {"timestamp-ms", now_ms},
                   {"manifest-list", metadata["location"].get<std::string>() + "/metadata/snap-" +
                                         std::to_string(id) + "-1-" + NewUuid() + ".avro"},
                   {"summary",
                    {{"operation", "append"},
                     {"added-data-files", "1"},
                     {"added-records", std::to_string(records)},
                     {"added-files-size", std::to_string(bytes)},
                     {"total-data-files", total("total-data-files", 1)},
                     {"total-records", total("total-records", records)},
                     {"total-files-size", total("total-files-size", bytes)},
                     {"total-delete-files", "0"},
                     {"icewarden-lab.writer", writer}}},
                   {"schema-id", metadata.value("current-schema-id", 0)}};
  if (parent >= 0) snapshot["parent-snapshot-id"] = parent;
  json commit = {{"requirements",
                  {{{"type", "assert-table-uuid"}, {"uuid", metadata["table-uuid"]}},
                   {{"type", "assert-ref-snapshot-id"},
                    {"ref", "main"},
                    {"snapshot-id", parent >= 0 ? json(parent) : json(nullptr)}}}},
                 {"updates",
                  {{{"action", "add-snapshot"}, {"snapshot", snapshot}},
                   {{"action", "set-snapshot-ref"},
                    {"ref-name", "main"},
                    {"type", "branch"},
                    {"snapshot-id", id}}}}};
  const json& snapshots = metadata["snapshots"];
  if (snapshots.size() >= kSnapshotsKept) {
    json expired = json::array();
    for (size_t i = 0; i + kSnapshotsKept <= snapshots.size(); ++i) {
      if (snapshots[i]["snapshot-id"].get<int64_t>() != parent) {
        expired.push_back(snapshots[i]["snapshot-id"]);
      }
    }
    commit["updates"].push_back({{"action", "remove-snapshots"}, {"snapshot-ids", expired}});
  }
  return commit;
}

Workload::Workload(std::vector<LabRegion*> regions, Replicator* replicator,
                   std::vector<TableIdent> tables, CommitLog* log, NowMs now_ms, int interval_ms,
                   bool enabled)
    : regions_(std::move(regions)),
      replicator_(replicator),
      tables_(std::move(tables)),
      log_(log),
      now_ms_(std::move(now_ms)),
      interval_ms_(interval_ms),
      enabled_(enabled) {}

Workload::~Workload() { Stop(); }

void Workload::Start() {
  std::lock_guard lock(mutex_);
  if (thread_.joinable()) return;
  stop_ = false;
  thread_ = std::thread([this] { Loop(); });
}

void Workload::Stop() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void Workload::SetIntervalMs(int interval_ms) {
  interval_ms_ = interval_ms;
  wake_.notify_all();
}

LabStatus Workload::SetRogueWriter(const std::string& region, bool enabled) {
  bool known = false;
  for (auto* candidate : regions_) known = known || candidate->name == region;
  if (!known) return LabStatus::Error("unknown region: " + region);
  // Lock order as in RunOnce: the round, then the set.
  std::unique_lock round(round_mutex_, std::defer_lock);
  if (!enabled) round.lock();
  std::lock_guard lock(mutex_);
  if (enabled) {
    rogue_regions_.insert(region);
  } else {
    rogue_regions_.erase(region);
  }
  wake_.notify_all();
  return LabStatus::Ok();
}

void Workload::SetGateways(std::map<std::string, std::string> gateways) {
  std::lock_guard round(round_mutex_);
  gateways_ = std::move(gateways);
}

json Workload::ToJson() const {
  std::lock_guard lock(mutex_);
  return {{"enabled", enabled_.load()},
          {"interval_ms", interval_ms_.load()},
          {"tables",
           [this] {
             json names = json::array();
             for (const auto& table : tables_) names.push_back(table.Dotted());
             return names;
           }()},
          {"rogue_writers", rogue_regions_},
          {"commits", commits_.load()},
          {"conflicts", conflicts_.load()},
          {"refused_paused", refused_paused_.load()},
          {"gateways", gateways_},
          {"held_off", held_off_.load()},
          {"unanswered", unanswered_.load()}};
}

void Workload::Loop() {
  std::unique_lock lock(mutex_);
  while (!stop_) {
    auto interval = std::chrono::milliseconds(std::max(10, interval_ms_.load()));
    wake_.wait_for(lock, interval, [this] { return stop_; });
    if (stop_) break;
    lock.unlock();
    try {
      RunOnce();
    } catch (const std::exception& e) {
      std::fprintf(stderr, "lab: workload round failed: %s\n", e.what());
    }
    lock.lock();
  }
}

int Workload::RunOnce() {
  std::lock_guard round(round_mutex_);
  std::set<std::string> rogues;
  {
    std::lock_guard lock(mutex_);
    rogues = rogue_regions_;
  }
  if (!enabled_ && rogues.empty()) return 0;
  int committed = 0;
  for (const auto& table : tables_) {
    // Decided per table right before its commits, as a writer that re-resolves its catalog
    // would: a decision made once per round (over every table, which takes a while with
    // thousands of them) could still send a commit to a region that lost the table meanwhile.
    auto decision = replicator_->OwnerOf(table);
    if (!decision) continue;
    for (auto* region : regions_) {
      bool owner = region->name == decision->owner;
      bool write = owner ? enabled_.load() : rogues.count(region->name) > 0;
      if (write && region->up() && Append(region, table, !owner)) ++committed;
    }
  }
  return committed;
}

bool Workload::Append(LabRegion* region, const TableIdent& table, bool rogue) {
  if (auto via = gateways_.find(region->name); !rogue && via != gateways_.end()) {
    return AppendThroughGateway(region, via->second, table);
  }
  auto loaded = region->store->LoadTable(table);
  if (!loaded) return false;
  auto response =
      region->api->Commit(table, AppendCommit(loaded->metadata, region->name, now_ms_()), "");
  if (response.status == 403) {  // the write fence: nothing else refuses an in-process commit
    ++refused_paused_;
    return false;
  }
  if (response.status != 200) {
    ++conflicts_;
    return false;
  }
  Record(table, region->name, rogue, json::parse(response.body)["metadata"]);
  return true;
}

bool Workload::AppendThroughGateway(LabRegion* region, const std::string& gateway,
                                    const TableIdent& table) {
  httplib::Client client(gateway);
  client.set_url_encode(false);
  client.set_connection_timeout(std::chrono::seconds(2));
  client.set_read_timeout(std::chrono::seconds(30));
  // Namespace levels joined by the spec's unit separator, percent-encoded (lab names are
  // otherwise URL-safe).
  std::string ns;
  for (const std::string& level : table.ns) ns += (ns.empty() ? "" : "%1F") + level;
  const std::string path = "/v1/lab/namespaces/" + ns + "/tables/" + table.name;
  auto loaded = client.Get(path);
  if (!loaded || loaded->status != 200) {
    ++(loaded && loaded->status == 503 ? held_off_ : unanswered_);
    return false;
  }
  const json metadata = json::parse(loaded->body)["metadata"];
  auto answer =
      client.Post(path, AppendCommit(metadata, region->name, now_ms_()).dump(), "application/json");
  if (!answer) {
    ++unanswered_;
    return false;
  }
  if (answer->status != 200) {
    ++(answer->status == 503 ? held_off_ : answer->status >= 500 ? unanswered_ : conflicts_);
    return false;
  }
  // Recorded under the region that committed it, which the gateway names.
  const std::string committed_in = answer->get_header_value("X-Icewarden-Region");
  Record(table, committed_in.empty() ? region->name : committed_in, false,
         json::parse(answer->body)["metadata"]);
  return true;
}

void Workload::Record(const TableIdent& table, const std::string& region, bool rogue,
                      const json& committed) {
  ++commits_;
  // What the catalog committed, as its response says, not what the request asked for.
  LoggedCommit entry{table.Dotted(),
                     region,
                     rogue ? "rogue" : "workload",
                     MainSnapshotId(committed),
                     -1,
                     committed["last-updated-ms"].get<int64_t>()};
  for (const auto& snapshot : committed["snapshots"]) {
    if (snapshot["snapshot-id"].get<int64_t>() == entry.snapshot_id) {
      entry.sequence_number = snapshot["sequence-number"].get<int64_t>();
    }
  }
  log_->Record(std::move(entry));
}

}  // namespace icewarden::lab
