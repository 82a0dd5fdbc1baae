// ConnectionThreads: an httplib task queue that gives every accepted connection its own
// thread, for as long as the connection lives.
//
// Why: httplib serves a keep-alive connection on one pool thread until the connection closes,
// idle or not. With a fixed pool, a client that keeps more connections open than the pool has
// threads (ours pools up to 64 idle connections per host, on top of the ones in use) leaves new
// connections queued behind idle ones until a keep-alive timeout frees a thread: requests
// stalled for a second, or until their deadline. A real catalog's event loop does not pin a
// worker to an idle connection, so the lab should not either; how many *requests* a region
// serves at once is limited separately (RegionServer's request slots).
//
// Thread-safety: enqueue is called by httplib's accept thread, shutdown once after it stopped.
#pragma once

#include <httplib.h>

#include <functional>
#include <list>
#include <mutex>
#include <thread>

namespace icewarden::lab {

class ConnectionThreads : public httplib::TaskQueue {
 public:
  ConnectionThreads() = default;
  ~ConnectionThreads() override;
  ConnectionThreads(const ConnectionThreads&) = delete;
  ConnectionThreads& operator=(const ConnectionThreads&) = delete;

  void enqueue(std::function<void()> fn) override;
  // Waits for every connection thread to end (httplib closes them once the server stopped).
  void shutdown() override;

 private:
  struct Worker {
    std::thread thread;
    bool done = false;
  };
  void JoinFinishedLocked();

  std::mutex mutex_;
  std::list<Worker> workers_;
};

}  // namespace icewarden::lab
