#include "examples/lab/metadata_cache.h"

namespace icewarden::lab {

std::optional<CachedMetadata> MetadataCache::Find(const std::string& location) {
  std::lock_guard lock(mutex_);
  auto it = index_.find(location);
  if (it == index_.end()) return std::nullopt;
  entries_.splice(entries_.begin(), entries_, it->second);
  return *it->second;
}

void MetadataCache::Put(CachedMetadata entry) {
  std::lock_guard lock(mutex_);
  if (capacity_ == 0) return;
  if (auto it = index_.find(entry.location); it != index_.end()) {
    *it->second = std::move(entry);
    entries_.splice(entries_.begin(), entries_, it->second);
    return;
  }
  entries_.push_front(std::move(entry));
  index_[entries_.front().location] = entries_.begin();
  if (entries_.size() > capacity_) {
    index_.erase(entries_.back().location);
    entries_.pop_back();
  }
}

void MetadataCache::Erase(const std::string& location) {
  CachedMetadata gone;  // destroyed (a whole tree, maybe) once the mutex is released
  std::lock_guard lock(mutex_);
  auto it = index_.find(location);
  if (it == index_.end()) return;
  gone = std::move(*it->second);
  entries_.erase(it->second);
  index_.erase(it);
}

}  // namespace icewarden::lab
