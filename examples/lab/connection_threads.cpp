#include "examples/lab/connection_threads.h"

namespace icewarden::lab {

ConnectionThreads::~ConnectionThreads() { shutdown(); }

void ConnectionThreads::enqueue(std::function<void()> fn) {
  std::lock_guard lock(mutex_);
  JoinFinishedLocked();
  auto worker = workers_.emplace(workers_.end());
  // The new thread marks itself done under the mutex, which this scope holds until `thread` is
  // assigned, so it never touches a half-built Worker.
  worker->thread = std::thread([this, worker, fn = std::move(fn)] {
    fn();
    std::lock_guard done(mutex_);
    worker->done = true;
  });
}

void ConnectionThreads::JoinFinishedLocked() {
  for (auto it = workers_.begin(); it != workers_.end();) {
    if (!it->done) {
      ++it;
      continue;
    }
    it->thread.join();  // returns at once: the thread is past its last statement
    it = workers_.erase(it);
  }
}

void ConnectionThreads::shutdown() {
  std::list<Worker> workers;
  {
    std::lock_guard lock(mutex_);
    workers.splice(workers.end(), workers_);
  }
  // Joined outside the mutex: each thread takes it to mark itself done.
  for (auto& worker : workers) {
    if (worker.thread.joinable()) worker.thread.join();
  }
}

}  // namespace icewarden::lab
