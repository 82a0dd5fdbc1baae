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
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "examples/lab/catalog_api.h"
#include "examples/lab/lab_status.h"
#include "examples/lab/region_faults.h"

namespace icewarden::lab {

struct RegionAuth {
  std::string static_token;  // accepted as "Authorization: Bearer <token>"
  std::string client_id;     // OAuth2 client credentials for POST /v1/oauth/tokens
  std::string client_secret;
  bool required() const { return !static_token.empty() || !client_id.empty(); }
};

// Returns once `server`, whose listen_after_bind() runs on another thread, accepts connections.
void WaitUntilListening(const httplib::Server& server);

class RegionServer {
 public:
  // `port` 0 picks an ephemeral port on the first Start; restarts reuse it.
  // `threads` requests are served at once (commit latency holds a thread while it waits).
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

 private:
  void Register(httplib::Server& server);
  // Hang, auth, injected errors and commit latency; true when the handler should run.
  bool Admit(const httplib::Request& req, httplib::Response& res, bool is_commit);
  void IssueToken(const httplib::Request& req, httplib::Response& res);
  // Sleeps up to `ms`; false (at once) when the listener is being stopped.
  bool Pause(int ms);

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
  std::condition_variable stopping_cv_;
  bool stopping_ = false;
};

}  // namespace icewarden::lab
