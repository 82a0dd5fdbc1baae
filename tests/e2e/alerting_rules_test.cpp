// examples/alerting/rules.yml through the real promtool (Debian package prometheus): the
// rules load, and the unit tests of rules_test.yml pass (the pause-overdue alert fires from
// the first overdue sample, names the scope, and ends with the resume).
#include <gtest/gtest.h>

#include <filesystem>

#include "tests/fakes/subprocess.h"
#include "tests/fakes/test_paths.h"

namespace icewarden {
namespace {

using testing::RunCommand;

TEST(AlertingRulesTest, TheExampleRulesLoadAndTheirUnitTestsPass) {
  const std::string dir = testing::SourceDir() + "/examples/alerting";
  ASSERT_TRUE(std::filesystem::exists("/usr/bin/promtool")) << "scripts/setup.sh installs it";
  auto check = RunCommand({"/usr/bin/promtool", "check", "rules", dir + "/rules.yml"});
  EXPECT_EQ(check.exit_code, 0) << check.out << check.err;
  // promtool resolves rule_files against the current folder.
  auto tested = RunCommand(
      {"/bin/sh", "-c", "cd '" + dir + "' && /usr/bin/promtool test rules rules_test.yml"});
  EXPECT_EQ(tested.exit_code, 0) << tested.out << tested.err;
  EXPECT_NE(tested.out.find("SUCCESS"), std::string::npos) << tested.out;
}

}  // namespace
}  // namespace icewarden
