// FakeProbe: a Probe whose answers the test gives. Each Check() is recorded as a pending
// call; the test answers it with Answer() / Pass() / Fail(), or scripts answers ahead with
// Script() that are delivered after `delay` on the FakeTimers (or never, with Silent()).
// Thread-safety: test thread only.
#pragma once

#include <chrono>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "health/probe.h"
#include "tests/fakes/fake_timers.h"

namespace icewarden::testing {

// How the next checks answer. Shared with the test, so a probe handed to a scheduler can
// still be steered.
struct FakeProbeScript {
  struct Step {
    bool ok = true;
    std::string detail;
    std::chrono::milliseconds delay{0};
    bool silent = false;  // never calls back
  };
  std::deque<Step> steps;  // consumed one per check; when empty, `fallback` answers
  Step fallback{};
  int checks = 0;
  std::vector<std::chrono::milliseconds> deadlines;
  // Keeps the callbacks of silent checks, so a test can answer late.
  std::vector<std::function<void(ProbeResult)>> silenced;

  void Pass(std::chrono::milliseconds delay = {}) { steps.push_back({true, "", delay, false}); }
  void Fail(std::string detail, std::chrono::milliseconds delay = {}) {
    steps.push_back({false, std::move(detail), delay, false});
  }
  void Silent() { steps.push_back({false, "", {}, true}); }
};

class FakeProbe final : public Probe {
 public:
  FakeProbe(std::string kind, FakeTimers& timers, std::shared_ptr<FakeProbeScript> script)
      : kind_(std::move(kind)), timers_(timers), script_(std::move(script)) {}

  const std::string& kind() const override { return kind_; }
  void Check(std::chrono::milliseconds deadline, std::function<void(ProbeResult)> done) override;

 private:
  std::string kind_;
  FakeTimers& timers_;
  std::shared_ptr<FakeProbeScript> script_;
};

}  // namespace icewarden::testing
