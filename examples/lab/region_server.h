// RegionServer: one region's catalog listener. Serves CatalogApi's routes on its own
// cpp-httplib server thread, behind the region's bearer-token check, its OAuth2 token endpoint
// and its injected faults. Stop() closes the listener (clients get "connection refused") and
// Start() listens again on the same port.
//
// Thread-safety: Start, Stop and the fault setters may be called from any thread; Start and
// Stop are serialized with each other.
#pragma once

#include <httplib.h>

#include <atomic>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>

#include "examples/lab/catalog_api.h"
#include "examples/lab/lab_sockets.h"
#include "examples/lab/lab_status.h"
#include "examples/lab/region_faults.h"

namespace icewarden::lab {

struct RegionAuth {
  std::string static_token;  // accepted as "Authorization: Bearer <token>"
  std::string client_id;     // OAuth2 client credentials for POST /v1/oauth/tokens
  std::string client_secret;
  bool required() const { return !static_token.empty() || !client_id.empty(); }
};

// Requests a region is serving now (waiting out commit latency included), and the most commits
// it ever served at once: how a test sees that a client kept to its concurrency bound.
struct RequestCounts {
  int in_progress = 0;
  int commits_in_progress = 0;
  int peak_commits_in_progress = 0;  // since the lab started
  int64_t commits_total = 0;         // commit requests admitted since the lab started
  int64_t requests_total = 0;        // catalog requests of any kind admitted since then
  int64_t not_modified_total = 0;    // of them answered 304 (If-None-Match)
  nlohmann::json ToJson() const;
};

class RegionServer {
 public:
  // `port` 0 picks an ephemeral port on the first Start; restarts reuse it.
  // `threads` requests are served at once (commit latency holds a slot while it waits); others
  // wait for a slot. Every connection has its own thread (see ConnectionThreads), so idle
  // keep-alive connections never hold a slot.
  RegionServer(std::string name, std::string host, int port, CatalogApi* api, RegionAuth auth,
               NowMs now_ms, int threads = 16);
  ~RegionServer();

  // Binds and serves; an error names the address when the port cannot be bound.
  LabStatus Start();
  // Closes the listener and waits for in-flight requests (hangs are cut short).
  void Stop();

  const std::string& name() const { return name_; }
  bool running() const { return running_; }
  int port() const { return port_; }
  std::string url() const { return "http://" + host_ + ":" + std::to_string(port_); }

  void SetFaults(const RegionFaults& faults);
  RegionFaults faults() const;
  RequestCounts requests() const;

 private:
  void Register(httplib::Server& server);
  // Hang, auth, injected errors and commit latency; true when the handler should run.
  // Auth, injected faults and commit latency before a handler; false with `res` set when the
  // request ends here. *fail_after_commit: the status to answer after applying the commit.
  bool Admit(const httplib::Request& req, httplib::Response& res, bool is_commit,
             int* fail_after_commit);
  void IssueToken(const httplib::Request& req, httplib::Response& res);
  // Sleeps up to `ms`; false (at once) when the listener is being stopped.
  bool Pause(int ms);

  // A request being handled, by its client's port, for a handler's scope. Requests that come
  // once the region is stopping are dropped: their connection is shut down, unanswered.
  class ActiveRequest {
   public:
    ActiveRequest(RegionServer& server, int peer_port);
    ~ActiveRequest();
    ActiveRequest(const ActiveRequest&) = delete;
    ActiveRequest& operator=(const ActiveRequest&) = delete;
    bool dropped() const { return dropped_; }

   private:
    RegionServer& server_;
    const int peer_port_;
    bool dropped_ = false;
  };

  // One of the `threads_` requests served at once, for a handler's scope; not held when the
  // server began stopping while it waited.
  class RequestSlot {
   public:
    RequestSlot(RegionServer& server, bool is_commit);
    ~RequestSlot();
    RequestSlot(const RequestSlot&) = delete;
    RequestSlot& operator=(const RequestSlot&) = delete;
    bool held() const { return held_; }

   private:
    RegionServer& server_;
    const bool is_commit_;
    bool held_ = false;
  };

  const std::string name_;
  const std::string host_;
  int port_;
  CatalogApi* api_;
  const RegionAuth auth_;
  NowMs now_ms_;
  const int threads_;
  TokenIssuer tokens_;

  std::mutex lifecycle_mutex_;
  std::unique_ptr<httplib::Server> server_;
  std::thread thread_;
  std::atomic<bool> running_{false};

  mutable std::mutex faults_mutex_;
  RegionFaults faults_;
  // Three mutexes, not one: a region serving a hundred requests at once, most of them waiting
  // out an injected commit latency, spent its time handing one mutex between threads.
  std::atomic<bool> stopping_{false};  // written under stop_mutex_ and slots_mutex_
  std::mutex stop_mutex_;
  std::condition_variable stopping_cv_;  // with stop_mutex_
  mutable std::mutex slots_mutex_;
  std::condition_variable slots_cv_;  // with slots_mutex_
  RequestCounts requests_;            // with slots_mutex_
  std::multiset<int> active_peers_;   // client ports of requests in progress; slots_mutex_
};

}  // namespace icewarden::lab
