// AlertmanagerServer: a real Prometheus Alertmanager on 127.0.0.1:<free port>, with no
// clustering (empty cluster listener) and a receiver that sends nothing, its state in a
// temporary folder. Started and stopped by the test that owns it.
#pragma once

#include <httplib.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <thread>

#include "tests/fakes/subprocess.h"
#include "tests/fakes/test_paths.h"
#include "tests/integration/actions/loopback_ports.h"

namespace icewarden::testing {

inline constexpr const char* kAlertmanagerBinary = "/usr/bin/prometheus-alertmanager";

class AlertmanagerServer {
 public:
  AlertmanagerServer() {
    dir_ = MakeTempDir("icewarden-alertmanager");
    port_ = FreeTcpPort();
    std::ofstream(dir_ + "/alertmanager.yml") << "route:\n"
                                                 "  receiver: \"null\"\n"
                                                 "receivers:\n"
                                                 "  - name: \"null\"\n";
    process_.emplace(
        std::vector<std::string>{kAlertmanagerBinary, "--config.file=" + dir_ + "/alertmanager.yml",
                                 "--storage.path=" + dir_ + "/data",
                                 "--web.listen-address=127.0.0.1:" + std::to_string(port_),
                                 // Empty: no gossip port, no clustering.
                                 "--cluster.listen-address="});
  }
  ~AlertmanagerServer() {
    using namespace std::chrono_literals;
    if (process_) {
      process_->Signal(SIGTERM);
      if (!process_->Wait(5s)) process_->Signal(SIGKILL);
    }
  }
  AlertmanagerServer(const AlertmanagerServer&) = delete;
  AlertmanagerServer& operator=(const AlertmanagerServer&) = delete;

  static bool Installed() { return access(kAlertmanagerBinary, X_OK) == 0; }

  // Polls GET /-/ready until it answers 200.
  bool WaitUntilReady(std::chrono::milliseconds limit) {
    using namespace std::chrono_literals;
    const auto stop = std::chrono::steady_clock::now() + limit;
    while (std::chrono::steady_clock::now() < stop) {
      httplib::Client c("127.0.0.1", port_);
      c.set_connection_timeout(1s);
      auto res = c.Get("/-/ready");
      if (res && res->status == 200) return true;
      std::this_thread::sleep_for(100ms);
    }
    return false;
  }

  // GET /api/v2/alerts, parsed; an empty array when Alertmanager did not answer 200.
  nlohmann::json Alerts() const {
    httplib::Client c("127.0.0.1", port_);
    auto res = c.Get("/api/v2/alerts");
    if (!res || res->status != 200) return nlohmann::json::array();
    return nlohmann::json::parse(res->body);
  }

  // Replaces alertmanager.yml with `yaml` and asks Alertmanager to reload it
  // (POST /-/reload); true once it answered 200 (it refuses a config it cannot load).
  bool Reconfigure(const std::string& yaml) {
    std::ofstream(dir_ + "/alertmanager.yml") << yaml;
    httplib::Client c("127.0.0.1", port_);
    auto res = c.Post("/-/reload");
    return res && res->status == 200;
  }

  // POST /api/v2/alerts with `alerts` (a JSON array); the HTTP status, -1 without an answer.
  int PostAlerts(const nlohmann::json& alerts) const {
    httplib::Client c("127.0.0.1", port_);
    auto res = c.Post("/api/v2/alerts", alerts.dump(), "application/json");
    return res ? res->status : -1;
  }

  uint16_t port() const { return port_; }
  // Its config's folder: relative paths in alertmanager.yml (credentials_file) resolve here.
  const std::string& dir() const { return dir_; }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }

 private:
  std::string dir_;
  uint16_t port_ = 0;
  std::optional<Subprocess> process_;
};

}  // namespace icewarden::testing
