// RecordingHttpServer: a cpp-httplib server on 127.0.0.1:<ephemeral port> that records
// every request it gets and answers with a status, body and delay the test chooses. For
// testing actions that call HTTP endpoints (webhooks, fencing endpoints, polls).
// Thread-safety: the server thread records under a mutex; tests may read and configure at
// any time.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace httplib {
class Server;
}

namespace icewarden::testing {

struct RecordedRequest {
  std::string method;
  std::string path;  // without the query
  std::string query;
  std::multimap<std::string, std::string> headers;  // as received (names as sent)
  std::string body;

  // The first header of that name, case-insensitively; "" when absent.
  std::string Header(const std::string& name) const;
};

class RecordingHttpServer {
 public:
  RecordingHttpServer();
  ~RecordingHttpServer();  // stops the server and joins its thread
  RecordingHttpServer(const RecordingHttpServer&) = delete;
  RecordingHttpServer& operator=(const RecordingHttpServer&) = delete;

  int port() const { return port_; }
  std::string Url(const std::string& path = "/") const;  // "http://127.0.0.1:PORT/path"

  // What every following request gets. Default: 200, "{}", no delay.
  void Respond(int status, std::string body = "{}",
               std::chrono::milliseconds delay = std::chrono::milliseconds(0));
  // Answers the next `n` requests with `status`, then goes back to the Respond() status.
  void RespondFirst(int n, int status);

  std::vector<RecordedRequest> Requests() const;
  size_t RequestCount() const;

 private:
  std::unique_ptr<httplib::Server> server_;
  std::thread thread_;
  int port_ = 0;
  mutable std::mutex mu_;
  std::vector<RecordedRequest> requests_;
  int status_ = 200;
  std::string body_ = "{}";
  std::chrono::milliseconds delay_{0};
  int first_n_ = 0;
  int first_status_ = 0;
};

}  // namespace icewarden::testing
