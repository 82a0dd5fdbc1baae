#include "examples/lab/table_metadata.h"

#include <algorithm>
#include <cstdio>
#include <random>
#include <set>

namespace icewarden::lab {
namespace {

constexpr size_t kMaxMetadataLog = 100;  // Iceberg's write.metadata.previous-versions-max

std::mt19937_64& Random() {
  thread_local std::mt19937_64 engine(std::random_device{}());
  return engine;
}

int MaxFieldId(const json& type) {
  int max_id = 0;
  if (!type.is_object()) return 0;
  for (const char* key : {"id", "element-id", "key-id", "value-id"}) {
    if (type.contains(key) && type[key].is_number_integer()) {
      max_id = std::max(max_id, type[key].get<int>());
    }
  }
  for (const char* key : {"type", "element", "key", "value"}) {
    if (type.contains(key)) max_id = std::max(max_id, MaxFieldId(type[key]));
  }
  if (type.contains("fields") && type["fields"].is_array()) {
    for (const auto& field : type["fields"]) max_id = std::max(max_id, MaxFieldId(field));
  }
  return max_id;
}

bool IsInt(const json& object, const char* key) {
  return object.is_object() && object.contains(key) && object[key].is_number_integer();
}

bool IsString(const json& object, const char* key) {
  return object.is_object() && object.contains(key) && object[key].is_string();
}

bool HasSnapshot(const json& metadata, int64_t id) {
  for (const auto& snapshot : metadata["snapshots"]) {
    if (snapshot["snapshot-id"].get<int64_t>() == id) return true;
  }
  return false;
}

const std::set<std::string>& KnownRequirements() {
  static const std::set<std::string> kinds = {"assert-create",
                                              "assert-table-uuid",
                                              "assert-ref-snapshot-id",
                                              "assert-current-schema-id",
                                              "assert-last-assigned-field-id",
                                              "assert-last-assigned-partition-id",
                                              "assert-default-spec-id",
                                              "assert-default-sort-order-id"};
  return kinds;
}

const std::set<std::string>& SupportedUpdates() {
  static const std::set<std::string> kinds = {"add-snapshot",        "set-snapshot-ref",
                                              "remove-snapshot-ref", "remove-snapshots",
                                              "set-properties",      "remove-properties"};
  return kinds;
}

// Returns an empty string when the requirement holds, or why it failed. `bad` is set when the
// requirement is malformed rather than failed.
std::string CheckRequirement(const json& metadata, const json& requirement, bool* bad) {
  const std::string type = requirement.value("type", "");
  auto int_field = [&](const char* field, const char* metadata_field) -> std::string {
    if (!IsInt(requirement, field)) {
      *bad = true;
      return type + " needs an integer " + field;
    }
    auto expected = requirement[field].get<int64_t>();
    auto actual = metadata.value(metadata_field, int64_t{-1});
    if (expected == actual) return "";
    return "Requirement failed: " + std::string(metadata_field) + " has changed: expected " +
           std::to_string(expected) + " != " + std::to_string(actual);
  };
  if (type == "assert-create") return "Requirement failed: table already exists";
  if (type == "assert-table-uuid") {
    if (!IsString(requirement, "uuid")) {
      *bad = true;
      return "assert-table-uuid needs a uuid";
    }
    auto expected = requirement["uuid"].get<std::string>();
    if (expected == metadata["table-uuid"].get<std::string>()) return "";
    return "Requirement failed: UUID does not match: expected " + expected +
           " != " + metadata["table-uuid"].get<std::string>();
  }
  if (type == "assert-ref-snapshot-id") {
    if (!IsString(requirement, "ref") || !requirement.contains("snapshot-id") ||
        !(requirement["snapshot-id"].is_null() || requirement["snapshot-id"].is_number_integer())) {
      *bad = true;
      return "assert-ref-snapshot-id needs a ref and a snapshot-id (integer or null)";
    }
    auto ref = requirement["ref"].get<std::string>();
    const json& refs = metadata["refs"];
    bool exists = refs.contains(ref);
    if (requirement["snapshot-id"].is_null()) {
      return exists ? "Requirement failed: " + ref + " was created concurrently" : "";
    }
    auto expected = requirement["snapshot-id"].get<int64_t>();
    if (!exists)
      return "Requirement failed: " + ref + " is missing, expected " + std::to_string(expected);
    auto actual = refs[ref]["snapshot-id"].get<int64_t>();
    if (actual == expected) return "";
    return "Requirement failed: " + ref + " has changed: expected id " + std::to_string(expected) +
           " != " + std::to_string(actual);
  }
  if (type == "assert-current-schema-id")
    return int_field("current-schema-id", "current-schema-id");
  if (type == "assert-last-assigned-field-id") {
    return int_field("last-assigned-field-id", "last-column-id");
  }
  if (type == "assert-last-assigned-partition-id") {
    return int_field("last-assigned-partition-id", "last-partition-id");
  }
  if (type == "assert-default-spec-id") return int_field("default-spec-id", "default-spec-id");
  if (type == "assert-default-sort-order-id") {
    return int_field("default-sort-order-id", "default-sort-order-id");
  }
  *bad = true;
  return "Unknown requirement type: " + type;
}

void SetMain(json& metadata, int64_t snapshot_id, int64_t log_ms) {
  if (metadata["current-snapshot-id"].get<int64_t>() == snapshot_id) return;
  metadata["current-snapshot-id"] = snapshot_id;
  metadata["snapshot-log"].push_back({{"snapshot-id", snapshot_id}, {"timestamp-ms", log_ms}});
}

// Applies one update in place; returns an error message (400) or "".
std::string ApplyUpdate(json& metadata, const json& update, const std::set<int64_t>& added,
                        int64_t now_ms) {
  const std::string action = update.value("action", "");
  if (action == "add-snapshot") {
    const json& snapshot = update.value("snapshot", json());
    if (!IsInt(snapshot, "snapshot-id") || !IsInt(snapshot, "timestamp-ms") ||
        !IsString(snapshot, "manifest-list") || !snapshot.contains("summary") ||
        !IsString(snapshot["summary"], "operation")) {
      return "add-snapshot needs snapshot-id, timestamp-ms, manifest-list and summary.operation";
    }
    static const std::set<std::string> operations = {"append", "replace", "overwrite", "delete"};
    if (!operations.count(snapshot["summary"]["operation"].get<std::string>())) {
      return "Unknown snapshot operation: " + snapshot["summary"]["operation"].get<std::string>();
    }
    auto id = snapshot["snapshot-id"].get<int64_t>();
    if (HasSnapshot(metadata, id)) return "Snapshot already exists: " + std::to_string(id);
    json copy = snapshot;
    auto last = metadata["last-sequence-number"].get<int64_t>();
    if (!IsInt(copy, "sequence-number")) copy["sequence-number"] = last + 1;
    auto sequence = copy["sequence-number"].get<int64_t>();
    if (sequence <= last) {
      return "Cannot add snapshot with sequence number " + std::to_string(sequence) +
             " older than last sequence number " + std::to_string(last);
    }
    metadata["last-sequence-number"] = sequence;
    metadata["snapshots"].push_back(copy);
    return "";
  }
  if (action == "set-snapshot-ref") {
    if (!IsString(update, "ref-name") || !IsInt(update, "snapshot-id") ||
        !IsString(update, "type")) {
      return "set-snapshot-ref needs ref-name, type and snapshot-id";
    }
    auto name = update["ref-name"].get<std::string>();
    auto type = update["type"].get<std::string>();
    auto id = update["snapshot-id"].get<int64_t>();
    if (type != "branch" && type != "tag") return "Unknown ref type: " + type;
    if (name == "main" && type != "branch") return "main must be a branch";
    if (!HasSnapshot(metadata, id))
      return "Cannot set " + name + " to unknown snapshot " + std::to_string(id);
    json ref = {{"type", type}, {"snapshot-id", id}};
    for (const char* key : {"max-ref-age-ms", "max-snapshot-age-ms", "min-snapshots-to-keep"}) {
      if (update.contains(key)) ref[key] = update[key];
    }
    metadata["refs"][name] = ref;
    if (name == "main") {
      int64_t log_ms = now_ms;
      if (added.count(id)) {
        for (const auto& snapshot : metadata["snapshots"]) {
          if (snapshot["snapshot-id"].get<int64_t>() == id) log_ms = snapshot["timestamp-ms"];
        }
      }
      SetMain(metadata, id, log_ms);
    }
    return "";
  }
  if (action == "remove-snapshot-ref") {
    if (!IsString(update, "ref-name")) return "remove-snapshot-ref needs ref-name";
    auto name = update["ref-name"].get<std::string>();
    metadata["refs"].erase(name);
    if (name == "main") metadata["current-snapshot-id"] = -1;
    return "";
  }
  if (action == "remove-snapshots") {
    if (!update.contains("snapshot-ids") || !update["snapshot-ids"].is_array()) {
      return "remove-snapshots needs snapshot-ids";
    }
    std::set<int64_t> ids;
    for (const auto& id : update["snapshot-ids"]) {
      if (!id.is_number_integer()) return "snapshot-ids must be integers";
      ids.insert(id.get<int64_t>());
    }
    auto drop = [&](json& array) {
      json kept = json::array();
      for (auto& entry : array) {
        if (!ids.count(entry["snapshot-id"].get<int64_t>())) kept.push_back(entry);
      }
      array = kept;
    };
    drop(metadata["snapshots"]);
    drop(metadata["snapshot-log"]);
    json refs = json::object();
    for (auto& [name, ref] : metadata["refs"].items()) {
      if (!ids.count(ref["snapshot-id"].get<int64_t>())) refs[name] = ref;
    }
    metadata["refs"] = refs;
    if (!refs.contains("main")) metadata["current-snapshot-id"] = -1;
    return "";
  }
  if (action == "set-properties") {
    if (!update.contains("updates") || !update["updates"].is_object()) {
      return "set-properties needs updates";
    }
    for (auto& [key, value] : update["updates"].items()) {
      if (!value.is_string()) return "property " + key + " must be a string";
      metadata["properties"][key] = value;
    }
    return "";
  }
  if (action == "remove-properties") {
    if (!update.contains("removals") || !update["removals"].is_array()) {
      return "remove-properties needs removals";
    }
    for (const auto& key : update["removals"]) {
      if (key.is_string()) metadata["properties"].erase(key.get<std::string>());
    }
    return "";
  }
  return "Unsupported update action: " + action;
}

}  // namespace

std::string NewUuid() {
  std::uniform_int_distribution<uint64_t> bits;
  uint64_t high = bits(Random()), low = bits(Random());
  high = (high & 0xFFFFFFFFFFFF0FFFULL) | 0x0000000000004000ULL;
  low = (low & 0x3FFFFFFFFFFFFFFFULL) | 0x8000000000000000ULL;
  char text[37];
  std::snprintf(text, sizeof(text), "%08x-%04x-%04x-%04x-%012llx",
                static_cast<unsigned>(high >> 32), static_cast<unsigned>((high >> 16) & 0xFFFF),
                static_cast<unsigned>(high & 0xFFFF), static_cast<unsigned>(low >> 48),
                static_cast<unsigned long long>(low & 0xFFFFFFFFFFFFULL));
  return text;
}

int64_t NewSnapshotId() {
  std::uniform_int_distribution<int64_t> ids(1, INT64_MAX);
  return ids(Random());
}

NewTableResult NewTableMetadata(const json& request, const std::string& default_location,
                                int64_t now_ms) {
  NewTableResult result;
  if (!request.is_object() || !IsString(request, "name") || !request.contains("schema") ||
      !request["schema"].is_object() || !request["schema"].contains("fields") ||
      !request["schema"]["fields"].is_array()) {
    result.error = "CreateTableRequest needs a name and a schema with fields";
    return result;
  }
  if (request.value("stage-create", false)) {
    result.error = "stage-create is not supported by the lab";
    return result;
  }
  json schema = request["schema"];
  schema["type"] = "struct";
  schema["schema-id"] = 0;
  json spec = {{"spec-id", 0}, {"fields", json::array()}};
  int last_partition_id = 999;
  if (request.contains("partition-spec") && request["partition-spec"].is_object()) {
    for (auto field : request["partition-spec"].value("fields", json::array())) {
      if (!IsInt(field, "field-id")) field["field-id"] = last_partition_id + 1;
      last_partition_id = std::max(last_partition_id, field["field-id"].get<int>());
      spec["fields"].push_back(field);
    }
  }
  json order = {{"order-id", 0}, {"fields", json::array()}};
  if (request.contains("write-order") && request["write-order"].is_object() &&
      !request["write-order"].value("fields", json::array()).empty()) {
    order = {{"order-id", 1}, {"fields", request["write-order"]["fields"]}};
  }
  json properties = request.value("properties", json::object());
  std::string location = request.value("location", default_location);
  result.metadata = {
      {"format-version", 2},
      {"table-uuid", NewUuid()},
      {"location", location},
      {"last-sequence-number", 0},
      {"last-updated-ms", now_ms},
      {"last-column-id", MaxFieldId(schema)},
      {"current-schema-id", 0},
      {"schemas", json::array({schema})},
      {"default-spec-id", 0},
      {"partition-specs", json::array({spec})},
      {"last-partition-id", last_partition_id},
      {"default-sort-order-id", order["order-id"]},
      {"sort-orders", json::array({order})},
      {"properties", properties},
      {"current-snapshot-id", -1},
      {"refs", json::object()},
      {"snapshots", json::array()},
      {"statistics", json::array()},
      {"partition-statistics", json::array()},
      {"snapshot-log", json::array()},
      {"metadata-log", json::array()},
  };
  return result;
}

std::string NextMetadataLocation(const json& metadata, const std::string& previous_location) {
  int version = 0;
  if (!previous_location.empty()) {
    auto slash = previous_location.rfind('/');
    version = std::atoi(previous_location.c_str() + slash + 1) + 1;
  }
  char number[16];
  std::snprintf(number, sizeof(number), "%05d", version);
  return metadata["location"].get<std::string>() + "/metadata/" + number + "-" + NewUuid() +
         ".metadata.json";
}

namespace {

// The checks ApplyCommit makes before any update: the request's shape, its kinds, then every
// requirement. False with `result` set to the verdict when the commit stops here.
bool CheckCommit(const json& current, const json& request, CommitApplication* result) {
  auto bad = [&](std::string message) {
    result->verdict = CommitVerdict::kBadRequest;
    result->message = std::move(message);
    return false;
  };
  if (!request.is_object() || !request.contains("requirements") ||
      !request["requirements"].is_array() || !request.contains("updates") ||
      !request["updates"].is_array()) {
    return bad("CommitTableRequest needs requirements and updates arrays");
  }
  // Unknown kinds are a malformed request (400) whatever the requirements say, so look first.
  for (const auto& requirement : request["requirements"]) {
    if (!requirement.is_object() || !KnownRequirements().count(requirement.value("type", ""))) {
      return bad("Unknown requirement: " + requirement.dump());
    }
  }
  for (const auto& update : request["updates"]) {
    if (!update.is_object() || !SupportedUpdates().count(update.value("action", ""))) {
      return bad("Unknown or unsupported update action: " +
                 (update.is_object() ? update.value("action", "") : update.dump()));
    }
  }
  for (const auto& requirement : request["requirements"]) {
    bool malformed = false;
    std::string failure = CheckRequirement(current, requirement, &malformed);
    if (malformed) return bad(failure);
    if (!failure.empty()) {
      result->verdict = CommitVerdict::kConflict;
      result->message = failure;
      return false;
    }
  }
  if (request["updates"].empty()) {
    result->verdict = CommitVerdict::kUnchanged;
    return false;
  }
  return true;
}

// The metadata-log once `current` (at `current_location`) is superseded.
json NextMetadataLog(const json& current, const std::string& current_location) {
  json log = current.value("metadata-log", json());
  log.push_back(
      {{"metadata-file", current_location}, {"timestamp-ms", current["last-updated-ms"]}});
  if (log.size() > kMaxMetadataLog) log.erase(log.begin(), log.end() - kMaxMetadataLog);
  return log;
}

}  // namespace

// Both are key-sorted maps, so one merge pass writes the members in dump()'s order.
std::string DumpWithChanges(const json& object, const json& changes) {
  std::string out = "{";
  bool first = true;
  auto emit = [&](const std::string& key, const json& value) {
    if (!first) out += ',';
    first = false;
    out += json(key).dump();
    out += ':';
    out += value.dump();
  };
  auto change = changes.begin();
  for (auto member = object.begin(); member != object.end(); ++member) {
    while (change != changes.end() && change.key() < member.key()) {
      emit(change.key(), change.value());
      ++change;
    }
    if (change != changes.end() && change.key() == member.key()) {
      emit(change.key(), change.value());
      ++change;
    } else {
      emit(member.key(), member.value());
    }
  }
  for (; change != changes.end(); ++change) emit(change.key(), change.value());
  out += '}';
  return out;
}

CommitApplication ApplyCommit(const json& current, const std::string& current_location,
                              const json& request, int64_t now_ms) {
  CommitApplication result;
  if (!CheckCommit(current, request, &result)) {
    if (result.verdict == CommitVerdict::kUnchanged) result.metadata = current;
    return result;
  }
  json metadata = current;
  std::set<int64_t> added;
  for (const auto& update : request["updates"]) {
    std::string error = ApplyUpdate(metadata, update, added, now_ms);
    if (!error.empty()) {
      result.verdict = CommitVerdict::kBadRequest;
      result.message = std::move(error);
      return result;
    }
    if (update["action"] == "add-snapshot") {
      added.insert(update["snapshot"]["snapshot-id"].get<int64_t>());
    }
  }
  metadata["metadata-log"] = NextMetadataLog(current, current_location);
  metadata["last-updated-ms"] = now_ms;
  result.metadata = std::move(metadata);
  return result;
}

PropertyCommitApplication ApplyPropertyCommit(const json& current,
                                              const std::string& current_location,
                                              const json& request, int64_t now_ms) {
  PropertyCommitApplication result;
  if (!CheckCommit(current, request, &result.outcome)) return result;
  // The updates touch only "properties": apply them to a copy of that member alone.
  json touched = json::object();
  if (current.contains("properties")) touched["properties"] = current["properties"];
  const std::set<int64_t> added;
  for (const auto& update : request["updates"]) {
    std::string error = ApplyUpdate(touched, update, added, now_ms);
    if (!error.empty()) {
      result.outcome.verdict = CommitVerdict::kBadRequest;
      result.outcome.message = std::move(error);
      return result;
    }
  }
  touched["metadata-log"] = NextMetadataLog(current, current_location);
  touched["last-updated-ms"] = now_ms;
  result.changes = std::move(touched);
  return result;
}

bool AllSnapshotsReferenced(const json& metadata) {
  std::set<int64_t> referenced;
  for (const auto& [name, ref] : metadata["refs"].items()) {
    referenced.insert(ref["snapshot-id"].get<int64_t>());
  }
  for (const auto& snapshot : metadata["snapshots"]) {
    if (!referenced.count(snapshot["snapshot-id"].get<int64_t>())) return false;
  }
  return true;
}

json MetadataForLoad(const json& metadata, bool refs_only) {
  if (!refs_only) return metadata;
  std::set<int64_t> referenced;
  for (const auto& [name, ref] : metadata["refs"].items()) {
    referenced.insert(ref["snapshot-id"].get<int64_t>());
  }
  if (metadata["snapshots"].empty()) return metadata;
  json copy = metadata;
  json kept = json::array();
  for (const auto& snapshot : metadata["snapshots"]) {
    if (referenced.count(snapshot["snapshot-id"].get<int64_t>())) kept.push_back(snapshot);
  }
  copy["snapshots"] = kept;
  return copy;
}

std::string MetadataEtag(const std::string& metadata_location, bool refs_only) {
  uint64_t hash = 14695981039346656037ULL;  // FNV-1a
  for (char c : metadata_location + (refs_only ? "#refs" : "#all")) {
    hash = (hash ^ static_cast<unsigned char>(c)) * 1099511628211ULL;
  }
  char text[24];
  std::snprintf(text, sizeof(text), "\"%016llx\"", static_cast<unsigned long long>(hash));
  return text;
}

int64_t MainSnapshotId(const json& metadata) {
  if (!metadata.contains("refs") || !metadata["refs"].contains("main")) return -1;
  return metadata["refs"]["main"]["snapshot-id"].get<int64_t>();
}

}  // namespace icewarden::lab
