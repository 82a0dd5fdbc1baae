#include "actions/ownership_markers.h"

#include <algorithm>

#include <charconv>

namespace icewarden {

namespace {

// Property values are anybody's text: what a reason quotes of them is bounded.
constexpr std::size_t kMaxQuoted = 40;

std::string Quote(const std::string& value) {
  // Appended piece by piece: GCC 12 at -O3 warns (-Wrestrict, a false positive) on
  // "literal" + std::string&&.
  std::string out = "\"";
  out.append(value, 0, std::min(value.size(), kMaxQuoted));
  if (value.size() <= kMaxQuoted) return out + "\"";
  out.append("...\" (").append(std::to_string(value.size())).append(" bytes)");
  return out;
}

std::string StoreSide(const Ownership& row) {
  return "the store's epoch " + std::to_string(row.epoch) + " (owner " + row.owner + ")";
}

}  // namespace

const char* MarkerVerdictName(MarkerVerdict v) {
  switch (v) {
    case MarkerVerdict::kOk:
      return "ok";
    case MarkerVerdict::kUnmarked:
      return "unmarked";
    case MarkerVerdict::kMissing:
      return "missing";
    case MarkerVerdict::kStale:
      return "stale";
    case MarkerVerdict::kAhead:
      return "ahead";
    case MarkerVerdict::kConflicting:
      return "conflicting";
    case MarkerVerdict::kInvalid:
      return "invalid";
  }
  return "invalid";
}

MarkerProperties ReadMarkerProperties(const std::map<std::string, std::string>& properties) {
  MarkerProperties m;
  if (auto it = properties.find(kOwnerMarkerProperty); it != properties.end()) m.owner = it->second;
  if (auto it = properties.find(kEpochMarkerProperty); it != properties.end()) m.epoch = it->second;
  return m;
}

std::optional<Epoch> ParseMarkerEpoch(const std::string& text) {
  Epoch e = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), e);
  if (text.empty() || ec != std::errc() || ptr != text.data() + text.size() || e < 0)
    return std::nullopt;
  return e;
}

MarkerJudgement JudgeMarker(const Ownership& row, const std::optional<MarkerProperties>& marker,
                            const std::string& region) {
  MarkerJudgement j;
  if (!marker || (!marker->owner && !marker->epoch)) {
    if (row.owner != region || row.failover_id.empty()) {
      j.verdict = MarkerVerdict::kUnmarked;
      return j;
    }
    j.verdict = MarkerVerdict::kMissing;
    j.reason = std::string(marker ? "no marker" : "not in the catalog, so no marker") + " in " +
               region + ", which owns it at epoch " + std::to_string(row.epoch) +
               " since failover " + row.failover_id + ": its transfer should have written one";
    return j;
  }
  j.verdict = MarkerVerdict::kInvalid;
  if (!marker->epoch) {
    j.reason =
        "unparseable marker: icewarden.owner " + Quote(*marker->owner) + " without icewarden.epoch";
    return j;
  }
  if (!marker->owner) {
    j.reason =
        "unparseable marker: icewarden.epoch " + Quote(*marker->epoch) + " without icewarden.owner";
    return j;
  }
  j.marker_epoch = ParseMarkerEpoch(*marker->epoch);
  if (!j.marker_epoch) {
    j.reason =
        "unparseable marker: icewarden.epoch " + Quote(*marker->epoch) + " is not a whole number";
    return j;
  }
  const Epoch e = *j.marker_epoch;
  const std::string seen =
      "marker epoch " + std::to_string(e) + " (owner " + Quote(*marker->owner) + ")";
  if (e < row.epoch) {
    j.verdict = MarkerVerdict::kStale;
    j.reason =
        seen + " is lower than " + StoreSide(row) + ": a stale leader's or stale run's residue";
  } else if (e > row.epoch) {
    j.verdict = MarkerVerdict::kAhead;
    j.reason = seen + " is higher than " + StoreSide(row) +
               ": a marker from a future epoch; the store was rolled back or another "
               "orchestrator writes this catalog";
  } else if (*marker->owner != row.owner) {
    j.verdict = MarkerVerdict::kConflicting;
    j.reason = "marker at the store's epoch " + std::to_string(e) + " names " +
               Quote(*marker->owner) + ", but the store's owner is " + row.owner;
  } else {
    j.verdict = MarkerVerdict::kOk;
  }
  return j;
}

bool MarkerVerdictFails(MarkerVerdict v, bool allow_missing) {
  switch (v) {
    case MarkerVerdict::kOk:
    case MarkerVerdict::kUnmarked:
      return false;
    case MarkerVerdict::kMissing:
      return !allow_missing;
    case MarkerVerdict::kStale:
    case MarkerVerdict::kAhead:
    case MarkerVerdict::kConflicting:
    case MarkerVerdict::kInvalid:
      return true;
  }
  return true;
}

}  // namespace icewarden
