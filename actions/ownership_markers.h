// Ownership markers: the icewarden.owner / icewarden.epoch table properties that
// ownership.transfer writes in the new owner's catalog (DESIGN.md, "Iceberg REST catalog
// usage"), read back and judged against the store's row for the table
// (verify.ownership_markers, ownership_markers_check.cpp).
//
// The store is the source of truth and epochs never go down, so a marker in region R's catalog
// for a table the store records as (owner O, epoch E) is:
//   ok           at epoch E, naming O
//   stale        at an epoch below E: a stale leader's or a stale run's residue (or, in a replica
//                catalog, a marker that replication has not brought up to date yet)
//   ahead        at an epoch above E: a marker from a future epoch; the store was rolled back or
//                another orchestrator writes this catalog
//   conflicting  at epoch E, naming a region other than O: two owners for one epoch
//   invalid      one of the two properties without the other, or an epoch that is not a whole
//                number >= 0 (what icewarden writes: decimal digits)
// and a table with no marker at all (neither property, or the table is not in R's catalog) is:
//   missing      when O is R and a failover moved the row (its failover id is set): the transfer
//                that moved it there should have written one; a failure unless the step allows
//                missing markers (allow_missing: a transfer run with write_catalog_properties off)
//   unmarked     otherwise: a table R does not own (only a marker there is checked), or an
//                initial claim (no failover moved it, so nothing ever marked it); never a failure
// A table whose load fails (any answer but 404, or none) is unreadable: the step cannot tell,
// and fails.
// Thread-safety: pure functions.
#pragma once

#include <map>
#include <optional>
#include <string>

#include "state/types.h"

namespace icewarden {

inline constexpr const char* kOwnerMarkerProperty = "icewarden.owner";
inline constexpr const char* kEpochMarkerProperty = "icewarden.epoch";

enum class MarkerVerdict { kOk, kUnmarked, kMissing, kStale, kAhead, kConflicting, kInvalid };
inline constexpr MarkerVerdict kMarkerVerdicts[] = {
    MarkerVerdict::kOk,     MarkerVerdict::kUnmarked, MarkerVerdict::kMissing,
    MarkerVerdict::kStale,  MarkerVerdict::kAhead,    MarkerVerdict::kConflicting,
    MarkerVerdict::kInvalid};
// "ok", "unmarked", "missing", "stale", "ahead", "conflicting", "invalid".
const char* MarkerVerdictName(MarkerVerdict v);

// The two properties as the catalog holds them; nullopt members are absent.
struct MarkerProperties {
  std::optional<std::string> owner{};
  std::optional<std::string> epoch{};
};
MarkerProperties ReadMarkerProperties(const std::map<std::string, std::string>& properties);
// An icewarden.epoch value as icewarden writes it (decimal digits); nullopt for anything else.
std::optional<Epoch> ParseMarkerEpoch(const std::string& text);

struct MarkerJudgement {
  MarkerVerdict verdict = MarkerVerdict::kOk;
  std::optional<Epoch> marker_epoch{};  // when it parsed
  // One bounded sentence about the table (without its name), for failures; empty for kOk.
  std::string reason{};
};

// `marker` is nullopt when the table is not in `region`'s catalog at all.
MarkerJudgement JudgeMarker(const Ownership& row, const std::optional<MarkerProperties>& marker,
                            const std::string& region);

// Whether a verdict fails the check.
bool MarkerVerdictFails(MarkerVerdict v, bool allow_missing);

}  // namespace icewarden
