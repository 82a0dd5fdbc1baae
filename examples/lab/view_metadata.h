// ViewMetadata as the Iceberg REST spec shapes it (format version 1), built and changed by pure
// functions over JSON, as table_metadata.h does for tables: a new view from a CreateViewRequest,
// and a CommitViewRequest's requirement (assert-view-uuid) checked and its updates applied. No
// I/O, no clock (callers pass now_ms), no locks: every function is safe to call from any thread.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "examples/lab/table_metadata.h"

namespace icewarden::lab {

struct NewViewResult {
  json metadata;
  std::string error;  // non-empty: the request is invalid (400) and metadata is unset
};

// Metadata for a new view: the request's schema as schema 0, its view-version as version 1
// (current, in the version-log, its schema-id set to 0 as the spec says), its properties, and
// `default_location` unless it names a location.
NewViewResult NewViewMetadata(const json& create_request, const std::string& default_location,
                              int64_t now_ms);

// Checks assert-view-uuid and applies assign-uuid (the same uuid only), upgrade-format-version
// (to 1 only), add-schema, set-location, set-properties, remove-properties, add-view-version and
// set-current-view-version (-1: the version added last in this request; a change of the current
// version appends to version-log). Unknown kinds and malformed entries are kBadRequest, a failed
// requirement kConflict; a request that changes nothing is kUnchanged.
CommitApplication ApplyViewCommit(const json& current, const json& commit_request, int64_t now_ms);

}  // namespace icewarden::lab
