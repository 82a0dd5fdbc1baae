// The Prometheus side of the real alerting loop, for end-to-end tests:
//
//   - PrometheusServer, BlackboxExporter: the Debian packages' real servers, each on
//     127.0.0.1:<free port> with its own config, data folder and log file (never the system
//     services the packages install, and no systemd needed);
//   - LabAlertingFile: one of the lab's examples/alerting/ files with the lab's fixed
//     addresses (127.0.0.1:8480, :18181, ...) replaced by the test's, so that a test runs the
//     configs scripts/run-lab.sh runs, and refusing a file that names an address the test
//     does not replace (it would reach a lab running on the machine).
//
// Thread-safety: one test thread drives them.
#pragma once

#include <httplib.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/fakes/subprocess.h"
#include "tests/fakes/test_paths.h"
#include "tests/integration/actions/alertmanager_server.h"

namespace icewarden::testing {

inline constexpr const char* kPrometheusBinary = "/usr/bin/prometheus";
inline constexpr const char* kBlackboxBinary = "/usr/bin/prometheus-blackbox-exporter";

// "" when Prometheus, the blackbox exporter and Alertmanager are installed; otherwise a
// sentence naming what is missing and how to get it.
inline std::string MissingAlertingBinaries() {
  std::string missing;
  for (const char* binary : {kPrometheusBinary, kBlackboxBinary, kAlertmanagerBinary}) {
    if (access(binary, X_OK) == 0) continue;
    if (!missing.empty()) missing += ", ";
    missing += binary;
  }
  if (missing.empty()) return "";
  return missing +
         " missing: run scripts/setup.sh (it installs prometheus, "
         "prometheus-blackbox-exporter and prometheus-alertmanager)";
}

// A server started as `exec ARGV 2>>LOG` (these servers log to stderr), stopped with
// SIGTERM and, after 5 s, SIGKILL.
class LoggedServer {
 public:
  LoggedServer(std::vector<std::string> argv, std::string log, uint16_t port)
      : log_(std::move(log)), port_(port) {
    // sh -c SCRIPT LOG ARGV...: $0 is the log, "$@" the server's argv.
    std::vector<std::string> sh{"/bin/sh", "-c", "exec \"$@\" 2>>\"$0\"", log_};
    sh.insert(sh.end(), argv.begin(), argv.end());
    process_ = std::make_unique<Subprocess>(sh);
  }
  ~LoggedServer() {
    using namespace std::chrono_literals;
    process_->Signal(SIGTERM);
    if (!process_->Wait(5s)) process_->Signal(SIGKILL);
  }
  LoggedServer(const LoggedServer&) = delete;
  LoggedServer& operator=(const LoggedServer&) = delete;

  // Polls GET `path` until it answers 200, or `limit` passes, or the server exited.
  bool WaitUntilAnswers(const std::string& path, std::chrono::milliseconds limit) {
    using namespace std::chrono_literals;
    const auto stop = std::chrono::steady_clock::now() + limit;
    while (std::chrono::steady_clock::now() < stop) {
      httplib::Client c("127.0.0.1", port_);
      c.set_connection_timeout(1s);
      auto res = c.Get(path);
      if (res && res->status == 200) return true;
      if (process_->Wait(0ms)) return false;
      std::this_thread::sleep_for(100ms);
    }
    return false;
  }

  // GET `path`, parsed as JSON; null when there was no 200 or no JSON.
  nlohmann::json GetJson(const std::string& path) const {
    httplib::Client c("127.0.0.1", port_);
    c.set_read_timeout(std::chrono::seconds(10));
    auto res = c.Get(path);
    if (!res || res->status != 200) return nullptr;
    nlohmann::json doc = nlohmann::json::parse(res->body, nullptr, false);
    return doc.is_discarded() ? nlohmann::json(nullptr) : doc;
  }

  std::string Log() const {
    std::ifstream in(log_);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }
  uint16_t port() const { return port_; }
  std::string address() const { return "127.0.0.1:" + std::to_string(port_); }
  std::string url() const { return "http://" + address(); }

 private:
  std::string log_;
  uint16_t port_;
  std::unique_ptr<Subprocess> process_;
};

// The blackbox exporter on `config_file`, logging to `dir`/blackbox.log.
class BlackboxExporter : public LoggedServer {
 public:
  BlackboxExporter(const std::string& dir, const std::string& config_file, uint16_t port)
      : LoggedServer({kBlackboxBinary, "--config.file=" + config_file,
                      "--web.listen-address=127.0.0.1:" + std::to_string(port)},
                     dir + "/blackbox.log", port) {}
  bool WaitUntilReady(std::chrono::milliseconds limit) {
    return WaitUntilAnswers("/-/healthy", limit);
  }
};

// Prometheus on `config_file` (its rule files beside it), its TSDB in `dir`/data, logging to
// `dir`/prometheus.log. Its external URL is its own address, so alerts' generatorURL link to
// it, as in the lab.
class PrometheusServer : public LoggedServer {
 public:
  PrometheusServer(const std::string& dir, const std::string& config_file, uint16_t port)
      : LoggedServer({kPrometheusBinary, "--config.file=" + config_file,
                      "--storage.tsdb.path=" + dir + "/data",
                      "--web.listen-address=127.0.0.1:" + std::to_string(port),
                      "--web.external-url=http://127.0.0.1:" + std::to_string(port) + "/"},
                     dir + "/prometheus.log", port) {}
  bool WaitUntilReady(std::chrono::milliseconds limit) {
    return WaitUntilAnswers("/-/ready", limit);
  }

  // GET /api/v1/query?query=PROMQL: data.result (an array; empty without an answer).
  nlohmann::json Query(const std::string& promql) const {
    const nlohmann::json doc =
        GetJson("/api/v1/query?query=" + httplib::detail::encode_query_param(promql));
    if (!doc.is_object() || !doc.contains("data")) return nlohmann::json::array();
    return doc["data"]["result"];
  }
  // GET /api/v1/alerts: data.alerts (pending and firing).
  nlohmann::json Alerts() const {
    const nlohmann::json doc = GetJson("/api/v1/alerts");
    if (!doc.is_object() || !doc.contains("data")) return nlohmann::json::array();
    return doc["data"]["alerts"];
  }
};

// examples/alerting/NAME with every "127.0.0.1:PORT" replaced by `addresses` (lab address ->
// the test's). An address in the file that `addresses` does not name is an error, in
// `*error`, and "" is returned.
inline std::string LabAlertingFile(const std::string& name,
                                   const std::map<std::string, std::string>& addresses,
                                   std::string* error) {
  const std::string path = SourceDir() + "/examples/alerting/" + name;
  std::ifstream in(path);
  if (!in) {
    *error = "cannot read " + path;
    return "";
  }
  std::stringstream text;
  text << in.rdbuf();
  const std::string original = text.str();
  static const std::regex kAddress(R"(127\.0\.0\.1:\d+)");
  std::string out;
  std::size_t copied = 0;
  for (std::sregex_iterator it(original.begin(), original.end(), kAddress), end; it != end; ++it) {
    auto to = addresses.find(it->str());
    if (to == addresses.end()) {
      *error = path + " names " + it->str() + ", which the test does not replace";
      return "";
    }
    out += original.substr(copied, static_cast<std::size_t>(it->position()) - copied);
    out += to->second;
    copied = static_cast<std::size_t>(it->position() + it->length());
  }
  out += original.substr(copied);
  return out;
}

}  // namespace icewarden::testing
