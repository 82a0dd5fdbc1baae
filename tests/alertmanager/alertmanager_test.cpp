// alert.alertmanager against a real Prometheus Alertmanager started by the test (no
// clustering, a null receiver): the alert arrives with our labels and annotations, and
// sending it twice still leaves one alert.
#include <httplib.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <ctime>

#include "actions/action_kinds.h"
#include "tests/integration/actions/alertmanager_server.h"
#include "tests/unit/actions/action_test_support.h"

namespace icewarden::testing {
namespace {

using namespace std::chrono_literals;
using json = nlohmann::json;
using Outcome = ActionResult::Outcome;

class AlertmanagerTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (!AlertmanagerServer::Installed()) return;
    server_ = new AlertmanagerServer();
    ready_ = server_->WaitUntilReady(30s);
  }
  static void TearDownTestSuite() {
    delete server_;
    server_ = nullptr;
  }
  void SetUp() override {
    if (!server_)
      GTEST_SKIP() << kAlertmanagerBinary
                   << " is not installed (scripts/setup.sh installs prometheus-alertmanager)";
    ASSERT_TRUE(ready_) << "alertmanager did not become ready at " << server_->url();
    ASSERT_TRUE(registerAlertActions(registry_, TestActionEnv(SystemClock())).ok());
    action_ = registry_.FindMutable("alert.alertmanager");
  }

  // The alerts whose labels include every label in `labels`.
  static std::vector<json> Matching(const json& labels) {
    std::vector<json> out;
    for (const auto& a : server_->Alerts()) {
      bool all = true;
      for (auto it = labels.begin(); it != labels.end(); ++it)
        all = all && a["labels"].value(it.key(), "") == it.value();
      if (all) out.push_back(a);
    }
    return out;
  }

  static AlertmanagerServer* server_;
  static bool ready_;
  ActionRegistry registry_;
  Action* action_ = nullptr;
};
AlertmanagerServer* AlertmanagerTest::server_ = nullptr;
bool AlertmanagerTest::ready_ = false;

TEST_F(AlertmanagerTest, AlertArrivesWithOurLabelsAndAnnotations) {
  const json params = {{"url", server_->url()},
                       {"labels", {{"team", "data"}, {"case", "arrives"}}},
                       {"annotations", {{"summary", "failing over db.* to us-west"}}}};
  ASSERT_TRUE(action_->Validate(params).empty());
  auto r = action_->Run(params, TestContext(10s));
  ASSERT_EQ(r.outcome, Outcome::kSucceeded) << r.reason;

  auto found = Matching({{"case", "arrives"}});
  ASSERT_EQ(found.size(), 1u) << server_->Alerts().dump();
  EXPECT_EQ(found[0]["labels"], json({{"alertname", "IcewardenFailover"},
                                      {"team", "data"},
                                      {"case", "arrives"},
                                      {"failover_id", "fo-42"}}));
  EXPECT_EQ(found[0]["annotations"], json({{"summary", "failing over db.* to us-west"}}));
}

TEST_F(AlertmanagerTest, SendingTwiceLeavesOneAlert) {
  const json params = {{"url", server_->url() + "/"},
                       {"labels", {{"alertname", "IcewardenTwice"}, {"case", "twice"}}},
                       {"ends_in", "1h"}};
  auto first = action_->Run(params, TestContext(10s));
  ASSERT_TRUE(first.ok()) << first.reason;
  auto second = action_->Run(params, TestContext(10s));
  ASSERT_TRUE(second.ok()) << second.reason;
  auto found = Matching({{"alertname", "IcewardenTwice"}, {"case", "twice"}});
  ASSERT_EQ(found.size(), 1u) << server_->Alerts().dump();
  // ends_in set endsAt an hour after startsAt (Alertmanager's own default would be its
  // resolve_timeout, 5m).
  auto seconds = [](const std::string& rfc3339) {
    std::tm tm{};
    EXPECT_NE(strptime(rfc3339.c_str(), "%Y-%m-%dT%H:%M:%S", &tm), nullptr) << rfc3339;
    return static_cast<long long>(timegm(&tm));
  };
  EXPECT_NEAR(seconds(found[0].value("endsAt", "")) - seconds(found[0].value("startsAt", "")), 3600,
              60)
      << found[0].dump();
}

}  // namespace
}  // namespace icewarden::testing
