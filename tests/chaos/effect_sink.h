// EffectSink: the endpoint the chaos runbook's effect steps call (http.request, fence.http), so
// every effect a replica has on the outside world is recorded where it lands, with the
// Idempotency-Key the executor gave it, the sender's incarnation (a header templated from the
// replica's environment) and who held the leader key in etcd at that moment. That is what "no
// step twice" and "no effect from a deposed leader" are checked against (invariants.h).
// Thread-safety: the server thread records under a mutex; Effects() from any thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace httplib {
class Server;
}

namespace icewarden::chaos {

struct Effect {
  std::string path;             // "/effects/notify"
  std::string idempotency_key;  // "<failover id>/<step id>"
  std::string sender;           // "replica-a#3": the incarnation that sent it
  std::chrono::steady_clock::time_point landed_at;
  // The leader key when it landed, read right after: its term (create revision; 0 when no
  // key existed) and the replica its value names.
  std::int64_t term = 0;
  std::string holder;
};

class EffectSink {
 public:
  // `etcd_endpoints`: where to read the leader key `leader_key` from.
  EffectSink(std::vector<std::string> etcd_endpoints, std::string leader_key);
  ~EffectSink();
  EffectSink(const EffectSink&) = delete;
  EffectSink& operator=(const EffectSink&) = delete;

  std::string Url(const std::string& path) const;  // "http://127.0.0.1:PORT" + path
  std::vector<Effect> Effects() const;

 private:
  std::vector<std::string> endpoints_;
  std::string leader_key_;
  std::unique_ptr<httplib::Server> server_;
  std::thread thread_;
  int port_ = 0;
  mutable std::mutex mu_;
  std::vector<Effect> effects_;
};

}  // namespace icewarden::chaos
