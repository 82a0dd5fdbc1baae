// MetadataText: a metadata file's JSON text as the lab writes it (nlohmann's compact dump(): no
// whitespace, members in key order), read member by member without parsing the whole of it. A
// property-only commit (the ownership claim a failover writes to every table) consults a few
// small members and rewrites three; parsing and re-serializing the schemas and snapshots around
// them was most of the lab's CPU per table moved.
//
// Pure functions over text; safe to call from any thread.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace icewarden::lab {

// One top-level member: its key and the exact text of its value.
struct TextMember {
  std::string key;
  std::string_view value;
};

// The top-level members of `text`, in order; nullopt when `text` is not a compact JSON object
// whose keys have no escapes (the caller then parses it whole).
std::optional<std::vector<TextMember>> TopLevelMembers(std::string_view text);

// The object of `members`, each parsed, leaving out those whose value is long and that a
// property-only commit never consults (schemas, snapshots and their log, specs, sort orders).
nlohmann::json ParseSmallMembers(const std::vector<TextMember>& members);

// The text of `members` with those of `changes` put in (added or replaced): exactly what dump()
// gives for the object with those changes.
std::string SpliceMembers(const std::vector<TextMember>& members, const nlohmann::json& changes);

// AllSnapshotsReferenced (table_metadata.h) from the members, parsing only refs and snapshots.
bool AllSnapshotsReferencedIn(const std::vector<TextMember>& members);

}  // namespace icewarden::lab
