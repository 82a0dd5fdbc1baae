// The lab's WriteFence: which commits it holds back, and that pausing is a barrier (once
// SetPaused(true) returns, no data write that had already passed is still applying), which a
// switchover relies on when it reads the old owner's last commit after pausing it.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <optional>
#include <thread>

#include "examples/lab/write_fence.h"

namespace icewarden::lab {
namespace {

using nlohmann::json;

TEST(LabWriteFence, OnlyPropertyUpdatesPassAPausedFence) {
  auto request = [](json updates) {
    return json{{"requirements", json::array()}, {"updates", std::move(updates)}};
  };
  json set = {{"action", "set-properties"}, {"updates", {{"icewarden.owner", "eu-central-1"}}}};
  json remove = {{"action", "remove-properties"}, {"removals", {"icewarden.owner"}}};
  EXPECT_TRUE(ChangesOnlyProperties(request(json::array({set}))));
  EXPECT_TRUE(ChangesOnlyProperties(request(json::array({set, remove}))));
  EXPECT_TRUE(ChangesOnlyProperties(request(json::array())));
  for (const char* action : {"add-snapshot", "set-snapshot-ref", "remove-snapshots",
                             "remove-snapshot-ref", "teleport-table"}) {
    EXPECT_FALSE(ChangesOnlyProperties(request(json::array({set, {{"action", action}}}))))
        << action;
  }
  EXPECT_FALSE(ChangesOnlyProperties(request(json::array({"set-properties"}))));
  EXPECT_FALSE(ChangesOnlyProperties(json{{"requirements", json::array()}}));
  EXPECT_FALSE(ChangesOnlyProperties(json::array()));
}

TEST(LabWriteFence, PausedFenceAdmitsNoneAndResumedAdmitsAgain) {
  WriteFence fence;
  EXPECT_TRUE(WriteFence::Pass(fence).admitted());
  fence.SetPaused(true);
  EXPECT_TRUE(fence.paused());
  EXPECT_FALSE(WriteFence::Pass(fence).admitted());
  fence.SetPaused(false);
  EXPECT_FALSE(fence.paused());
  EXPECT_TRUE(WriteFence::Pass(fence).admitted());
}

TEST(LabWriteFence, PausingWaitsForTheWritesInside) {
  WriteFence fence;
  std::optional<WriteFence::Pass> inside;
  inside.emplace(fence);
  ASSERT_TRUE(inside->admitted());
  std::atomic<bool> paused{false};
  std::thread pauser([&] {
    fence.SetPaused(true);
    paused = true;
  });
  // The pauser has closed the fence but must still be waiting for `inside`.
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (!fence.paused() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ASSERT_TRUE(fence.paused());
  EXPECT_FALSE(WriteFence::Pass(fence).admitted());
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_FALSE(paused);
  inside.reset();
  pauser.join();
  EXPECT_TRUE(paused);
}

}  // namespace
}  // namespace icewarden::lab
