// Standing readiness end to end, against the real servers of the lab: the icewarden-lab
// catalogs, BIND 9 with the TSIG key icewarden-lab, a real Alertmanager, and `icewarden serve`
// checking examples/runbooks/lab-failover.yaml's routes every second. A route is ready; a wrong
// TSIG secret, a stopped BIND and a stopped target region each turn it not ready with the exact
// reason (API, CLI, /metrics, the failover plan); and readiness changes nothing: the zone's SOA
// serial and the ownership table are the same before and after.
//
// The stack is built here rather than with LabStack (lab_stack.h) because the test stops BIND,
// restarts serve with another environment and sets policies.readiness_interval, which LabStack
// does not expose.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include "tests/e2e/lab_stack.h"

namespace icewarden::testing {
namespace {

using namespace std::chrono_literals;
using json = nlohmann::json;
using ::testing::HasSubstr;

constexpr const char* kRoute = "us-east-1-to-eu-central-1";

class ReadinessE2eTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!AlertmanagerServer::Installed())
      GTEST_SKIP() << kAlertmanagerBinary << " is missing (scripts/setup.sh installs it)";
    dir_ = MakeTempDir("icewarden-readiness-e2e");
    BindZone zone;
    zone.name = kLabZone;
    zone.records = std::string("catalog.") + kLabUs + " IN A 127.0.0.1\ncatalog." + kLabEu +
                   " IN A 127.0.0.1\nwriter 5 IN CNAME catalog." + kLabUs + "." + kLabZone + ".\n";
    zone.keys = {LabStack::tsig_key()};
    bind_ = std::make_unique<BindServer>(zone);
    dns_server_ = bind_->server();
    alertmanager_ = std::make_unique<AlertmanagerServer>();
    std::filesystem::create_directories(dir_ + "/catalogs");
    // No workload: nothing but icewarden could change the ownership table the test compares.
    lab_ = std::make_unique<LabProcess>(
        dir_ + "/catalogs",
        std::vector<std::string>{"--replication-lag-ms", "100", "--no-workload"});
    ASSERT_TRUE(lab_->WaitUntilReady());
    ASSERT_TRUE(bind_->WaitUntilServing(20s));
    ASSERT_TRUE(alertmanager_->WaitUntilReady(30s));
    std::ofstream(dir_ + "/icewarden.yaml") << ConfigYaml();
    env_ = {{"DNS_TSIG_SECRET", LabStack::tsig_key().secret},
            {"ICEWARDEN_VIEWER_TOKEN", "e2e-viewer"},
            {"ICEWARDEN_ADMIN_TOKEN", "e2e-admin"}};
    ASSERT_EQ(StartServe(), "");
  }

  void TearDown() override {
    serve_.reset();
    lab_.reset();
    alertmanager_.reset();
    bind_.reset();
    if (!dir_.empty()) std::filesystem::remove_all(dir_);
  }

  std::string ConfigYaml() const {
    std::ostringstream y;
    y << "api:\n  listen: 127.0.0.1:0\n  tokens:\n"
      << "    - {name: viewer, role: viewer, token_env: ICEWARDEN_VIEWER_TOKEN}\n"
      << "    - {name: admin, role: admin, token_env: ICEWARDEN_ADMIN_TOKEN}\n"
      << "state: {backend: sqlite, path: state.db}\nregions:\n";
    for (const char* region : {kLabUs, kLabEu})
      y << "  - {name: " << region << ", catalog_uri: \"" << lab_->region_url(region)
        << "\", warehouse: lab}\n";
    y << "ownership:\n  default_owner: " << kLabUs
      << "\n  rules: [{match: \"eu.*\", owner: " << kLabEu << "}]\n"
      << "policies:\n  max_staleness: 1m\n  cooldown: 2m\n  unreachable_for: 2s\n"
      << "  lag_interval: 300ms\n  readiness_interval: 1s\n"
      << "  probe: {interval: 250ms, timeout: 200ms, fall: 3, rise: 2}\n"
      << "failovers:\n";
    for (auto [from, to] : {std::pair{kLabUs, kLabEu}, std::pair{kLabEu, kLabUs}})
      y << "  - name: " << from << "-to-" << to << "\n    kind: failover\n    from: " << from
        << "\n    to: " << to << "\n    runbook: " << LabStack::runbook_path()
        << "\n    params: {dns_server: \"" << dns_server_ << "\", zone: \"" << kLabZone
        << ".\", alertmanager_url: \"" << alertmanager_->url() << "\"}\n";
    return y.str();
  }

  std::string StartServe() {
    serve_ = std::make_unique<Subprocess>(
        std::vector<std::string>{
            "/bin/sh", "-c", "exec \"$0\" serve --config \"$1\" --listen \"$2\" 2>>\"$3\"",
            IcewardenBinary(), dir_ + "/icewarden.yaml", listen_, dir_ + "/serve.log"},
        env_);
    url_ = ServingUrl(*serve_);
    if (url_.empty()) return "serve did not start; see " + dir_ + "/serve.log";
    listen_ = url_.substr(std::string("http://").size());
    return "";
  }

  std::string RestartServe() {
    serve_->Signal(SIGTERM);
    serve_->Wait(15s);
    serve_.reset();
    return StartServe();
  }

  HttpReply Get(const std::string& path, const std::string& token = "e2e-viewer") const {
    httplib::Client c(url_);
    c.set_read_timeout(30s);
    HttpReply reply;
    auto res = c.Get(path, {{"Authorization", "Bearer " + token}});
    if (!res) return reply;
    reply.status = res->status;
    reply.text = res->body;
    reply.body = json::parse(res->body, nullptr, false);
    return reply;
  }

  // The route's latest readiness, or null before the first round.
  json Route(const std::string& name = kRoute) const {
    HttpReply r = Get("/api/v1/readiness");
    if (r.status != 200 || !r.body.is_object()) return nullptr;
    for (const json& route : r.body["routes"])
      if (route["route"] == name) return route;
    return nullptr;
  }

  // Waits until the route is ready (true) or has a reason containing `reason` (false).
  bool WaitForRoute(bool ready, const std::string& reason = "", std::chrono::seconds limit = 60s) {
    return Eventually(
        [&] {
          json r = Route();
          if (!r.is_object() || r["ready"] != ready) return false;
          if (reason.empty()) return true;
          for (const json& why : r["reasons"])
            if (why.get<std::string>().find(reason) != std::string::npos) return true;
          return false;
        },
        limit);
  }

  CommandResult Cli(const std::vector<std::string>& args) const {
    std::vector<std::string> argv{IcewardenBinary()};
    argv.insert(argv.end(), args.begin(), args.end());
    return RunCommand(argv, {{"ICEWARDEN_SERVER", url_}, {"ICEWARDEN_TOKEN", "e2e-admin"}});
  }

  // Every table's owner and epoch, as the store says.
  std::map<std::string, std::string> Ownership() const {
    std::map<std::string, std::string> out;
    HttpReply r = Get("/api/v1/ownership?limit=10000");
    if (r.status != 200) return out;
    for (const json& t : r.body["tables"])
      out[t["table"].get<std::string>()] =
          t["owner"].get<std::string>() + "@" + std::to_string(t["epoch"].get<long long>());
    return out;
  }

  // The zone's SOA as BIND answers it ("ns.lake.lab. admin.lake.lab. SERIAL ...").
  std::string Soa() const {
    auto soa = bind_->Dig(kLabZone, "SOA");
    return soa.empty() ? "" : soa.front();
  }

  std::string Metrics() const { return Get("/metrics").text; }

  std::string dir_, url_, listen_ = "127.0.0.1:0", dns_server_;
  std::map<std::string, std::string> env_;
  std::unique_ptr<BindServer> bind_;
  std::unique_ptr<AlertmanagerServer> alertmanager_;
  std::unique_ptr<LabProcess> lab_;
  std::unique_ptr<Subprocess> serve_;
};

TEST_F(ReadinessE2eTest, ReadyThenAWrongTsigKeyThenAStoppedBindAndNothingChanges) {
  ASSERT_TRUE(WaitForRoute(true)) << Route().dump(2);
  ASSERT_TRUE(Eventually([&] { return Ownership().size() >= 4; }));
  const auto ownership = Ownership();
  const std::string soa = Soa();
  ASSERT_THAT(soa, HasSubstr("admin.lake.lab. "));

  CommandResult table = Cli({"readiness"});
  EXPECT_EQ(table.exit_code, 0) << table.out << table.err;
  EXPECT_THAT(table.out, HasSubstr(kRoute));
  CommandResult as_json = Cli({"readiness", "--output", "json"});
  ASSERT_EQ(as_json.exit_code, 0) << as_json.err;
  EXPECT_EQ(json::parse(as_json.out)["ready"], true);
  EXPECT_THAT(Metrics(), HasSubstr(std::string("icewarden_failover_route_ready{route=\"") + kRoute +
                                   "\"} 1\n"));

  // The secret serve signs with is not the one BIND knows.
  env_["DNS_TSIG_SECRET"] = "d3Jvbmctc2VjcmV0LXdyb25nLXNlY3JldC13cm9uZy0=";
  ASSERT_EQ(RestartServe(), "");
  const std::string refused =
      "preflight point-writers-at-new-owner (dns.rfc2136): DNS server " + dns_server_ +
      " does not accept TSIG key icewarden-lab (hmac-sha256) for zone lake.lab.: NOTAUTH (TSIG "
      "BADSIG)";
  // The key is the only problem (once the probes and the first lag round have settled).
  ASSERT_TRUE(Eventually([&] { return Route()["reasons"] == json::array({refused}); }, 60s))
      << Route().dump(2);
  CommandResult not_ready = Cli({"readiness"});
  EXPECT_EQ(not_ready.exit_code, 1) << not_ready.out;
  EXPECT_THAT(not_ready.out, HasSubstr(refused));
  EXPECT_THAT(Metrics(), HasSubstr(std::string("icewarden_failover_route_ready{route=\"") + kRoute +
                                   "\"} 0\n"));
  // Every plan shows it: the dry run of a proposal on that route.
  CommandResult plan = Cli({"failover", "propose", "--to", kLabEu, "--scope", "owner:us-east-1",
                            "--reason", "drill", "--dry-run"});
  EXPECT_EQ(plan.exit_code, 0) << plan.err;
  EXPECT_THAT(plan.out, HasSubstr(std::string("Readiness of route ") + kRoute));
  EXPECT_THAT(plan.out, HasSubstr("NOT ready"));
  EXPECT_THAT(plan.out, HasSubstr(refused));

  // Audited once, when it became unready (not every round).
  HttpReply audit = Get(std::string("/api/v1/audit?target=route:") + kRoute, "e2e-admin");
  ASSERT_EQ(audit.status, 200) << audit.text;
  int unready = 0;
  for (const json& e : audit.body["events"])
    unready += e["action"] == "readiness.not_ready" &&
               e["reason"].get<std::string>().find(refused) != std::string::npos;
  EXPECT_EQ(unready, 1) << audit.body.dump(2);

  env_["DNS_TSIG_SECRET"] = LabStack::tsig_key().secret;
  ASSERT_EQ(RestartServe(), "");
  ASSERT_TRUE(WaitForRoute(true)) << Route().dump(2);
  EXPECT_EQ(Soa(), soa) << "no UPDATE that changed the zone was sent";

  bind_.reset();  // BIND stops
  ASSERT_TRUE(
      WaitForRoute(false, "preflight point-writers-at-new-owner (dns.rfc2136): DNS server " +
                              dns_server_ + " did not answer"))
      << Route().dump(2);
  ASSERT_TRUE(WaitForRoute(false, "preflight writer-name-resolves (verify.dns): DNS server " +
                                      dns_server_ + " does not answer"))
      << Route().dump(2);
  EXPECT_EQ(Ownership(), ownership) << "readiness never moves ownership";
  // The other direction's route needs the same BIND.
  EXPECT_EQ(Route("eu-central-1-to-us-east-1")["ready"], false);
}

TEST_F(ReadinessE2eTest, AStoppedTargetRegionMakesTheRouteNotReady) {
  ASSERT_TRUE(WaitForRoute(true)) << Route().dump(2);
  ASSERT_TRUE(Eventually([&] { return Ownership().size() >= 4; }));
  const auto ownership = Ownership();
  const std::string soa = Soa();

  httplib::Client admin(lab_->admin_url());
  ASSERT_TRUE(admin.Post("/lab/regions/eu-central-1/stop"));
  // The catalog preflights see it at once; the guard once the probes have marked it down.
  ASSERT_TRUE(WaitForRoute(
      false, "preflight transfer-ownership (ownership.transfer): catalog of eu-central-1"))
      << Route().dump(2);
  ASSERT_TRUE(WaitForRoute(false, "guard target_healthy: ")) << Route().dump(2);
  // The route the other way only needs us-east-1's catalog as its target: still ready, apart from
  // guards that read eu-central-1 as the region losing ownership.
  json back = Route("eu-central-1-to-us-east-1");
  for (const json& why : back["reasons"])
    EXPECT_THAT(why.get<std::string>(), ::testing::Not(HasSubstr("catalog of us-east-1")));

  ASSERT_TRUE(admin.Post("/lab/regions/eu-central-1/start"));
  ASSERT_TRUE(WaitForRoute(true)) << Route().dump(2);
  EXPECT_EQ(Ownership(), ownership) << "readiness never moves ownership";
  EXPECT_EQ(Soa(), soa) << "readiness never changes the zone";

  // The real daemon's page, with probe histograms and lag from real rounds, is what promtool
  // accepts (Debian package prometheus).
  const std::string page = Metrics();
  EXPECT_THAT(page, HasSubstr("icewarden_probe_duration_seconds_count{region=\"eu-central-1\","
                              "kind=\"catalog_config\"} "));
  EXPECT_THAT(page, HasSubstr("icewarden_replication_lag_seconds{owner=\"us-east-1\",replica=\"eu-"
                              "central-1\"} "));
  if (access("/usr/bin/promtool", X_OK) == 0) {
    std::ofstream(dir_ + "/metrics.txt") << page;
    CommandResult lint = RunCommand(
        {"/bin/sh", "-c", "/usr/bin/promtool check metrics < \"$0\"", dir_ + "/metrics.txt"});
    EXPECT_EQ(lint.exit_code, 0) << lint.out << lint.err;
    EXPECT_EQ(lint.out + lint.err, "") << page;
  }
}

}  // namespace
}  // namespace icewarden::testing
