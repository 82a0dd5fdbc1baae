#include "examples/lab/region_server.h"

#include "examples/lab/connection_threads.h"

#include <algorithm>
#include <chrono>
#include <functional>
#include <random>
#include <set>

namespace icewarden::lab {
namespace {

bool Roll(double rate) {
  thread_local std::mt19937_64 engine(std::random_device{}());
  return rate > 0.0 && std::uniform_real_distribution<double>(0.0, 1.0)(engine) < rate;
}

void SetOAuthError(httplib::Response& res, int status, const std::string& error,
                   const std::string& description) {
  res.status = status;
  res.set_content(json{{"error", error}, {"error_description", description}}.dump(),
                  "application/json");
}

std::string BearerToken(const httplib::Request& req) {
  std::string header = req.get_header_value("Authorization");
  const std::string prefix = "Bearer ";
  if (header.size() <= prefix.size() || header.compare(0, prefix.size(), prefix) != 0) return "";
  return header.substr(prefix.size());
}

}  // namespace

RegionServer::RegionServer(std::string name, std::string host, int port, CatalogApi* api,
                           RegionAuth auth, NowMs now_ms, int threads)
    : name_(std::move(name)),
      host_(std::move(host)),
      port_(port),
      api_(api),
      auth_(std::move(auth)),
      now_ms_(std::move(now_ms)),
      threads_(threads < 1 ? 1 : threads) {}

RegionServer::~RegionServer() { Stop(); }

LabStatus RegionServer::Start() {
  std::lock_guard lifecycle(lifecycle_mutex_);
  if (running_) return LabStatus::Ok();
  auto server = std::make_unique<httplib::Server>();
  server->set_keep_alive_timeout(1);
  // httplib closes a connection after 5 requests by default; a catalog client that pools its
  // connections (ours does) would then pay a new connection every fifth request. Connections
  // have their own threads (ConnectionThreads), so a long-lived one starves nobody.
  server->set_keep_alive_max_count(1000);
  // httplib 0.11 accepts bodies of any size by default; a catalog request is a few KiB.
  server->set_payload_max_length(8 << 20);
  // httplib writes a response's header and body separately; with Nagle on, a keep-alive
  // client waits for its delayed ACK (40 ms on Linux) before the body comes.
  server->set_tcp_nodelay(true);
  server->new_task_queue = [] { return new ConnectionThreads(); };
  Register(*server);
  if (port_ == 0) {
    int port = server->bind_to_any_port(host_);
    if (port <= 0) return LabStatus::Error("region " + name_ + ": cannot bind " + host_ + ":0");
    port_ = port;
  } else if (!server->bind_to_port(host_, port_)) {
    return LabStatus::Error("region " + name_ + ": cannot bind " + host_ + ":" +
                            std::to_string(port_));
  }
  if (!WidenListenBacklog(port_)) {
    return LabStatus::Error("region " + name_ + ": cannot raise the listen backlog of port " +
                            std::to_string(port_) + " (is /proc mounted?)");
  }
  {
    std::scoped_lock lock(stop_mutex_, slots_mutex_);
    stopping_ = false;
  }
  server_ = std::move(server);
  thread_ = std::thread([server = server_.get()] { server->listen_after_bind(); });
  WaitUntilListening(*server_);
  running_ = true;
  return LabStatus::Ok();
}

void RegionServer::Stop() {
  std::lock_guard lifecycle(lifecycle_mutex_);
  if (!server_) return;
  {
    // Under both mutexes, so that neither a Pause nor a slot wait misses the wake-up.
    std::scoped_lock lock(stop_mutex_, slots_mutex_);
    stopping_ = true;
  }
  stopping_cv_.notify_all();
  slots_cv_.notify_all();
  running_ = false;
  server_->stop();
  // A stopped region is a dead process to its clients: idle keep-alive connections end now
  // (their next request sees the connection close, then "connection refused"), instead of
  // lingering until httplib's keep-alive timeout. Connections with a request in progress keep
  // it: that request was woken above and answers 503.
  std::multiset<int> active;
  {
    std::lock_guard lock(slots_mutex_);
    active = active_peers_;
  }
  ShutdownConnectionsOnPort(port_, [&](int peer) { return active.count(peer) > 0; });
  if (thread_.joinable()) thread_.join();
  server_.reset();
}

void RegionServer::SetFaults(const RegionFaults& faults) {
  std::lock_guard lock(faults_mutex_);
  faults_ = faults;
}

RegionFaults RegionServer::faults() const {
  std::lock_guard lock(faults_mutex_);
  return faults_;
}

RegionServer::RequestSlot::RequestSlot(RegionServer& server, bool is_commit)
    : server_(server), is_commit_(is_commit) {
  std::unique_lock lock(server_.slots_mutex_);
  server_.slots_cv_.wait(
      lock, [&] { return server_.stopping_ || server_.requests_.in_progress < server_.threads_; });
  if (server_.stopping_) return;
  RequestCounts& counts = server_.requests_;
  ++counts.in_progress;
  ++counts.requests_total;
  if (is_commit_) {
    ++counts.commits_in_progress;
    ++counts.commits_total;
    counts.peak_commits_in_progress =
        std::max(counts.peak_commits_in_progress, counts.commits_in_progress);
  }
  held_ = true;
}

RegionServer::RequestSlot::~RequestSlot() {
  if (!held_) return;
  {
    std::lock_guard lock(server_.slots_mutex_);
    --server_.requests_.in_progress;
    if (is_commit_) --server_.requests_.commits_in_progress;
  }
  server_.slots_cv_.notify_one();
}

RegionServer::ActiveRequest::ActiveRequest(RegionServer& server, int peer_port)
    : server_(server), peer_port_(peer_port) {
  {
    std::lock_guard lock(server_.slots_mutex_);
    if (!server_.stopping_) {
      server_.active_peers_.insert(peer_port_);
      return;
    }
  }
  // The region began stopping before this request came: as from a process that died, no
  // answer at all.
  dropped_ = true;
  ShutdownConnectionsOnPort(server_.port_, [&](int peer) { return peer != peer_port_; });
}

RegionServer::ActiveRequest::~ActiveRequest() {
  if (dropped_) return;
  std::lock_guard lock(server_.slots_mutex_);
  server_.active_peers_.erase(server_.active_peers_.find(peer_port_));
}

RequestCounts RegionServer::requests() const {
  std::lock_guard lock(slots_mutex_);
  return requests_;
}

nlohmann::json RequestCounts::ToJson() const {
  return {{"in_progress", in_progress},
          {"commits_in_progress", commits_in_progress},
          {"peak_commits_in_progress", peak_commits_in_progress},
          {"commits_total", commits_total},
          {"requests_total", requests_total},
          {"not_modified_total", not_modified_total}};
}

bool RegionServer::Pause(int ms) {
  if (ms <= 0) return !stopping_;
  std::unique_lock lock(stop_mutex_);
  stopping_cv_.wait_for(lock, std::chrono::milliseconds(ms), [this] { return stopping_.load(); });
  return !stopping_;
}

void RegionServer::Register(httplib::Server& server) {
  for (auto& route : api_->Routes()) {
    auto handler = [this, inner = route.handler, is_commit = route.is_commit](
                       const httplib::Request& req, httplib::Response& res) {
      ActiveRequest active(*this, req.remote_port);
      if (active.dropped()) return;  // arrived while stopping: its connection is gone
      RequestSlot slot(*this, is_commit);
      if (!slot.held()) {
        SetErrorResponse(res, 503, "ServiceUnavailableException",
                         "region " + name_ + " is stopping");
        return;
      }
      int fail_after_commit = 0;
      if (!Admit(req, res, is_commit, &fail_after_commit)) return;
      try {
        inner(req, res);
      } catch (const std::exception& e) {
        SetErrorResponse(
            res, 500, is_commit ? "CommitStateUnknownException" : "InternalServerError", e.what());
      }
      if (fail_after_commit != 0) {
        SetErrorResponse(res, fail_after_commit, "CommitStateUnknownException",
                         "Injected fault in region " + name_ + " after the commit was applied");
      }
      if (res.status == 304) {
        std::lock_guard lock(slots_mutex_);
        ++requests_.not_modified_total;
      }
    };
    if (route.method == "GET") {
      server.Get(route.pattern, handler);
    } else if (route.method == "DELETE") {
      server.Delete(route.pattern, handler);
    } else {
      server.Post(route.pattern, handler);
    }
  }
  server.Post("/v1/oauth/tokens", [this](const httplib::Request& req, httplib::Response& res) {
    if (Pause(faults().hang_ms)) IssueToken(req, res);
  });
  // Unknown routes and anything else that failed without a body get the spec's error body.
  server.set_error_handler(
      httplib::Server::HandlerWithResponse([](const httplib::Request& req, httplib::Response& res) {
        if (!res.body.empty()) return httplib::Server::HandlerResponse::Unhandled;
        if (res.status == 404) {
          SetErrorResponse(res, 404, "NotFoundException",
                           "No route for " + req.method + " " + req.path);
        } else {
          SetErrorResponse(res, res.status, "BadRequestException", "request failed");
        }
        return httplib::Server::HandlerResponse::Handled;
      }));
}

bool RegionServer::Admit(const httplib::Request& req, httplib::Response& res, bool is_commit,
                         int* fail_after_commit) {
  RegionFaults faults = this->faults();
  if (!Pause(faults.hang_ms)) {
    SetErrorResponse(res, 503, "ServiceUnavailableException", "region " + name_ + " is stopping");
    return false;
  }
  if (auth_.required()) {
    std::string token = BearerToken(req);
    bool ok = !token.empty() && ((!auth_.static_token.empty() && token == auth_.static_token) ||
                                 tokens_.Valid(token, now_ms_()));
    if (!ok) {
      SetErrorResponse(res, 401, "NotAuthorizedException",
                       token.empty() ? "Missing bearer token" : "Token is invalid or expired");
      return false;
    }
  }
  // 409s, and errors injected after a commit, are about commits: other requests pass.
  bool can_fail = is_commit || (faults.error_status != 409 && !faults.error_after_commit);
  if (can_fail && Roll(faults.error_rate)) {
    int status = faults.error_status;
    if (is_commit && faults.error_after_commit &&
        (status == 500 || status == 502 || status == 504)) {
      // Applied, then answered as if the answer was lost: the client cannot know the outcome.
      *fail_after_commit = status;
    } else {
      std::string type = status == 409   ? "CommitFailedException"
                         : status == 503 ? "ServiceUnavailableException"
                         : status == 401 ? "NotAuthorizedException"
                         : status == 403 ? "ForbiddenException"
                         : is_commit     ? "CommitStateUnknownException"
                                         : "InternalServerError";
      SetErrorResponse(res, status, type, "Injected fault in region " + name_);
      if (status == 503 && faults.retry_after_s > 0) {
        res.set_header("Retry-After", std::to_string(faults.retry_after_s));
      }
      return false;
    }
  }
  if (is_commit && !Pause(faults.commit_latency_ms)) {
    SetErrorResponse(res, 503, "ServiceUnavailableException", "region " + name_ + " is stopping");
    return false;
  }
  return true;
}

void RegionServer::IssueToken(const httplib::Request& req, httplib::Response& res) {
  if (auth_.client_id.empty()) {
    SetOAuthError(res, 400, "unauthorized_client", "this region has no OAuth2 client configured");
    return;
  }
  httplib::Params form;
  httplib::detail::parse_query_text(req.body, form);
  auto field = [&](const std::string& key) {
    auto it = form.find(key);
    return it == form.end() ? std::string() : it->second;
  };
  std::string grant = field("grant_type");
  int lifetime = faults().token_lifetime_s;
  if (grant == "client_credentials") {
    if (field("client_id") != auth_.client_id || field("client_secret") != auth_.client_secret) {
      SetOAuthError(res, 401, "invalid_client", "unknown client or wrong secret");
      return;
    }
  } else if (grant == "urn:ietf:params:oauth:grant-type:token-exchange") {
    // Refreshing: the subject token must still be valid.
    if (!tokens_.Valid(field("subject_token"), now_ms_())) {
      SetOAuthError(res, 401, "invalid_grant", "subject_token is invalid or expired");
      return;
    }
  } else {
    SetOAuthError(res, 400, "unsupported_grant_type", "grant_type " + grant + " is not supported");
    return;
  }
  json body = {{"access_token", tokens_.Issue(lifetime, now_ms_())},
               {"token_type", "bearer"},
               {"expires_in", lifetime},
               {"issued_token_type", "urn:ietf:params:oauth:token-type:access_token"}};
  if (!field("scope").empty()) body["scope"] = field("scope");
  res.set_content(body.dump(), "application/json");
}

}  // namespace icewarden::lab
