// api.tls through the real binaries: `icewarden serve` with a certificate from a throwaway CA
// serves https:// and the CLI reaches it with --cacert (or ICEWARDEN_CACERT); without the CA,
// or over plain http, nothing is answered, and the CLI says what to pass. With
// api.tls.client_ca_file the daemon asks for a client certificate: the CLI gets in with
// --cert/--key signed by that CA, and is told to pass them when it has none.
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>

#include "tests/fakes/subprocess.h"
#include "tests/fakes/test_configs.h"
#include "tests/fakes/test_paths.h"
#include "tests/fakes/test_pki.h"

namespace icewarden {
namespace {

using namespace std::chrono_literals;
using testing::CommandResult;
using testing::IcewardenBinary;
using testing::RunCommand;
using testing::Subprocess;

class ApiTlsE2eTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!testing::HaveOpenSslCli()) GTEST_SKIP() << "openssl CLI is not installed";
    dir_ = testing::MakeTempDir("icewarden-api-tls");
    std::string e;
    ASSERT_TRUE(testing::MakeTestCa(dir_, "ca", &ca_, &e)) << e;
    ASSERT_TRUE(
        testing::MakeTestLeaf(dir_, "daemon", ca_, "IP:127.0.0.1", "serverAuth", &server_, &e))
        << e;
    ASSERT_TRUE(testing::MakeTestLeaf(dir_, "ops", ca_, "DNS:ops", "clientAuth", &client_, &e))
        << e;
    std::ofstream(dir_ + "/viewer.token") << "viewer-secret-1\n";
  }
  void TearDown() override {
    if (serve_) {
      serve_->Signal(SIGTERM);
      serve_->Wait(20s);
    }
    if (!dir_.empty()) std::filesystem::remove_all(dir_);
  }

  void Serve(const std::string& tls_extra) {
    const std::string config = dir_ + "/icewarden.yaml";
    std::ofstream(config)
        << "api:\n  listen: 127.0.0.1:0\n"
           "  tokens:\n    - {name: vera, role: viewer, token_file: viewer.token}\n"
           "  tls:\n    cert_file: " +
               server_.cert + "\n    key_file: " + server_.key + "\n" + tls_extra
        << testing::kUnreachableRegionsYaml;
    serve_ = std::make_unique<Subprocess>(
        std::vector<std::string>{IcewardenBinary(), "serve", "--config", config});
    auto line = serve_->ReadLine(30s);
    ASSERT_TRUE(line) << "serve did not start";
    const auto at = line->find("https://");
    ASSERT_NE(at, std::string::npos) << "serving over TLS says https: " << *line;
    url_ = line->substr(at, line->find(' ', at) - at);
  }

  CommandResult CliStatus(std::vector<std::string> more,
                          std::map<std::string, std::string> env = {}) {
    std::vector<std::string> args{IcewardenBinary(), "status", "--server", url_, "-o", "json"};
    args.insert(args.end(), more.begin(), more.end());
    env["ICEWARDEN_TOKEN"] = "viewer-secret-1";
    return RunCommand(args, env);
  }

  std::string dir_, url_;
  testing::TestCa ca_;
  testing::TestLeaf server_, client_;
  std::unique_ptr<Subprocess> serve_;
};

TEST_F(ApiTlsE2eTest, TheCliReachesAnHttpsDaemonByItsCa) {
  Serve("");
  CommandResult ok = CliStatus({"--cacert", ca_.cert});
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
  EXPECT_NE(ok.out.find("\"regions\""), std::string::npos) << ok.out;
  CommandResult by_env = CliStatus({}, {{"ICEWARDEN_CACERT", ca_.cert}});
  EXPECT_EQ(by_env.exit_code, 0) << by_env.err;

  CommandResult untrusted = CliStatus({});
  EXPECT_EQ(untrusted.exit_code, 1);
  EXPECT_NE(untrusted.err.find("--cacert"), std::string::npos) << untrusted.err;

  std::string plain = url_;
  plain.replace(0, 5, "http");
  CommandResult cleartext = RunCommand({IcewardenBinary(), "status", "--server", plain},
                                       {{"ICEWARDEN_TOKEN", "viewer-secret-1"}});
  EXPECT_NE(cleartext.exit_code, 0) << "a plain-HTTP request to the TLS listener is not answered";
}

TEST_F(ApiTlsE2eTest, AClientCaMakesTheDaemonAskForACertificate) {
  Serve("    client_ca_file: " + ca_.cert + "\n");
  CommandResult without = CliStatus({"--cacert", ca_.cert});
  EXPECT_EQ(without.exit_code, 1);
  EXPECT_NE(without.err.find("--cert and --key"), std::string::npos) << without.err;

  CommandResult with =
      CliStatus({"--cacert", ca_.cert, "--cert", client_.cert, "--key", client_.key});
  EXPECT_EQ(with.exit_code, 0) << with.err;

  // A certificate from another CA is refused the same way.
  testing::TestCa other;
  testing::TestLeaf stranger;
  std::string e;
  ASSERT_TRUE(testing::MakeTestCa(dir_, "other", &other, &e)) << e;
  ASSERT_TRUE(
      testing::MakeTestLeaf(dir_, "stranger", other, "DNS:stranger", "clientAuth", &stranger, &e))
      << e;
  CommandResult foreign =
      CliStatus({"--cacert", ca_.cert, "--cert", stranger.cert, "--key", stranger.key});
  EXPECT_EQ(foreign.exit_code, 1) << foreign.out;
}

TEST_F(ApiTlsE2eTest, ABadTlsSectionIsAFileLineColError) {
  const std::string config = dir_ + "/bad.yaml";
  // The client's key with the daemon's certificate.
  std::ofstream(config) << "api:\n  listen: 127.0.0.1:0\n  tls:\n    cert_file: " + server_.cert +
                               "\n    key_file: " + client_.key + "\n"
                        << testing::kUnreachableRegionsYaml;
  CommandResult r = RunCommand({IcewardenBinary(), "config", "validate", config}, {});
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.err.find(config + ":5:"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace icewarden
