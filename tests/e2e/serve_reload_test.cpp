// Reloading the config of a running `icewarden serve`, as an operator does it: edit the file,
// then SIGHUP (systemctl reload) or POST /api/v1/config/reload. A good config applies without a
// restart (a new token works at once); a broken one or one that moves the listener is refused
// with FILE:LINE:COL and the running config keeps working; /metrics and the audit log say so.
#include <gtest/gtest.h>
#include <httplib.h>
#include <signal.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>

#include "tests/fakes/subprocess.h"
#include "tests/fakes/test_configs.h"
#include "tests/fakes/test_paths.h"

namespace icewarden {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;
using testing::IcewardenBinary;
using testing::Subprocess;

constexpr const char* kApi = R"(api:
  listen: 127.0.0.1:0
  tokens:
    - {name: ada, role: admin, token_file: admin.token}
    - {name: vera, role: viewer, token_file: viewer.token}
)";

const std::string kBase = std::string(kApi) + testing::kUnreachableRegionsYaml;

class ServeReloadTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::MakeTempDir("icewarden-reload");
    Write("admin.token", "admin-secret-1\n");
    Write("viewer.token", "viewer-secret-2\n");
    Write("otto.token", "operator-secret-3\n");
    Write("icewarden.yaml", kBase);
    serve_ = std::make_unique<Subprocess>(
        std::vector<std::string>{IcewardenBinary(), "serve", "--config", dir_ + "/icewarden.yaml"});
    auto line = serve_->ReadLine(30s);
    ASSERT_TRUE(line) << "serve did not start";
    const auto at = line->find("http://");
    ASSERT_NE(at, std::string::npos) << *line;
    url_ = line->substr(at, line->find(' ', at) - at);
  }
  void TearDown() override {
    if (serve_) {
      serve_->Signal(SIGTERM);
      serve_->Wait(20s);
    }
    std::filesystem::remove_all(dir_);
  }

  void Write(const std::string& name, const std::string& text) {
    // Written beside and renamed, as editors and config management do: the daemon never
    // reads half a file.
    std::ofstream(dir_ + "/" + name + ".new") << text;
    std::filesystem::rename(dir_ + "/" + name + ".new", dir_ + "/" + name);
  }

  httplib::Result Get(const std::string& path, const std::string& token = "") {
    httplib::Client c(url_);
    c.set_read_timeout(10, 0);
    httplib::Headers h;
    if (!token.empty()) h.emplace("Authorization", "Bearer " + token);
    return c.Get(path, h);
  }
  httplib::Result Reload(const std::string& token) {
    httplib::Client c(url_);
    c.set_read_timeout(20, 0);
    return c.Post("/api/v1/config/reload", {{"Authorization", "Bearer " + token}}, "{}",
                  "application/json");
  }
  // The value of an unlabelled gauge on /metrics, or -1.
  double Gauge(const std::string& name) {
    auto r = Get("/metrics");
    if (!r || r->status != 200) return -1;
    const auto at = r->body.find("\n" + name + " ");
    if (at == std::string::npos) return -1;
    return std::stod(r->body.substr(at + name.size() + 2));
  }
  // Polls until `done` holds (a reload runs on its own thread), for at most 15 s.
  bool Eventually(const std::function<bool()>& done) {
    for (auto until = std::chrono::steady_clock::now() + 15s;
         std::chrono::steady_clock::now() < until; std::this_thread::sleep_for(50ms))
      if (done()) return true;
    return false;
  }
  int SessionStatus(const std::string& token) {
    auto r = Get("/api/v1/session", token);
    return r ? r->status : 0;
  }
  std::vector<std::string> AuditActions() {
    auto r = Get("/api/v1/audit?limit=1000", "admin-secret-1");
    std::vector<std::string> out;
    EXPECT_TRUE(r && r->status == 200) << (r ? r->body : "no answer");
    if (!r || r->status != 200) return out;
    const json page = json::parse(r->body);
    for (const json& e : page["events"]) out.push_back(e["action"]);
    return out;
  }

  std::string dir_, url_;
  std::unique_ptr<Subprocess> serve_;
};

TEST_F(ServeReloadTest, SighupAppliesANewTokenAndRefusesABrokenConfigKeepingTheRunningOne) {
  ASSERT_EQ(Gauge("icewarden_config_last_reload_successful"), 1);
  const double started_at = Gauge("icewarden_config_last_reload_success_timestamp_seconds");
  ASSERT_GT(started_at, 0);
  ASSERT_EQ(SessionStatus("operator-secret-3"), 401);

  // A new operator token: after SIGHUP it works, with no restart.
  Write("icewarden.yaml",
        std::string(kBase).insert(std::string(kBase).find("state:"),
                                  "    - {name: otto, role: operator, token_file: otto.token}\n"));
  serve_->Signal(SIGHUP);
  EXPECT_TRUE(Eventually([&] { return SessionStatus("operator-secret-3") == 200; }))
      << "the reloaded token was not accepted";
  EXPECT_EQ(Gauge("icewarden_config_last_reload_successful"), 1);
  EXPECT_GE(Gauge("icewarden_config_last_reload_success_timestamp_seconds"), started_at);

  // A broken file: refused; the running config (with otto) goes on; the metric says so.
  Write("icewarden.yaml", std::string(kBase) + "policies:\n  cooldown: banana\n");
  serve_->Signal(SIGHUP);
  EXPECT_TRUE(Eventually([&] { return Gauge("icewarden_config_last_reload_successful") == 0; }));
  EXPECT_EQ(SessionStatus("operator-secret-3"), 200) << "a refused reload changed the config";
  EXPECT_EQ(SessionStatus("viewer-secret-2"), 200);
  const auto actions = AuditActions();
  std::string seen;
  for (const std::string& a : actions) seen += a + " ";
  EXPECT_NE(std::find(actions.begin(), actions.end(), "config.reload"), actions.end()) << seen;
  EXPECT_NE(std::find(actions.begin(), actions.end(), "config.reload_refused"), actions.end());
  EXPECT_EQ(serve_->Wait(0ms), std::nullopt) << "SIGHUP stopped the daemon";
}

TEST_F(ServeReloadTest, TheApiReloadAnswersWithFileLineColOrWhatNeedsARestart) {
  Write("icewarden.yaml", std::string(kBase) + "policies:\n  cooldown: banana\n");
  auto refused = Reload("admin-secret-1");
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->status, 409) << refused->body;
  json body = json::parse(refused->body);
  ASSERT_FALSE(body["errors"].empty()) << refused->body;
  const std::string first = body["errors"][0];
  EXPECT_NE(first.find("icewarden.yaml:16:13"), std::string::npos) << first;
  EXPECT_EQ(body["error"]["code"], "config_refused");

  // The listener cannot move under a running daemon: named, refused, nothing changes.
  std::string moved = kBase;
  moved.replace(moved.find("127.0.0.1:0"), 11, "127.0.0.1:1");
  Write("icewarden.yaml", moved);
  refused = Reload("admin-secret-1");
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->status, 409) << refused->body;
  EXPECT_NE(refused->body.find("api.listen (127.0.0.1:0 -> 127.0.0.1:1)"), std::string::npos)
      << refused->body;
  EXPECT_NE(refused->body.find("cannot change without a restart"), std::string::npos);

  auto forbidden = Reload("viewer-secret-2");
  ASSERT_TRUE(forbidden);
  EXPECT_EQ(forbidden->status, 403) << forbidden->body;

  // A good config: accepted at once, applied on the reload thread.
  Write("icewarden.yaml", kBase);
  auto accepted = Reload("admin-secret-1");
  ASSERT_TRUE(accepted);
  EXPECT_EQ(accepted->status, 202) << accepted->body;
  EXPECT_TRUE(Eventually([&] { return Gauge("icewarden_config_last_reload_successful") == 1; }));
  auto audit = Get("/api/v1/audit?action=config.&limit=100", "admin-secret-1");
  ASSERT_TRUE(audit && audit->status == 200);
  const json events = json::parse(audit->body)["events"];
  ASSERT_FALSE(events.empty());
  EXPECT_EQ(events.back()["action"], "config.reload") << audit->body;
  EXPECT_EQ(events.back()["actor"], "ada") << "the reload is audited as the token that asked";
}

}  // namespace
}  // namespace icewarden
