// CrashPointStore: a StateStore that forwards to another and calls a hook around every
// failover and step-journal write (UpdateFailover, PutStep), numbering them 1, 2, ... .
// Crash tests use the hook to kill the process exactly at a write boundary: just before
// write N reaches the store, or just after it has.
// Thread-safety: as the wrapped store; the hook may run on any thread.
#pragma once

#include <atomic>
#include <functional>

#include "tests/fakes/forwarding_store.h"

namespace icewarden::testing {

class CrashPointStore final : public ForwardingStore {
 public:
  // before: true just before write `n`, false just after it returned.
  using Hook = std::function<void(int n, bool before)>;
  CrashPointStore(StateStore& inner, Hook hook) : ForwardingStore(inner), hook_(std::move(hook)) {}

  int writes() const { return writes_.load(); }

  Status UpdateFailover(const Failover& f, std::int64_t expected_version,
                        const AuditEvent& why) override {
    return Around([&] { return inner_.UpdateFailover(f, expected_version, why); });
  }
  Status PutStep(const StepRecord& step) override {
    return Around([&] { return inner_.PutStep(step); });
  }

 private:
  template <typename F>
  Status Around(F&& write) {
    const int n = ++writes_;
    hook_(n, true);
    Status s = write();
    hook_(n, false);
    return s;
  }

  Hook hook_;
  std::atomic<int> writes_{0};
};

}  // namespace icewarden::testing
