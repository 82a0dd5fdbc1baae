// The lab's whole alerting loop with the real servers, as scripts/run-lab.sh runs it but on
// ephemeral loopback ports: the lab's catalogs and `icewarden serve` (tests/e2e/lab_stack.h)
// with examples/local.yaml's webhooks: section, the blackbox exporter probing each catalog,
// Prometheus scraping serve's /metrics and evaluating IcebergCatalogDown, and Alertmanager
// posting it to serve's webhook. The Prometheus, blackbox and Alertmanager configs are the
// lab's own files in examples/alerting/, with the test's addresses put in.
//
// A stopped catalog must end in a failover proposal whose reason quotes the alert and links
// Prometheus's generatorURL; the catalog started again resolves the alert, which withdraws
// the proposal nobody approved, audited as the webhook's doing.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "tests/e2e/lab_stack.h"
#include "tests/e2e_alertmanager/prometheus_servers.h"
#include "tests/integration/actions/loopback_ports.h"

namespace icewarden::testing {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;

constexpr const char* kWebhookToken = "e2e-alerting-loop-webhook-token";

// examples/local.yaml from its top-level `webhooks:` key to the next top-level key: the
// rules the lab turns alerts into proposals with. Its routes' names are LabStack's too.
std::string LocalYamlWebhooks() {
  std::ifstream in(SourceDir() + "/examples/local.yaml");
  std::string line, out;
  bool in_section = false;
  while (std::getline(in, line)) {
    const bool top_level = !line.empty() && line[0] != ' ' && line[0] != '#';
    if (top_level) in_section = line.rfind("webhooks:", 0) == 0;
    if (in_section) out += line + "\n";
  }
  return out;
}

// "http://127.0.0.1:41234" -> "127.0.0.1:41234"
std::string HostPort(const std::string& url) {
  const std::string scheme = "http://";
  return url.rfind(scheme, 0) == 0 ? url.substr(scheme.size()) : url;
}

class AlertingLoopE2eTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // Nothing is skipped: without the servers this test cannot say anything.
    const std::string missing = MissingAlertingBinaries();
    ASSERT_EQ(missing, "");
    const std::string webhooks = LocalYamlWebhooks();
    ASSERT_NE(webhooks.find("rules:"), std::string::npos)
        << "examples/local.yaml has no webhook rules";
    LabStackOptions options;
    options.extra_yaml = webhooks;
    options.extra_env = {{"ICEWARDEN_WEBHOOK_TOKEN", kWebhookToken},
                         {"CI_WEBHOOK_SECRET", "e2e-alerting-loop-ci-secret"}};
    stack_ = std::make_unique<LabStack>(options);
    ASSERT_EQ(stack_->Start(), "");
    dir_ = stack_->dir() + "/alerting";
    std::filesystem::create_directories(dir_);

    // The lab's fixed addresses (scripts/run-lab.sh) -> this stack's; Prometheus's own
    // (19090) is only in comments and the external URL, which the server class sets.
    const uint16_t blackbox_port = FreeTcpPort();
    const uint16_t prometheus_port = FreeTcpPort();
    ASSERT_NE(blackbox_port, 0);
    ASSERT_NE(prometheus_port, 0);
    const std::map<std::string, std::string> addresses{
        {"127.0.0.1:8480", HostPort(stack_->serve_url())},
        {"127.0.0.1:18181", HostPort(stack_->region_url(kLabUs))},
        {"127.0.0.1:18182", HostPort(stack_->region_url(kLabEu))},
        {"127.0.0.1:19093", HostPort(stack_->alertmanager_url())},
        {"127.0.0.1:19115", "127.0.0.1:" + std::to_string(blackbox_port)},
        {"127.0.0.1:19090", "127.0.0.1:" + std::to_string(prometheus_port)}};
    std::string error;
    for (const char* name : {"prometheus.yml", "rules.yml", "blackbox.yml", "alertmanager.yml"}) {
      const std::string text = LabAlertingFile(name, addresses, &error);
      ASSERT_EQ(error, "");
      std::ofstream(dir_ + "/" + name) << text;
    }

    // Alertmanager: the lab's routing, with the token file beside its config as run-lab.sh
    // writes it.
    std::ofstream(stack_->alertmanager().dir() + "/webhook-token") << kWebhookToken;
    std::ifstream am(dir_ + "/alertmanager.yml");
    std::stringstream am_yaml;
    am_yaml << am.rdbuf();
    ASSERT_TRUE(stack_->alertmanager().Reconfigure(am_yaml.str()))
        << "Alertmanager refused examples/alerting/alertmanager.yml";

    blackbox_ = std::make_unique<BlackboxExporter>(dir_, dir_ + "/blackbox.yml", blackbox_port);
    ASSERT_TRUE(blackbox_->WaitUntilReady(20s)) << "blackbox exporter:\n" << blackbox_->Log();
    prometheus_ =
        std::make_unique<PrometheusServer>(dir_, dir_ + "/prometheus.yml", prometheus_port);
    ASSERT_TRUE(prometheus_->WaitUntilReady(30s)) << "Prometheus:\n" << prometheus_->Log();
  }

  void TearDown() override {
    prometheus_.reset();
    blackbox_.reset();
    stack_.reset();
  }

  // The value of the single series `promql` selects, or "" while there is none.
  std::string Value(const std::string& promql) const {
    const json result = prometheus_->Query(promql);
    if (!result.is_array() || result.size() != 1) return "";
    return result[0]["value"][1].get<std::string>();
  }

  json Failovers() const { return stack_->Api("GET", "/api/v1/failovers", "", "viewer").body; }

  // Alertmanager's IcebergCatalogDown for `region`, as it holds it (with its generatorURL).
  json AlertmanagerAlert(const std::string& region) const {
    for (const json& a : stack_->AlertmanagerAlerts())
      if (a["labels"].value("alertname", "") == "IcebergCatalogDown" &&
          a["labels"].value("region", "") == region)
        return a;
    return nullptr;
  }

  std::string Logs() const {
    std::ifstream serve(stack_->serve_log());
    return "serve:\n" + std::string(std::istreambuf_iterator<char>(serve), {}) + "\nPrometheus:\n" +
           prometheus_->Log();
  }

  std::unique_ptr<LabStack> stack_;
  std::string dir_;
  std::unique_ptr<BlackboxExporter> blackbox_;
  std::unique_ptr<PrometheusServer> prometheus_;
};

TEST_F(AlertingLoopE2eTest, AStoppedCatalogProposesAFailoverAndItsReturnWithdrawsTheProposal) {
  // Before the fault: Prometheus scrapes serve's /metrics and the blackbox probes of both
  // catalogs succeed, icewarden finds both regions healthy and has measured lag (the RPO
  // guard needs it), and nothing is proposed.
  ASSERT_TRUE(Eventually([&] {
    return Value("up{job=\"icewarden\"}") == "1" &&
           Value("probe_success{job=\"iceberg-catalog\",region=\"us-east-1\"}") == "1" &&
           Value("probe_success{job=\"iceberg-catalog\",region=\"eu-central-1\"}") == "1";
  })) << "Prometheus does not see serve and both catalogs; targets: "
      << prometheus_->GetJson("/api/v1/targets").dump();
  EXPECT_NE(Value("icewarden_build_info"), "") << "serve's own metrics are not scraped";
  ASSERT_TRUE(Eventually([&] {
    const json regions = stack_->Api("GET", "/api/v1/regions", "", "viewer").body;
    if (!regions.contains("regions") || regions["regions"].size() != 2) return false;
    for (const auto& r : regions["regions"])
      if (r["health"] != "healthy") return false;
    return stack_->Api("GET", "/api/v1/lag", "", "viewer").status == 200;
  }));
  EXPECT_TRUE(prometheus_->Alerts().empty()) << prometheus_->Alerts().dump();
  ASSERT_TRUE(Failovers()["failovers"].empty());

  // us-east-1's catalog goes down like a killed process.
  ASSERT_EQ(stack_->LabAdmin("POST", "/lab/regions/us-east-1/stop").status, 200);

  json proposal;
  ASSERT_TRUE(Eventually([&] {
    const json list = Failovers();  // kept: a range-for over a temporary's member dangles
    for (const auto& f : list["failovers"])
      if (f["proposed_by"] == "webhook:alertmanager") proposal = f;
    return !proposal.is_null();
  })) << "no proposal 30 s after the stop\n"
      << Logs();
  EXPECT_EQ(proposal["phase"], "proposed");
  EXPECT_EQ(proposal["from"], kLabUs);
  EXPECT_EQ(proposal["to"], kLabEu);
  EXPECT_EQ(proposal["scope"], "owner:us-east-1");

  // Prometheus fired it with the region's label, and Alertmanager holds it with the link
  // back to Prometheus that the proposal quotes.
  json fired;
  for (const json& a : prometheus_->Alerts())
    if (a["labels"].value("alertname", "") == "IcebergCatalogDown") fired = a;
  ASSERT_FALSE(fired.is_null()) << prometheus_->Alerts().dump();
  EXPECT_EQ(fired["state"], "firing");
  EXPECT_EQ(fired["labels"]["region"], kLabUs);
  EXPECT_EQ(fired["labels"]["severity"], "critical");
  const json held = AlertmanagerAlert(kLabUs);
  ASSERT_FALSE(held.is_null()) << stack_->AlertmanagerAlerts().dump();
  const std::string generator_url = held["generatorURL"];
  EXPECT_EQ(generator_url.rfind(prometheus_->url() + "/graph?g0.expr=", 0), 0u) << generator_url;
  const std::string reason = proposal["reason"];
  EXPECT_NE(reason.find("Alertmanager alert IcebergCatalogDown firing since "), std::string::npos)
      << reason;
  EXPECT_NE(reason.find("catalog us-east-1 does not answer"), std::string::npos) << reason;
  EXPECT_NE(reason.find("(" + generator_url + ")"), std::string::npos) << reason;
  EXPECT_TRUE(AlertmanagerAlert(kLabEu).is_null()) << "eu-central-1 answers; no alert for it";

  // What an operator sees: `icewarden failover list` with the proposal and its quote.
  const std::string id = proposal["id"];
  auto listed = stack_->Cli({"failover", "list"}, "viewer");
  ASSERT_EQ(listed.exit_code, 0) << listed.err;
  EXPECT_NE(listed.out.find(id), std::string::npos) << listed.out;
  EXPECT_NE(listed.out.find("IcebergCatalogDown"), std::string::npos) << listed.out;

  // The catalog is back: Prometheus resolves the alert, Alertmanager posts it resolved, and
  // the proposal nobody approved is withdrawn.
  ASSERT_EQ(stack_->LabAdmin("POST", "/lab/regions/us-east-1/start").status, 200);
  json withdrawn;
  ASSERT_TRUE(Eventually([&] {
    withdrawn = stack_->Api("GET", "/api/v1/failovers/" + id, "", "viewer").body;
    return withdrawn["phase"] == "aborted";
  })) << "the proposal was not withdrawn 30 s after the start: "
      << withdrawn.dump() << "\n"
      << Logs();
  EXPECT_NE(withdrawn["last_reason"].get<std::string>().find(
                "withdrawn: the alert that opened it resolved"),
            std::string::npos)
      << withdrawn.dump();
  EXPECT_EQ(Failovers()["failovers"].size(), 1u) << "Alertmanager's deliveries proposed twice";

  // Audited: the withdrawal, by the webhook, naming the resolved alert.
  const json audit = stack_->Api("GET", "/api/v1/audit?target=" + id, "", "admin").body;
  json abort;
  for (const json& e : audit["events"])
    if (e["action"] == "failover.abort") abort = e;
  ASSERT_FALSE(abort.is_null()) << audit.dump();
  EXPECT_EQ(abort["actor"], "webhook:alertmanager");
  EXPECT_NE(abort["reason"].get<std::string>().find("IcebergCatalogDown"), std::string::npos)
      << abort.dump();
  EXPECT_NE(abort["reason"].get<std::string>().find("resolved"), std::string::npos) << abort.dump();
}

}  // namespace
}  // namespace icewarden::testing
