// The whole local lab of scripts/run-lab.sh, on ephemeral loopback ports, for end-to-end
// tests of failovers as an operator runs them:
//
//   - LabProcess: the real icewarden-lab executable (catalogs for us-east-1 and eu-central-1,
//     us-east-1 the default owner, eu.* owned by eu-central-1, replication, fault injection);
//   - BIND 9 serving lake.lab. (writer.lake.lab. a CNAME to catalog.us-east-1.lake.lab.),
//     open to RFC 2136 updates signed with the TSIG key icewarden-lab (hmac-sha256);
//   - a real Prometheus Alertmanager;
//   - `icewarden serve` on a config like examples/local.yaml pointing at all of them, with
//     the failovers routes in both directions to examples/runbooks/lab-failover.yaml and
//     the API tokens and DNS_TSIG_SECRET in its environment.
//
//   class MyTest : public LabStackTest {};       // or a LabStack of one's own
//   TEST_F(MyTest, X) {
//     auto regions = stack_->Api("GET", "/api/v1/regions");        // as admin
//     stack_->LabAdmin("POST", "/lab/regions/us-east-1/stop");
//     stack_->Dig("writer.lake.lab", "CNAME");    // {"catalog.us-east-1.lake.lab."}
//     stack_->Cli({"status"}, "viewer");           // the real CLI against serve
//     stack_->KillServe(SIGKILL); ASSERT_EQ(stack_->RestartServe(), "");
//   }
//
// Thread-safety: one test thread drives a stack. Helpers that can fail return "" on success
// and otherwise a sentence saying what went wrong, for ASSERT_EQ(..., "").
#pragma once

#include <gtest/gtest.h>
#include <httplib.h>
#include <signal.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <exception>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/fakes/subprocess.h"
#include "tests/fakes/test_paths.h"
#include "tests/integration/actions/alertmanager_server.h"
#include "tests/integration/actions/bind_server.h"

namespace icewarden::testing {

inline constexpr const char* kLabUs = "us-east-1";
inline constexpr const char* kLabEu = "eu-central-1";
inline constexpr const char* kLabZone = "lake.lab";

// Polls `done` every 50 ms until it holds or `limit` passes; returns whether it held.
// A condition that throws (a JSON field still null in an answer read mid-change) is not met
// yet, rather than the end of the test.
inline bool Eventually(const std::function<bool()>& done,
                       std::chrono::milliseconds limit = std::chrono::seconds(30)) {
  auto met = [&] {
    try {
      return done();
    } catch (const std::exception&) {
      return false;
    }
  };
  const auto stop = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < stop) {
    if (met()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return met();
}

// "lab: region us-east-1 http://127.0.0.1:41234" -> "http://127.0.0.1:41234"
inline std::string UrlAfter(const std::string& line) {
  const auto at = line.find("http://");
  if (at == std::string::npos) return "";
  return line.substr(at, line.find(' ', at) - at);
}

// Reads `icewarden serve`'s first line ("icewarden: serving http://127.0.0.1:PORT (state
// ...)"); the URL, or "" when it did not come within `limit`.
inline std::string ServingUrl(Subprocess& serve,
                              std::chrono::milliseconds limit = std::chrono::seconds(20)) {
  auto line = serve.ReadLine(limit);
  if (!line || line->find("serving ") == std::string::npos) return "";
  return UrlAfter(*line);
}

// The icewarden-lab executable with two regions on ephemeral ports; `flags` are added to
// the region and ownership flags (replication lag, workload, ...).
class LabProcess {
 public:
  LabProcess(const std::string& data_dir, const std::vector<std::string>& flags) {
    std::vector<std::string> argv{ICEWARDEN_LAB_BINARY,
                                  "--data",
                                  data_dir,
                                  "--admin",
                                  "127.0.0.1:0",
                                  "--region",
                                  std::string(kLabUs) + "=127.0.0.1:0",
                                  "--region",
                                  std::string(kLabEu) + "=127.0.0.1:0",
                                  "--default-owner",
                                  kLabUs,
                                  "--owner",
                                  std::string("eu[.].*=") + kLabEu};
    argv.insert(argv.end(), flags.begin(), flags.end());
    process_ = std::make_unique<Subprocess>(argv);
  }

  // Reads the listener lines up to "lab: ready"; false when it did not come within `limit`.
  bool WaitUntilReady(std::chrono::milliseconds limit = std::chrono::seconds(20)) {
    const auto stop = std::chrono::steady_clock::now() + limit;
    for (;;) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          stop - std::chrono::steady_clock::now());
      auto line = process_->ReadLine(std::max(left, std::chrono::milliseconds(1)));
      if (!line) return false;
      const std::string region_prefix = "lab: region ";
      if (line->rfind(region_prefix, 0) == 0) {
        const std::string rest = line->substr(region_prefix.size());
        regions_[rest.substr(0, rest.find(' '))] = UrlAfter(*line);
      }
      if (line->rfind("lab: admin ", 0) == 0) admin_ = UrlAfter(*line);
      if (*line == "lab: ready") return true;
    }
  }

  // "http://127.0.0.1:PORT" of a region's catalog ("" for an unknown region).
  std::string region_url(const std::string& region) const {
    auto it = regions_.find(region);
    return it == regions_.end() ? "" : it->second;
  }
  const std::string& admin_url() const { return admin_; }

 private:
  std::unique_ptr<Subprocess> process_;
  std::map<std::string, std::string> regions_;
  std::string admin_;
};

struct LabStackOptions {
  int replication_lag_ms = 200;
  int workload_interval_ms = 500;
  bool workload = true;
  std::vector<std::string> lab_flags;  // more icewarden-lab flags (docs/lab.md)
  // policies: of the generated config, as written in YAML.
  std::string probe_interval = "250ms";
  std::string probe_timeout = "200ms";
  std::string unreachable_for = "2s";
  std::string cooldown = "2m";
  std::string max_staleness = "1m";
  bool two_person_approval = false;
  std::string fencing_evidence = "[steps_and_quiet_window, old_region_unreachable, operator]";
  std::string switchover_catch_up = "10s";  // examples/runbooks/switchover.yaml's catch_up
  // The failovers' runbook, under examples/runbooks/ (e.g. gateway-failover.yaml).
  std::string failover_runbook = "lab-failover.yaml";
  // Appended to the generated config (e.g. a webhooks: section), and added to serve's
  // environment (the secrets it names).
  std::string extra_yaml;
  std::map<std::string, std::string> extra_env;
  // Replaces the generated `state:` section (e.g. state.backend etcd), and flags for serve.
  std::string state_yaml;
  std::vector<std::string> serve_flags;
  // serve's HOST:PORT; port 0 lets the kernel pick. The etcd backend needs a fixed port (its
  // replicas send clients to it).
  std::string serve_listen = "127.0.0.1:0";
};

// What an HTTP call answered: status (-1 when there was no answer) and the body, parsed when
// it is JSON (null otherwise; `text` has it as sent).
struct HttpReply {
  int status = -1;
  nlohmann::json body;
  std::string text;
};

class LabStack {
 public:
  explicit LabStack(LabStackOptions options = {}) : options_(std::move(options)) {
    dir_ = MakeTempDir("icewarden-lab-stack");
    for (const char* role : {"viewer", "operator", "approver", "admin"})
      tokens_[role] = std::string("e2e-") + role + "-token";
  }

  ~LabStack() {
    serve_.reset();
    lab_.reset();
    alertmanager_.reset();
    bind_.reset();
    std::filesystem::remove_all(dir_);
  }
  LabStack(const LabStack&) = delete;
  LabStack& operator=(const LabStack&) = delete;

  // Starts BIND, Alertmanager and the lab, waits until each answers, writes the config and
  // starts serve. "" when all of it runs.
  std::string Start() {
    using namespace std::chrono_literals;
    if (!AlertmanagerServer::Installed()) return std::string(kAlertmanagerBinary) + " is missing";
    BindZone zone;
    zone.name = kLabZone;
    zone.records = std::string("catalog.") + kLabUs + " IN A 127.0.0.1\n" + "catalog." + kLabEu +
                   " IN A 127.0.0.1\n" + "writer 5 IN CNAME catalog." + kLabUs + "." + kLabZone +
                   ".\n";
    zone.keys = {tsig_key()};
    bind_ = std::make_unique<BindServer>(zone);
    alertmanager_ = std::make_unique<AlertmanagerServer>();
    std::filesystem::create_directories(dir_ + "/catalogs");
    std::vector<std::string> flags{
        "--replication-lag-ms", std::to_string(options_.replication_lag_ms),
        "--workload-interval-ms", std::to_string(options_.workload_interval_ms)};
    if (!options_.workload) flags.push_back("--no-workload");
    flags.insert(flags.end(), options_.lab_flags.begin(), options_.lab_flags.end());
    lab_ = std::make_unique<LabProcess>(dir_ + "/catalogs", flags);
    if (!lab_->WaitUntilReady()) return "icewarden-lab did not print 'lab: ready'";
    if (!bind_->WaitUntilServing(20s)) return "named did not serve " + std::string(kLabZone);
    if (!alertmanager_->WaitUntilReady(30s))
      return "Alertmanager did not become ready at " + alertmanager_->url();
    std::ofstream(config_path()) << ConfigYaml();
    return StartServe(options_.serve_listen);
  }

  // Stops serve (SIGTERM, SIGKILL after 10 s) when it runs, and starts it again on the same
  // address with the same config and state. "" once it serves.
  std::string RestartServe() {
    const std::string scheme = "http://";
    if (serve_url_.rfind(scheme, 0) != 0) return "serve never started, so it cannot restart";
    if (serve_) KillServe(SIGTERM);
    return StartServe(serve_url_.substr(scheme.size()));
  }

  // Sends `sig` to serve and waits for it to exit (SIGKILL after 10 s).
  void KillServe(int sig = SIGKILL) {
    using namespace std::chrono_literals;
    if (!serve_) return;
    serve_->Signal(sig);
    if (!serve_->Wait(10s)) {
      serve_->Signal(SIGKILL);
      serve_->Wait(10s);
    }
    serve_.reset();
  }

  // Another `icewarden serve` on the same config and environment, on `listen`, with `flags`
  // (with state.backend etcd: another replica, e.g. {"--replica", "b"}); its stderr in
  // serve-<N>.log. The caller reads its first line.
  std::unique_ptr<Subprocess> StartAnotherServe(const std::string& listen,
                                                const std::vector<std::string>& flags) {
    return ServeProcess(listen, flags, dir_ + "/serve-" + std::to_string(++others_) + ".log");
  }
  // Api() and Cli() go to `url` from now on (the replica that leads now).
  void UseServer(const std::string& url) { serve_url_ = url; }

  // An API call to serve with the token of `role` (viewer, operator, approver, admin).
  HttpReply Api(const std::string& method, const std::string& path, const std::string& body = "",
                const std::string& role = "admin") const {
    httplib::Headers headers;
    if (!role.empty()) headers.emplace("Authorization", "Bearer " + token(role));
    return Call(serve_url_, method, path, body, headers);
  }

  // A call to the lab's admin API (docs/lab.md), e.g. ("POST", "/lab/regions/us-east-1/stop").
  HttpReply LabAdmin(const std::string& method, const std::string& path,
                     const std::string& body = "") const {
    return Call(lab_->admin_url(), method, path, body, {});
  }

  // The real CLI against serve (ICEWARDEN_SERVER and ICEWARDEN_TOKEN of `role` set).
  CommandResult Cli(const std::vector<std::string>& args, const std::string& role = "admin",
                    std::chrono::milliseconds timeout = std::chrono::seconds(60)) const {
    std::vector<std::string> argv{IcewardenBinary()};
    argv.insert(argv.end(), args.begin(), args.end());
    std::map<std::string, std::string> env = ServeEnv();
    env["ICEWARDEN_SERVER"] = serve_url_;
    env["ICEWARDEN_TOKEN"] = token(role);
    return RunCommand(argv, env, timeout);
  }

  // `dig +short NAME TYPE` against the stack's BIND, one value a line.
  std::vector<std::string> Dig(const std::string& name, const std::string& type) const {
    return bind_->Dig(name, type);
  }

  // GET /api/v2/alerts of the stack's Alertmanager.
  nlohmann::json AlertmanagerAlerts() const { return alertmanager_->Alerts(); }
  // The stack's Alertmanager, e.g. to route its notifications to serve's webhook.
  AlertmanagerServer& alertmanager() { return *alertmanager_; }

  // The environment serve runs with: the four roles' tokens and DNS_TSIG_SECRET.
  std::map<std::string, std::string> ServeEnv() const {
    std::map<std::string, std::string> env{{"DNS_TSIG_SECRET", tsig_key().secret}};
    for (const auto& [role, value] : tokens_) env[TokenVariable(role)] = value;
    for (const auto& [name, value] : options_.extra_env) env[name] = value;
    return env;
  }

  // "approver" -> "ICEWARDEN_APPROVER_TOKEN", as in examples/local.yaml.
  static std::string TokenVariable(const std::string& role) {
    std::string var = "ICEWARDEN_" + role + "_TOKEN";
    for (auto& c : var) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    return var;
  }

  const std::string& token(const std::string& role) const { return tokens_.at(role); }
  static BindKey tsig_key() { return {"icewarden-lab", "hmac-sha256", kKey256.secret}; }
  const std::string& dir() const { return dir_; }
  std::string config_path() const { return dir_ + "/icewarden.yaml"; }
  static std::string runbook_path() { return SourceDir() + "/examples/runbooks/lab-failover.yaml"; }
  const std::string& serve_url() const { return serve_url_; }
  std::string region_url(const std::string& region) const { return lab_->region_url(region); }
  std::string admin_url() const { return lab_->admin_url(); }
  std::string dns_server() const { return bind_->server(); }
  std::string alertmanager_url() const { return alertmanager_->url(); }
  std::string serve_log() const { return dir_ + "/serve.log"; }

 private:
  std::unique_ptr<Subprocess> ServeProcess(const std::string& listen,
                                           const std::vector<std::string>& flags,
                                           const std::string& log) {
    // serve logs to stderr; it goes to a file the test can read, stdout carries "serving".
    std::vector<std::string> argv{
        "/bin/sh",
        "-c",
        "bin=$0 config=$1 listen=$2 log=$3; shift 3; "
        "exec \"$bin\" serve --config \"$config\" --listen \"$listen\" \"$@\" 2>>\"$log\"",
        IcewardenBinary(),
        config_path(),
        listen,
        log};
    argv.insert(argv.end(), flags.begin(), flags.end());
    return std::make_unique<Subprocess>(argv, ServeEnv());
  }

  std::string StartServe(const std::string& listen) {
    serve_ = ServeProcess(listen, options_.serve_flags, serve_log());
    serve_url_ = ServingUrl(*serve_);
    if (serve_url_.empty()) {
      std::ifstream log(serve_log());
      return "icewarden serve did not start; " + serve_log() + ":\n" +
             std::string(std::istreambuf_iterator<char>(log), {});
    }
    return "";
  }

  static HttpReply Call(const std::string& base, const std::string& method, const std::string& path,
                        const std::string& body, const httplib::Headers& headers) {
    httplib::Client client(base);
    client.set_connection_timeout(std::chrono::seconds(2));
    client.set_read_timeout(std::chrono::seconds(30));
    auto send = [&]() -> httplib::Result {
      if (method == "GET") return client.Get(path, headers);
      if (method == "POST") return client.Post(path, headers, body, "application/json");
      if (method == "PUT") return client.Put(path, headers, body, "application/json");
      if (method == "DELETE") return client.Delete(path, headers, body, "application/json");
      ADD_FAILURE() << "LabStack: no HTTP method " << method;
      return httplib::Result(nullptr, httplib::Error::Unknown);
    };
    httplib::Result res = send();
    HttpReply reply;
    if (!res) return reply;
    reply.status = res->status;
    reply.text = res->body;
    reply.body = nlohmann::json::parse(res->body, nullptr, false);
    if (reply.body.is_discarded()) reply.body = nullptr;
    return reply;
  }

  // Like examples/local.yaml, for this stack's ports, with fast probes.
  std::string ConfigYaml() const {
    const LabStackOptions& o = options_;
    std::ostringstream y;
    y << "api:\n"
      << "  listen: 127.0.0.1:0\n"
      << "  tokens:\n";
    for (const auto& entry : tokens_) {
      const std::string& role = entry.first;
      y << "    - {name: " << role << ", role: " << role << ", token_env: " << TokenVariable(role)
        << "}\n";
    }
    if (o.state_yaml.empty()) {
      y << "state:\n"
        << "  backend: sqlite\n"
        << "  path: state.db\n";
    } else {
      y << o.state_yaml;
    }
    y << "regions:\n";
    for (const char* region : {kLabUs, kLabEu}) {
      y << "  - name: " << region << "\n"
        << "    catalog_uri: " << region_url(region) << "\n"
        << "    warehouse: lab\n";
    }
    y << "ownership:\n"
      << "  default_owner: " << kLabUs << "\n"
      << "  rules:\n"
      << "    - {match: \"eu.*\", owner: " << kLabEu << "}\n"
      << "policies:\n"
      << "  max_staleness: " << o.max_staleness << "\n"
      << "  cooldown: " << o.cooldown << "\n"
      << "  approval_ttl: 15m\n"
      << "  unreachable_for: " << o.unreachable_for << "\n"
      << "  fencing_evidence: " << o.fencing_evidence << "\n"
      << "  two_person_approval: " << (o.two_person_approval ? "true" : "false") << "\n"
      << "  lag_interval: 300ms\n"
      << "  probe: {interval: " << o.probe_interval << ", timeout: " << o.probe_timeout
      << ", fall: 3, rise: 2}\n"
      << "failovers:\n";
    for (auto [from, to] : {std::pair{kLabUs, kLabEu}, std::pair{kLabEu, kLabUs}}) {
      y << "  - name: " << from << "-to-" << to << "\n"
        << "    kind: failover\n"
        << "    from: " << from << "\n"
        << "    to: " << to << "\n"
        << "    scope: \"*\"\n"
        << "    runbook: " << SourceDir() << "/examples/runbooks/" << o.failover_runbook << "\n"
        << "    params: {dns_server: \"" << dns_server() << "\", zone: \"" << kLabZone
        << ".\", alertmanager_url: \"" << alertmanager_url() << "\"}\n";
    }
    // Planned switchovers (and failbacks) with examples/runbooks/switchover.yaml.
    for (auto [from, to] : {std::pair{kLabUs, kLabEu}, std::pair{kLabEu, kLabUs}}) {
      y << "  - name: switchover-" << from << "-to-" << to << "\n"
        << "    kind: switchover\n"
        << "    from: " << from << "\n"
        << "    to: " << to << "\n"
        << "    runbook: " << SourceDir() << "/examples/runbooks/switchover.yaml\n"
        << "    params: {lab_admin: \"" << admin_url() << "\", dns_server: \"" << dns_server()
        << "\", zone: \"" << kLabZone << ".\", alertmanager_url: \"" << alertmanager_url()
        << "\", catch_up: \"" << o.switchover_catch_up << "\"}\n";
    }
    // The switchover gated on verify.replica_caught_up too (examples/local.yaml has it after the
    // plain ones, so `icewarden switchover` still picks those).
    y << "  - name: checked-switchover-" << kLabUs << "-to-" << kLabEu << "\n"
      << "    kind: switchover\n"
      << "    from: " << kLabUs << "\n"
      << "    to: " << kLabEu << "\n"
      << "    runbook: " << SourceDir() << "/examples/runbooks/checked-switchover.yaml\n"
      << "    params: {lab_admin: \"" << admin_url() << "\", dns_server: \"" << dns_server()
      << "\", zone: \"" << kLabZone << ".\", alertmanager_url: \"" << alertmanager_url() << "\"}\n";
    // icewarden's own critical alerts (the split-brain watch) go to the stack's Alertmanager.
    y << "alerts:\n"
      << "  - {name: stack-alertmanager, action: alert.alertmanager, params: {url: \""
      << alertmanager_url() << "\"}}\n";
    y << o.extra_yaml;
    return y.str();
  }

  LabStackOptions options_;
  std::string dir_;
  std::map<std::string, std::string> tokens_;
  std::unique_ptr<BindServer> bind_;
  std::unique_ptr<AlertmanagerServer> alertmanager_;
  std::unique_ptr<LabProcess> lab_;
  std::unique_ptr<Subprocess> serve_;
  std::string serve_url_;
  int others_ = 0;  // serves started by StartAnotherServe
};

// A fixture with a started LabStack in stack_; change options_ in the constructor.
class LabStackTest : public ::testing::Test {
 protected:
  void SetUp() override {
    stack_ = std::make_unique<LabStack>(options_);
    const std::string started = stack_->Start();
    if (started.find(kAlertmanagerBinary) == 0)
      GTEST_SKIP() << started << " (scripts/setup.sh installs prometheus-alertmanager)";
    ASSERT_EQ(started, "");
  }
  void TearDown() override { stack_.reset(); }

  LabStackOptions options_;
  std::unique_ptr<LabStack> stack_;
};

}  // namespace icewarden::testing
