#include "tests/fakes/recording_http_server.h"

#include <httplib.h>

#include <algorithm>
#include <cctype>

namespace icewarden::testing {

std::string RecordedRequest::Header(const std::string& name) const {
  auto lower = [](std::string s) {
    for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
  };
  for (const auto& [k, v] : headers)
    if (lower(k) == lower(name)) return v;
  return "";
}

RecordingHttpServer::RecordingHttpServer() : server_(std::make_unique<httplib::Server>()) {
  auto handle = [this](const httplib::Request& req, httplib::Response& res) {
    RecordedRequest r;
    r.method = req.method;
    r.path = req.path;
    for (const auto& [k, v] : req.params) r.query += (r.query.empty() ? "" : "&") + k + "=" + v;
    for (const auto& [k, v] : req.headers) r.headers.emplace(k, v);
    r.body = req.body;
    int status;
    std::string body;
    std::chrono::milliseconds delay;
    {
      std::lock_guard lock(mu_);
      requests_.push_back(std::move(r));
      status = status_;
      if (first_n_ > 0) {
        --first_n_;
        status = first_status_;
      }
      body = body_;
      delay = delay_;
    }
    if (delay.count() > 0) std::this_thread::sleep_for(delay);
    res.status = status;
    res.set_content(body, "application/json");
  };
  for (const char* m : {"GET", "POST", "PUT", "PATCH", "DELETE"}) {
    const std::string method = m;
    if (method == "GET") server_->Get(".*", handle);
    if (method == "POST") server_->Post(".*", handle);
    if (method == "PUT") server_->Put(".*", handle);
    if (method == "PATCH") server_->Patch(".*", handle);
    if (method == "DELETE") server_->Delete(".*", handle);
  }
  port_ = server_->bind_to_any_port("127.0.0.1");
  // bind_to_any_port already listens: connections queue until the accept loop runs.
  thread_ = std::thread([this] { server_->listen_after_bind(); });
  // stop() is a no-op until the accept loop runs, so a server destroyed at once would hang.
  while (!server_->is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

RecordingHttpServer::~RecordingHttpServer() {
  server_->stop();
  thread_.join();
}

std::string RecordingHttpServer::Url(const std::string& path) const {
  return "http://127.0.0.1:" + std::to_string(port_) + path;
}

void RecordingHttpServer::Respond(int status, std::string body, std::chrono::milliseconds delay) {
  std::lock_guard lock(mu_);
  status_ = status;
  body_ = std::move(body);
  delay_ = delay;
}

void RecordingHttpServer::RespondFirst(int n, int status) {
  std::lock_guard lock(mu_);
  first_n_ = n;
  first_status_ = status;
}

std::vector<RecordedRequest> RecordingHttpServer::Requests() const {
  std::lock_guard lock(mu_);
  return requests_;
}

size_t RecordingHttpServer::RequestCount() const {
  std::lock_guard lock(mu_);
  return requests_.size();
}

}  // namespace icewarden::testing
