// EtcdWatch: one watch stream over a key prefix (etcd v3 JSON gateway, POST /v3/watch), so a
// reader of the store (the gateway) learns of a change when etcd applies it instead of at its
// next poll. It runs on a thread and a connection of its own, with the client's TLS and auth.
//
// What it keeps is a revision and whether it can vouch for it ("healthy"):
//  - the revision is the last one up to which every change under the prefix has been seen; it
//    moves on each event, and after a compaction removed events the watch had not seen yet
//    (etcd cancels the watch with compact_revision), it moves to the store's current revision
//    so that the reader reads everything again;
//  - a dropped stream is opened again from revision + 1 (on the next member), so nothing is
//    missed and nothing is reported twice;
//  - a watch on a member cut off from its cluster goes silent rather than failing, so after
//    `quiet` with nothing on the stream the watch asks its member a linearizable read (a range
//    of one key, which needs the raft quorum). Until that answers, or while the stream is down,
//    the watch is not healthy: the reader must treat the store as unreadable.
//
// What the real server does (etcd 3.4.23, its grpc-gateway): it answers nothing until the
// request body has ended, so the create request goes with a Content-Length; each response is
// one JSON object on its own line of a chunked body ({"result": {...}}); a start revision that
// was compacted gets "created" and then "canceled" with "compact_revision", and the HTTP
// response does not end after the cancel (the connection is closed by us).
// Thread-safety: every method may be called from any thread.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "state/etcd_client.h"

namespace icewarden {

struct EtcdWatchOptions {
  EtcdClientOptions client;  // endpoints (tried in turn), TLS and auth
  std::string prefix;        // every key starting with it
  // Silence on the stream after which the member is asked a linearizable read.
  std::chrono::milliseconds quiet{500};
  // How long that read (and opening a stream) may take before the store counts as unreadable.
  std::chrono::milliseconds check_timeout{1000};
  // Where the first stream starts (the changes after it are reported); 0: the store's revision
  // when the watch starts. For a reader that saved a revision (and for the tests of a
  // compacted start).
  std::int64_t start_after = 0;
};

class EtcdWatch {
 public:
  explicit EtcdWatch(EtcdWatchOptions options);
  ~EtcdWatch();  // stops
  EtcdWatch(const EtcdWatch&) = delete;
  EtcdWatch& operator=(const EtcdWatch&) = delete;

  // Starts the thread (once; later calls do nothing).
  void Start();
  void Stop();

  struct State {
    bool healthy = false;       // the stream is up and its member answered a linearizable read
    std::int64_t revision = 0;  // every change under the prefix up to here has been seen
    std::string why;            // when not healthy: why not
    std::int64_t resyncs = 0;   // compactions that made the watch start over
  };
  State Current() const;
  // Waits until the watch is healthy at a revision other than `since` (returns true), or until
  // `max_wait` (returns false); also returns at once, false, when it is not healthy and
  // `since_healthy` says the caller believed it was.
  bool WaitForChange(std::int64_t since, bool since_healthy, std::chrono::milliseconds max_wait,
                     State* now);

 private:
  void Run();
  void SetHealthy(bool healthy, const std::string& why);
  void SetRevision(std::int64_t revision, bool resync);
  bool Stopping() const;

  struct Stream;
  const EtcdWatchOptions options_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  State state_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace icewarden
