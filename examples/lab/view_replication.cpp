// Replicator's views: a view has no history in the lab (each region keeps its current metadata
// file only), so a replica's copy is replaced by the owner's whenever they differ and the
// owner's is `lag_ms` old. A view only a replica has stays unless the owner dropped it.
#include <map>

#include "examples/lab/replicator.h"

namespace icewarden::lab {

void Replicator::ReplicateViews(int64_t visible_ms) {
  std::map<TableIdent, std::map<std::string, ViewHead>> views;
  for (auto* region : regions_) {
    if (!region->up()) continue;
    for (auto& head : region->store->ViewHeads()) views[head.view][region->name] = head;
  }
  for (const auto& [view, heads] : views) {
    LabRegion* owner = Find(ownership_->Resolve(view, {}).owner);
    if (owner == nullptr || !owner->up()) continue;
    auto owner_head = heads.find(owner->name);
    if (owner_head == heads.end()) {
      auto dropped = owner->store->DroppedViewOf(view);
      if (!dropped || dropped->dropped_ms > visible_ms) continue;
      for (const auto& [region, head] : heads) {
        // A replica's view written after the drop is its own, not a stale copy.
        if (head.committed_ms > dropped->dropped_ms) continue;
        if (LabRegion* replica = Find(region)) {
          replica->store->DropView(view, head.location, dropped->dropped_ms);
        }
      }
      continue;
    }
    if (owner_head->second.committed_ms > visible_ms) continue;
    std::optional<TableText> text;
    for (auto* replica : regions_) {
      if (replica == owner || !replica->up()) continue;
      auto head = heads.find(replica->name);
      std::string location = head == heads.end() ? "" : head->second.location;
      if (location == owner_head->second.location) continue;
      if (!text) text = owner->store->LoadView(view);
      if (!text || text->location != owner_head->second.location) break;  // moved: next pass
      replica->store->CopyView(view, location, owner_head->second, text->text);
    }
  }
}

}  // namespace icewarden::lab
