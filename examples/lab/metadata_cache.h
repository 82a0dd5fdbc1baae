// MetadataCache: the JSON text (and, once something needed it, the parsed tree) of a region's most
// recently used metadata files, by metadata-location. A file at a location never changes (a commit
// writes a new one), so an entry is valid for as long as it is kept; only the table's pointer must
// be read from the store each time. Keeping them spares a load the parse and serialization of the
// whole metadata, and a commit the parse of the metadata it starts from: the lab's CPU per request
// was most of what a benchmark of icewarden against it measured.
//
// Thread-safety: every method may be called from any thread; entries are shared and immutable.
#pragma once

#include <cstddef>
#include <list>
#include <memory>
#include <mutex>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <unordered_map>

namespace icewarden::lab {

struct CachedMetadata {
  std::string location;
  // Null until a commit or a snapshots=refs load needed the tree: a load answers with the text
  // alone, and a commit that changes only properties writes its new file as text.
  std::shared_ptr<const nlohmann::json> metadata;
  std::shared_ptr<const std::string> text;       // metadata serialized (snapshots=all)
  std::shared_ptr<const std::string> refs_text;  // only referenced snapshots; null until asked
};

class MetadataCache {
 public:
  explicit MetadataCache(std::size_t capacity) : capacity_(capacity) {}

  std::optional<CachedMetadata> Find(const std::string& location);
  // Inserts or replaces the entry for `entry.location`, evicting the least recently used.
  void Put(CachedMetadata entry);
  // Forgets the entry for `location`, if any (a superseded file no load will ask for again).
  void Erase(const std::string& location);

 private:
  std::mutex mutex_;
  std::size_t capacity_;
  std::list<CachedMetadata> entries_;  // most recently used first
  std::unordered_map<std::string, std::list<CachedMetadata>::iterator> index_;
};

}  // namespace icewarden::lab
