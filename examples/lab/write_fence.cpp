#include "examples/lab/write_fence.h"

#include <string>

namespace icewarden::lab {

bool ChangesOnlyProperties(const nlohmann::json& request) {
  if (!request.is_object() || !request.contains("updates") || !request["updates"].is_array()) {
    return false;
  }
  for (const auto& update : request["updates"]) {
    if (!update.is_object()) return false;
    const std::string action = update.value("action", "");
    if (action != "set-properties" && action != "remove-properties") return false;
  }
  return true;
}

WriteFence::Pass::Pass(WriteFence& fence) : fence_(fence) {
  std::lock_guard lock(fence_.mutex_);
  if (fence_.paused_) return;
  ++fence_.passes_;
  admitted_ = true;
}

WriteFence::Pass::~Pass() {
  if (!admitted_) return;
  {
    std::lock_guard lock(fence_.mutex_);
    --fence_.passes_;
  }
  fence_.released_.notify_all();
}

void WriteFence::SetPaused(bool paused) {
  std::unique_lock lock(mutex_);
  paused_ = paused;
  // New passes are refused from here on, so the wait ends however busy the region is.
  if (paused) released_.wait(lock, [this] { return passes_ == 0; });
}

bool WriteFence::paused() const {
  std::lock_guard lock(mutex_);
  return paused_;
}

}  // namespace icewarden::lab
