// IdlePool: the keep-alive pool of both HTTP paths (BeastTransport's TLS connections,
// PlainHttpClient's plain ones), so they keep and drop connections by the same rules
// (health/beast_transport.h): per scheme://host:port, the most recently used first, each
// until its own expiry, at most PoolOptions::max_idle_per_host per key.
//
// `Conn` is movable, tests false when empty (a pointer, or a type with explicit bool) and
// closes its connection when destroyed: whatever the pool drops is closed.
// Internal to health/. Thread-safety: none; the transport's thread.
#pragma once

#include <algorithm>
#include <chrono>
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <utility>

#include "health/beast_transport.h"

namespace icewarden {

template <class Conn>
class IdlePool {
 public:
  explicit IdlePool(PoolOptions options) : options_(options) {}

  // False when PoolOptions turned reuse off (every request says "Connection: close").
  bool enabled() const { return options_.max_idle_per_host > 0; }

  // The most recently used idle connection for `key` that has not expired and that
  // `alive(conn)` accepts, or an empty Conn. The others met on the way are closed.
  template <class Alive>
  Conn Take(const std::string& key, Alive&& alive) {
    auto it = idle_.find(key);
    if (it == idle_.end()) return Conn{};
    auto& conns = it->second;
    const auto now = std::chrono::steady_clock::now();
    Conn found{};
    while (!conns.empty() && !found) {
      Idle c = std::move(conns.back());
      conns.pop_back();
      if (c.expires > now && alive(c.conn)) found = std::move(c.conn);
    }
    if (conns.empty()) idle_.erase(it);
    return found;
  }

  // Keeps `conn` for a later request to `key`: for PoolOptions::idle_timeout, or 3/4 of the
  // server's "Keep-Alive: timeout=N" when that is shorter (the server may close it at N).
  // A full pool, or a server timeout of 0, closes it instead.
  void Put(const std::string& key, Conn conn, std::optional<std::chrono::seconds> server_timeout) {
    auto idle_for = options_.idle_timeout;
    if (server_timeout) {
      idle_for = std::min(
          idle_for, std::chrono::duration_cast<std::chrono::milliseconds>(*server_timeout) * 3 / 4);
    }
    auto& conns = idle_[key];
    const auto now = std::chrono::steady_clock::now();
    while (!conns.empty() && conns.front().expires <= now) conns.pop_front();
    if (conns.size() >= options_.max_idle_per_host || idle_for <= idle_for.zero()) {
      if (conns.empty()) idle_.erase(key);
      return;  // `conn` closes
    }
    conns.push_back({std::move(conn), now + idle_for});
  }

 private:
  struct Idle {
    Conn conn;
    std::chrono::steady_clock::time_point expires;
  };
  PoolOptions options_;
  std::map<std::string, std::deque<Idle>> idle_;
};

}  // namespace icewarden
