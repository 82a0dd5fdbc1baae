// A config's failover routes name runbooks that are read and validated when the daemon
// starts and by `config validate`: a broken runbook refuses both with its FILE:LINE:COL,
// so it is never discovered in the middle of a failover.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "tests/fakes/subprocess.h"
#include "tests/fakes/test_paths.h"

namespace icewarden::testing {
namespace {

using ::testing::HasSubstr;

class FailoverRoutesCliTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = MakeTempDir("icewarden-routes"); }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // A config with one route to `runbook` (relative to the config's folder).
  std::string Config(const std::string& runbook) {
    const std::string path = dir_ + "/icewarden.yaml";
    std::ofstream(path) << "api:\n  listen: 127.0.0.1:0\n"
                           "state:\n  path: state.db\n"
                           "regions:\n"
                           "  - {name: us-east-1, catalog_uri: http://127.0.0.1:9}\n"
                           "  - {name: eu-central-1, catalog_uri: http://127.0.0.1:9}\n"
                           "ownership:\n  default_owner: us-east-1\n"
                           "failovers:\n"
                           "  - name: us-to-eu\n    from: us-east-1\n    to: eu-central-1\n"
                           "    runbook: "
                        << runbook << "\n";
    return path;
  }

  std::string dir_;
};

TEST_F(FailoverRoutesCliTest, ABrokenRunbookRefusesValidateAndServeWithItsPosition) {
  std::ofstream(dir_ + "/broken.yaml") << "name: broken\n"
                                          "promote:\n"
                                          "  - id: move\n"
                                          "    action: ownership.transferr\n";
  const std::string config = Config("broken.yaml");
  CommandResult validate = RunCommand({IcewardenBinary(), "config", "validate", config});
  EXPECT_EQ(validate.exit_code, 2) << validate.out << validate.err;
  EXPECT_THAT(validate.err, HasSubstr(dir_ + "/broken.yaml:4:13: "));
  EXPECT_THAT(validate.err, HasSubstr("ownership.transfer"));  // the did-you-mean
  CommandResult serve =
      RunCommand({IcewardenBinary(), "serve", "--config", config}, {}, std::chrono::seconds(20));
  EXPECT_EQ(serve.exit_code, 2) << serve.out << serve.err;
  EXPECT_THAT(serve.err, HasSubstr(dir_ + "/broken.yaml:4:13: "));
  EXPECT_FALSE(std::filesystem::exists(dir_ + "/state.db")) << "nothing was started";
}

TEST_F(FailoverRoutesCliTest, AMissingRunbookIsAnErrorAtTheRoute) {
  const std::string config = Config("nowhere.yaml");
  CommandResult validate = RunCommand({IcewardenBinary(), "config", "validate", config});
  EXPECT_EQ(validate.exit_code, 2);
  EXPECT_THAT(validate.err,
              HasSubstr(config + ":11:5: failovers route 'us-to-eu': cannot read runbook"));
}

TEST_F(FailoverRoutesCliTest, AValidRouteIsCounted) {
  const std::string config = Config(SourceDir() + "/examples/runbooks/lab-failover.yaml");
  CommandResult validate = RunCommand({IcewardenBinary(), "config", "validate", config});
  EXPECT_EQ(validate.exit_code, 0) << validate.err;
  EXPECT_THAT(validate.out, HasSubstr("1 failover routes"));
}

}  // namespace
}  // namespace icewarden::testing
