// GatewayE2eTest: the whole lab stack (tests/e2e/lab_stack.h) with three real `icewarden
// gateway` processes in front of its catalogs: gw-us and gw-eu, through which each region's
// workload writes (so that a quiet window on the old owner holds while they keep writing: the
// gateways refuse what would have gone there), and gw-us-stale, which may only reach
// us-east-1, like an engine's job pinned to that region. Failovers run the runbook in
// options_.failover_runbook (examples/runbooks/gateway-failover.yaml unless a test changes it
// in its constructor).
#pragma once

#include <algorithm>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "tests/e2e/failover_e2e_fixture.h"
#include "tests/fakes/free_port.h"

namespace icewarden::testing {

class GatewayE2eTest : public FailoverE2eTest {
 protected:
  static constexpr const char* kGateways[] = {"gw-us", "gw-eu", "gw-us-stale"};

  GatewayE2eTest() {
    options_.failover_runbook = "gateway-failover.yaml";
    options_.workload_interval_ms = 300;
    for (const char* name : kGateways) ports_[name] = FreeLoopbackPort();
    options_.lab_flags = {"--workload-via", std::string(kLabUs) + "=" + Gateway("gw-us"),
                          "--workload-via", std::string(kLabEu) + "=" + Gateway("gw-eu")};
    options_.extra_yaml =
        "gateways:\n"
        "  - {name: gw-us, region: us-east-1, listen: 127.0.0.1:" +
        std::to_string(ports_["gw-us"]) +
        ", store_poll: 10ms}\n"
        "  - {name: gw-eu, region: eu-central-1, listen: 127.0.0.1:" +
        std::to_string(ports_["gw-eu"]) +
        ", store_poll: 10ms}\n"
        "  - {name: gw-us-stale, region: us-east-1, forward_to: [us-east-1], listen: 127.0.0.1:" +
        std::to_string(ports_["gw-us-stale"]) + "}\n";
  }

  void SetUp() override {
    FailoverE2eTest::SetUp();
    if (HasFatalFailure() || IsSkipped()) return;
    for (const char* name : kGateways) StartGateway(name);
  }

  void TearDown() override {
    gateways_.clear();
    FailoverE2eTest::TearDown();
  }

  void StartGateway(const std::string& name) {
    gateways_[name] = std::make_unique<Subprocess>(
        std::vector<std::string>{IcewardenBinary(), "gateway", "--config", stack_->config_path(),
                                 "--name", name},
        stack_->ServeEnv());
    auto line = gateways_[name]->ReadLine(15s);
    ASSERT_TRUE(line) << name << " printed nothing";
    ASSERT_NE(line->find(Gateway(name)), std::string::npos) << *line;
  }

  std::string Gateway(const std::string& name) {
    return "http://127.0.0.1:" + std::to_string(ports_[name]);
  }

  // The snapshot ids (and snapshot-log ids) of a table in a region's catalog, read straight.
  std::pair<std::vector<long long>, std::vector<long long>> History(const std::string& region,
                                                                    const std::string& ns,
                                                                    const std::string& table) {
    httplib::Client c(stack_->region_url(region));
    auto got = c.Get("/v1/lab/namespaces/" + ns + "/tables/" + table);
    std::pair<std::vector<long long>, std::vector<long long>> out;
    if (!got || got->status != 200) return out;
    json m = json::parse(got->body)["metadata"];
    for (const json& s : m.value("snapshots", json::array()))
      out.first.push_back(s["snapshot-id"].get<long long>());
    for (const json& s : m.value("snapshot-log", json::array()))
      out.second.push_back(s["snapshot-id"].get<long long>());
    return out;
  }

  static long long Count(const std::vector<long long>& ids, long long id) {
    return std::count(ids.begin(), ids.end(), id);
  }

  std::map<std::string, int> ports_;
  std::map<std::string, std::unique_ptr<Subprocess>> gateways_;
};

}  // namespace icewarden::testing
