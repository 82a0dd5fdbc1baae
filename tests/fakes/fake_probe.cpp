#include "tests/fakes/fake_probe.h"

#include <utility>

namespace icewarden::testing {

void FakeProbe::Check(std::chrono::milliseconds deadline, std::function<void(ProbeResult)> done) {
  auto& s = *script_;
  s.checks += 1;
  s.deadlines.push_back(deadline);
  FakeProbeScript::Step step = s.fallback;
  if (!s.steps.empty()) {
    step = std::move(s.steps.front());
    s.steps.pop_front();
  }
  if (step.silent) {
    s.silenced.push_back(std::move(done));
    return;
  }
  ProbeResult r;
  r.ok = step.ok;
  r.kind = kind_;
  r.detail = step.detail;
  r.latency = step.delay;
  // Always through a timer (even with no delay): a real probe never answers inside Check.
  timers_.RunAfter(step.delay, [done = std::move(done), r = std::move(r)] { done(r); });
}

}  // namespace icewarden::testing
