// TableMetadata as the Iceberg REST spec shapes it (format version 2), built and changed by pure
// functions over JSON: a new table from a CreateTableRequest, and a CommitTableRequest's
// requirements checked and updates applied to the current metadata. No I/O, no clock (callers
// pass now_ms), no locks: every function is safe to call from any thread.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

namespace icewarden::lab {

using nlohmann::json;

// A random RFC 4122 version 4 UUID, lower case.
std::string NewUuid();
// A random positive 63-bit id, as writers pick snapshot ids.
int64_t NewSnapshotId();

struct NewTableResult {
  json metadata;
  std::string error;  // non-empty: the request is invalid (400) and metadata is unset
};

// Metadata for a new table: the request's schema (schema-id 0), partition spec (field ids from
// 1000) and write order, its properties, and `default_location` unless it names a location.
NewTableResult NewTableMetadata(const json& create_request, const std::string& default_location,
                                int64_t now_ms);

// Where the next metadata file goes: <location>/metadata/NNNNN-<uuid>.metadata.json, with NNNNN
// one more than the version in `previous_location` (00000 for a new table).
std::string NextMetadataLocation(const json& metadata, const std::string& previous_location);

enum class CommitVerdict { kApplied, kUnchanged, kBadRequest, kConflict };

struct CommitApplication {
  CommitVerdict verdict = CommitVerdict::kApplied;
  std::string message;  // why, for kBadRequest and kConflict
  json metadata;        // the new metadata, for kApplied
};

// Checks every requirement (assert-table-uuid, assert-ref-snapshot-id, assert-current-schema-id,
// assert-last-assigned-field-id, assert-last-assigned-partition-id, assert-default-spec-id,
// assert-default-sort-order-id, assert-create) and applies every update (add-snapshot,
// set-snapshot-ref, remove-snapshot-ref, remove-snapshots, set-properties, remove-properties).
// Unknown or unsupported kinds and malformed entries are kBadRequest; a failed requirement is
// kConflict. On kApplied the metadata-log gains `current_location` and the snapshot-log gains an
// entry whenever the main branch moves.
CommitApplication ApplyCommit(const json& current, const std::string& current_location,
                              const json& commit_request, int64_t now_ms);

// ApplyCommit for a request that changes only properties (ChangesOnlyProperties: its updates
// are set-properties and remove-properties): the same verdict and message, and on kApplied the
// members in which the new metadata differs from `current` (properties, metadata-log,
// last-updated-ms), without copying `current` (the ownership claim a failover writes to every
// table is such a commit, and the copy of the whole metadata was most of its cost). `current`
// needs only its small members: not schemas, snapshots, snapshot-log, specs or sort orders.
struct PropertyCommitApplication {
  CommitApplication outcome;  // verdict and message; metadata is left unset
  json changes;               // kApplied: the members to put in `current`
};
PropertyCommitApplication ApplyPropertyCommit(const json& current,
                                              const std::string& current_location,
                                              const json& commit_request, int64_t now_ms);

// `object` serialized as dump() would serialize it with the members of `changes` put in (added
// or replaced), without building the changed object.
std::string DumpWithChanges(const json& object, const json& changes);

// True when every snapshot is referenced by a branch or tag: the metadata a load with
// snapshots=refs returns is then the metadata itself.
bool AllSnapshotsReferenced(const json& metadata);

// The metadata a load returns: with refs_only, only snapshots that a branch or tag references.
json MetadataForLoad(const json& metadata, bool refs_only);
// A strong ETag, distinct per metadata file and per snapshots mode (as the spec asks).
std::string MetadataEtag(const std::string& metadata_location, bool refs_only);
// The main branch's snapshot id, or -1.
int64_t MainSnapshotId(const json& metadata);

}  // namespace icewarden::lab
