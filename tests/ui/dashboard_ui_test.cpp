// The dashboard in a real browser (label ui): the lab stack (BIND, Alertmanager, the lab's
// catalogs, serve) with Playwright driving Debian's chromium through tests/ui/dashboard.mjs:
// sign in, a region going unreachable, propose, approve and confirm from the page, the
// failover completing without a reload, its report, a viewer's missing buttons and refused
// forgery, a token that stops working, and axe-core on every page. Screenshots and the
// accessibility results go to build/tests/ui-artifacts/.
#include <gtest/gtest.h>

#include <filesystem>

#include "tests/e2e/failover_e2e_fixture.h"

namespace icewarden::testing {
namespace {

constexpr const char* kChromium = "/usr/bin/chromium";

class DashboardUiTest : public FailoverE2eTest {
 protected:
  DashboardUiTest() {
    // The stopped region must stay within the RPO guard's staleness while people click, and
    // its silence must not confirm fencing before the approver does it from the page.
    options_.max_staleness = "5m";
    options_.unreachable_for = "10m";
    // A drill to run from the drills page.
    options_.extra_yaml =
        "drills:\n"
        "  - {name: lab-weekly-plan, route: us-east-1-to-eu-central-1, mode: plan, "
        "rto_target: 5m}\n";
  }
};

TEST_F(DashboardUiTest, OnCallDrivesAFailoverFromThePageInChromium) {
  ASSERT_TRUE(std::filesystem::exists(kChromium))
      << kChromium << " is missing: scripts/setup.sh installs Debian's chromium";
  const std::string script = SourceDir() + "/tests/ui/dashboard.mjs";
  ASSERT_TRUE(std::filesystem::exists(SourceDir() + "/tests/ui/node_modules/playwright-core"))
      << "scripts/setup.sh runs npm ci in tests/ui";
  WaitUntilSettled();
  const std::string artifacts = (std::filesystem::current_path() / "ui-artifacts").string();
  std::map<std::string, std::string> env = {
      {"ICEWARDEN_URL", stack_->serve_url()},
      {"LAB_ADMIN_URL", stack_->admin_url()},
      {"UI_ARTIFACTS", artifacts},
      {"CHROMIUM", kChromium},
  };
  for (const char* role : {"viewer", "operator", "approver"})
    env[LabStack::TokenVariable(role)] = stack_->token(role);
  CommandResult r = RunCommand({"/usr/bin/env", "node", script}, env, std::chrono::seconds(240));
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("ui: all passed"), std::string::npos) << r.out << r.err;
  std::cout << r.out;
  // What the browser did is the product's record too.
  for (const json& f : stack_->Api("GET", "/api/v1/failovers", "", "viewer").body["failovers"]) {
    EXPECT_EQ(f["phase"], "completed") << f.dump();
    EXPECT_EQ(f["proposed_by"], "operator");
    ASSERT_EQ(f["approvals"].size(), 1u);
    EXPECT_EQ(f["approvals"][0]["by"], "approver");
    EXPECT_EQ(f["fencing"]["by"], "approver");
  }
  EXPECT_EQ(Ownership()["sales.orders"].first, kLabEu);
  EXPECT_TRUE(std::filesystem::exists(artifacts + "/07-failover-completed.png"));
}

}  // namespace
}  // namespace icewarden::testing
