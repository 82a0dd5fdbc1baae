// The slice of the Iceberg REST catalog model that icewarden reads and writes: the resolved
// catalog configuration, a table's snapshot history as seen by one catalog, and commits
// made of typed requirements and updates. Names follow the spec
// (shared/reference/iceberg-rest-catalog-open-api-1.11.0.yaml); the JSON mapping lives in
// health/catalog_json.h.
// Thread-safety: plain values.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "state/status.h"
#include "state/types.h"

namespace icewarden {

// One namespace, as its levels: {"sales", "eu"}.
using Namespace = std::vector<std::string>;

// GET /v1/config, resolved: defaults, then the client's properties, then overrides.
struct CatalogConfig {
  std::map<std::string, std::string> properties;
  // overrides/defaults "prefix"; empty means paths are /v1/namespaces...
  std::string prefix;
  // The server's `endpoints` ("GET /v1/{prefix}/namespaces"); nullopt when it sent none or an empty
  // list, in which case the spec's default set (which covers everything this client calls) applies.
  std::optional<std::vector<std::string>> endpoints;
  // Present `idempotency-key-lifetime` means the server honours Idempotency-Key on
  // mutations. lifetime is nullopt if the duration did not parse (keys are still used).
  bool supports_idempotency_keys = false;
  std::optional<std::chrono::milliseconds> idempotency_key_lifetime;
  // `oauth2-server-uri` from the resolved properties; empty when absent.
  std::string oauth2_server_uri;

  // True when `endpoint` ("GET /v1/{prefix}/namespaces") may be called.
  bool Advertises(std::string_view endpoint) const;
};

struct SnapshotInfo {
  std::int64_t snapshot_id = 0;
  std::optional<std::int64_t> parent_snapshot_id;
  std::optional<std::int64_t> sequence_number;  // absent in format v1 metadata
  std::int64_t timestamp_ms = 0;
  std::string operation;  // summary.operation: append | replace | overwrite | delete
};

struct SnapshotLogEntry {
  std::int64_t snapshot_id = 0;
  std::int64_t timestamp_ms = 0;
};

struct MetadataLogEntry {
  std::string metadata_file;
  std::int64_t timestamp_ms = 0;
};

// What one catalog says about one table: enough to compute lag between regions, check
// ownership markers and build commit requirements.
struct TableSnapshotView {
  std::string table_uuid;
  std::string metadata_location;
  int format_version = 0;
  std::optional<std::int64_t> current_snapshot_id;  // nullopt for an empty table (or -1)
  std::int64_t last_sequence_number = 0;
  std::int64_t last_updated_ms = 0;
  std::vector<SnapshotInfo> snapshots;
  std::map<std::string, std::int64_t> refs;  // branch or tag name -> snapshot id
  std::vector<SnapshotLogEntry> snapshot_log;
  std::vector<MetadataLogEntry> metadata_log;
  std::map<std::string, std::string> properties;
  std::string etag;  // the response's ETag; empty when the server sent none
};

// Which snapshots a table load asks for (the spec's `snapshots` query parameter). kRefs: only
// those referenced by a branch or tag; enough for anything but history (lag needs kAll), and
// much smaller for a table with thousands of snapshots.
enum class SnapshotsMode { kAll, kRefs };

struct LoadTableOutcome {
  // true: the server answered 304 to If-None-Match; `table` is empty, the caller's copy
  // is current.
  bool not_modified = false;
  TableSnapshotView table;
};

// ---- Commits --------------------------------------------------------------------------

struct AssertTableUuid {
  std::string uuid;
};

struct AssertRefSnapshotId {
  std::string ref = "main";
  // nullopt: the ref must not exist (serialised as "snapshot-id": null, as the spec says).
  std::optional<std::int64_t> snapshot_id;
};

using TableRequirement = std::variant<AssertTableUuid, AssertRefSnapshotId>;

struct SetPropertiesUpdate {
  std::map<std::string, std::string> updates;
};

struct RemovePropertiesUpdate {
  std::vector<std::string> removals;
};

// add-snapshot / set-snapshot-ref join this variant when icewarden needs them; the JSON
// writer's visitor then fails to compile until they are serialised.
using TableUpdate = std::variant<SetPropertiesUpdate, RemovePropertiesUpdate>;

struct TableCommit {
  TableIdent table;
  std::vector<TableRequirement> requirements;
  std::vector<TableUpdate> updates;
  // Empty: the client makes a fresh UUIDv7 when the catalog supports keys. A caller that
  // retries the same logical commit (after reloading, on CommitOutcome::kStateUnknown)
  // passes the key of the first attempt back in, as the spec requires.
  std::string idempotency_key;
};

struct CommitOutcome {
  enum class Kind {
    kCommitted,
    // 500/502/504, or the connection failed after the request may have reached the server.
    // The commit may or may not have happened: reload the table and check before any
    // retry. The client never retries these itself.
    kStateUnknown,
  };
  Kind kind = Kind::kCommitted;
  TableSnapshotView table;  // kCommitted: the metadata after the commit
  // kStateUnknown: why, for people. kCommitted: set only when the 200 body could not be
  // read (then `table` is empty: the commit happened, reload to see it).
  std::string detail;
  std::string idempotency_key;  // the key sent, empty when none was
  // kStateUnknown: kAnswered for 500/502/504, else what the transport said of the lost
  // exchange (kSilent when nothing came back after the request was written).
  PeerReply reply = PeerReply::kUnknown;
};

}  // namespace icewarden
