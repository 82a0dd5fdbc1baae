// End to end: the real `icewarden serve` on an ephemeral port, read back through the real
// CLI, as an operator would use them.
#include <gtest/gtest.h>
#include <signal.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "state/sqlite_store.h"
#include "tests/fakes/subprocess.h"
#include "tests/fakes/test_paths.h"

namespace icewarden {
namespace {

using nlohmann::json;
using testing::CommandResult;
using testing::IcewardenBinary;
using testing::RunCommand;
using testing::Subprocess;

void WriteFile(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

class ServeCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::MakeTempDir("icewarden-e2e");
    WriteFile(dir_ + "/viewer.token", "viewer-secret-1\n");
    WriteFile(dir_ + "/operator.token", "operator-secret-2\n");
    config_ = dir_ + "/icewarden.yaml";
    WriteFile(config_, R"(api:
  listen: 127.0.0.1:0
  tokens:
    - name: vera
      role: viewer
      token_file: viewer.token
    - name: otto
      role: operator
      token_file: operator.token
state:
  path: state.db
regions:
  - name: us-east-1
    catalog_uri: http://127.0.0.1:9/catalog
  - name: eu-central-1
    catalog_uri: http://127.0.0.1:9/catalog
ownership:
  default_owner: us-east-1
  rules:
    - match: "eu.*"
      owner: eu-central-1
)");
    SeedStore();
  }

  void TearDown() override {
    if (server_) {
      server_->Signal(SIGKILL);
      server_->Wait(std::chrono::seconds(5));
    }
    std::filesystem::remove_all(dir_);
  }

  // What an earlier run of the daemon would have left: owned tables and one failover.
  void SeedStore() {
    auto store = OpenSqliteStore({dir_ + "/state.db"}, SystemClock());
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    std::vector<OwnershipChange> changes;
    for (int i = 0; i < 30; ++i)
      changes.push_back(
          {*TableIdent::Parse("sales.t" + std::to_string(100 + i)), 0, "us-east-1", ""});
    changes.push_back({*TableIdent::Parse("eu.orders"), 0, "eu-central-1", ""});
    AuditEvent why{0, 0, "test", "seed", "ownership.set", "seed", "initial claim", "{}"};
    ASSERT_TRUE((*store)->CompareAndSetOwnership(changes, why).ok());
    Failover f;
    f.id = "fo-seeded-1";
    f.scope = "namespace:eu.*";
    f.from = "eu-central-1";
    f.to = "us-east-1";
    f.proposed_by = "otto";
    f.reason = "drill";
    ASSERT_TRUE(
        (*store)
            ->CreateFailover(f, {0, 0, "otto", "cli", "failover.propose", f.id, "drill", "{}"})
            .ok());
  }

  void StartServer() {
    server_ = std::make_unique<Subprocess>(
        std::vector<std::string>{IcewardenBinary(), "serve", "--config", config_});
    auto line = server_->ReadLine(std::chrono::seconds(20));
    ASSERT_TRUE(line.has_value()) << "serve printed nothing";
    auto at = line->find("http://");
    ASSERT_NE(at, std::string::npos) << *line;
    url_ = line->substr(at, line->find(' ', at) - at);
  }

  CommandResult Cli(std::vector<std::string> args, const std::string& token) {
    args.insert(args.begin(), IcewardenBinary());
    args.push_back("--server");
    args.push_back(url_);
    std::map<std::string, std::string> env;
    if (!token.empty()) env["ICEWARDEN_TOKEN"] = token;
    return RunCommand(args, env);
  }

  std::string dir_, config_, url_;
  std::unique_ptr<Subprocess> server_;
};

TEST_F(ServeCliTest, StatusOwnershipAndFailoversReadBackThroughTheCli) {
  StartServer();

  auto status = Cli({"status", "--output", "json"}, "viewer-secret-1");
  ASSERT_EQ(status.exit_code, 0) << status.err;
  json s = json::parse(status.out);
  ASSERT_EQ(s["regions"].size(), 2u);
  EXPECT_EQ(s["regions"][0]["name"], "eu-central-1");
  // Never probed yet: degraded, not healthy, and the reason says so.
  EXPECT_EQ(s["regions"][0]["health"], "degraded");
  EXPECT_NE(s["regions"][0]["reason"].get<std::string>().find("awaiting"), std::string::npos);
  ASSERT_EQ(s["active_failovers"].size(), 1u);
  EXPECT_EQ(s["active_failovers"][0]["id"], "fo-seeded-1");

  auto table = Cli({"status"}, "viewer-secret-1");
  ASSERT_EQ(table.exit_code, 0) << table.err;
  EXPECT_NE(table.out.find("REGION"), std::string::npos);
  EXPECT_NE(table.out.find("us-east-1"), std::string::npos);

  // 31 tables read back page by page (the CLI asks for pages of at most 1000, so use a
  // small --limit to see the limit honoured too).
  auto owners = Cli({"ownership", "list", "--output", "json"}, "viewer-secret-1");
  ASSERT_EQ(owners.exit_code, 0) << owners.err;
  json o = json::parse(owners.out);
  ASSERT_EQ(o["tables"].size(), 31u);
  EXPECT_EQ(o["tables"][0]["table"], "eu.orders");
  EXPECT_EQ(o["tables"][0]["owner"], "eu-central-1");
  EXPECT_EQ(o["tables"][0]["epoch"], 1);
  auto limited = Cli({"ownership", "list", "--limit", "5", "--owner", "us-east-1", "-o", "json"},
                     "viewer-secret-1");
  ASSERT_EQ(limited.exit_code, 0) << limited.err;
  EXPECT_EQ(json::parse(limited.out)["tables"].size(), 5u);

  auto list = Cli({"failover", "list"}, "viewer-secret-1");
  ASSERT_EQ(list.exit_code, 0) << list.err;
  EXPECT_NE(list.out.find("fo-seeded-1"), std::string::npos);
  EXPECT_NE(list.out.find("proposed"), std::string::npos);

  auto show = Cli({"failover", "show", "fo-seeded-1"}, "viewer-secret-1");
  ASSERT_EQ(show.exit_code, 0) << show.err;
  EXPECT_NE(show.out.find("phase: proposed"), std::string::npos) << show.out;
  EXPECT_NE(show.out.find("fencing: not confirmed"), std::string::npos) << show.out;

  auto missing = Cli({"failover", "show", "fo-nope"}, "viewer-secret-1");
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_NE(missing.err.find("404"), std::string::npos) << missing.err;

  // The audit log has the start-up decisions: both regions recorded from the config.
  auto audit = Cli({"audit", "list", "-o", "json"}, "operator-secret-2");
  ASSERT_EQ(audit.exit_code, 0) << audit.err;
  int recorded = 0;
  const json events = json::parse(audit.out)["events"];
  for (const auto& e : events) recorded += e["action"] == "region.record";
  EXPECT_EQ(recorded, 2);
}

TEST_F(ServeCliTest, MissingWrongOrUnderprivilegedTokensExitThree) {
  StartServer();
  auto none = Cli({"status"}, "");
  EXPECT_EQ(none.exit_code, 3);
  EXPECT_NE(none.err.find("401"), std::string::npos) << none.err;
  auto wrong = Cli({"status"}, "not-a-token");
  EXPECT_EQ(wrong.exit_code, 3);
  auto viewer_audit = Cli({"audit", "list"}, "viewer-secret-1");
  EXPECT_EQ(viewer_audit.exit_code, 3);
  EXPECT_NE(viewer_audit.err.find("403"), std::string::npos) << viewer_audit.err;
}

TEST_F(ServeCliTest, ATokenConfiguredAsItsHashLetsTheTokenInButNotTheHash) {
  // The operator hashes the token as the docs say, and the config holds only the hash.
  auto hashed = RunCommand({"/bin/sh", "-c", "printf %s \"$T\" | \"$BIN\" token hash"},
                           {{"T", "hashed-operator-secret-3"}, {"BIN", IcewardenBinary()}});
  ASSERT_EQ(hashed.exit_code, 0) << hashed.err;
  auto sum = RunCommand({"/bin/sh", "-c", "printf %s \"$T\" | sha256sum"},
                        {{"T", "hashed-operator-secret-3"}});
  ASSERT_EQ(sum.exit_code, 0) << sum.err;
  const std::string hash = hashed.out.substr(0, hashed.out.find('\n'));
  EXPECT_EQ(hash, sum.out.substr(0, 64)) << "the same digest as sha256sum";
  auto empty = RunCommand({"/bin/sh", "-c", "printf '' | \"$BIN\" token hash"},
                          {{"BIN", IcewardenBinary()}});
  EXPECT_EQ(empty.exit_code, 2);
  EXPECT_NE(empty.err.find("no token on stdin"), std::string::npos) << empty.err;
  // One that no Authorization header could carry is refused rather than hashed.
  auto huge =
      RunCommand({"/bin/sh", "-c", "head -c 5000 /dev/zero | tr '\\0' x | \"$BIN\" token hash"},
                 {{"BIN", IcewardenBinary()}});
  EXPECT_EQ(huge.exit_code, 2) << huge.out;
  EXPECT_NE(huge.err.find("could never be sent"), std::string::npos) << huge.err;

  std::ifstream in(config_);
  std::string text((std::istreambuf_iterator<char>(in)), {});
  const std::string at = "  tokens:\n";
  text.replace(text.find(at), at.size(),
               at + "    - {name: hana, role: operator, token_sha256: " + hash + "}\n");
  WriteFile(config_, text);
  StartServer();
  auto status = Cli({"status", "--output", "json"}, "hashed-operator-secret-3");
  EXPECT_EQ(status.exit_code, 0) << status.err;
  auto by_hash = Cli({"status"}, hash);
  EXPECT_EQ(by_hash.exit_code, 3) << "the hash itself is no credential: " << by_hash.out;
  // The other tokens, given as files, still work beside it.
  EXPECT_EQ(Cli({"status"}, "viewer-secret-1").exit_code, 0);
}

TEST_F(ServeCliTest, SigtermStopsTheDaemonCleanlyAndStateSurvivesARestart) {
  StartServer();
  server_->Signal(SIGTERM);
  auto code = server_->Wait(std::chrono::seconds(10));
  ASSERT_TRUE(code.has_value()) << "serve did not stop on SIGTERM";
  EXPECT_EQ(*code, 0);
  server_.reset();

  StartServer();
  auto owners = Cli({"ownership", "list", "-o", "json"}, "viewer-secret-1");
  ASSERT_EQ(owners.exit_code, 0) << owners.err;
  EXPECT_EQ(json::parse(owners.out)["tables"].size(), 31u);
  // Regions are recorded once, not again on every start.
  auto audit = Cli({"audit", "list", "-o", "json"}, "operator-secret-2");
  int recorded = 0;
  const json events = json::parse(audit.out)["events"];
  for (const auto& e : events) recorded += e["action"] == "region.record";
  EXPECT_EQ(recorded, 2);
}

TEST_F(ServeCliTest, UnreachableServerExitsOneAndSaysHowToFix) {
  url_ = "http://127.0.0.1:1";
  auto r = Cli({"status"}, "viewer-secret-1");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("is `icewarden serve` running?"), std::string::npos) << r.err;
}

TEST(ConfigValidateCli, ReportsEveryErrorWithItsPositionAndExitsTwo) {
  std::string dir = testing::MakeTempDir("icewarden-validate");
  std::string path = dir + "/bad.yaml";
  WriteFile(path, "regions:\n  - name: us-east-1\n    catalog_url: http://x\n");
  auto r = RunCommand({IcewardenBinary(), "config", "validate", path});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find(path + ":3:5: "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("did you mean 'catalog_uri'"), std::string::npos) << r.err;
  EXPECT_TRUE(r.out.empty());

  auto good = RunCommand(
      {IcewardenBinary(), "config", "validate", testing::SourceDir() + "/examples/local.yaml"},
      {{"ICEWARDEN_VIEWER_TOKEN", "a"},
       {"ICEWARDEN_OPERATOR_TOKEN", "b"},
       {"ICEWARDEN_APPROVER_TOKEN", "c"},
       {"ICEWARDEN_ADMIN_TOKEN", "d"}});
  EXPECT_EQ(good.exit_code, 0) << good.err;
  EXPECT_NE(good.out.find(": ok"), std::string::npos);
  std::filesystem::remove_all(dir);
}

// Regression: `config validate examples/local.yaml` exited 2 unless all four token variables
// were set, so a config could not be checked in CI. Empty values count as unset, so the
// test does not depend on what the calling shell exported.
TEST(ConfigValidateCli, MissingSecretsWarnExitZeroAndFailOnlyWithStrictOrServe) {
  const std::string path = testing::SourceDir() + "/examples/local.yaml";
  const std::map<std::string, std::string> no_tokens = {
      {"ICEWARDEN_VIEWER_TOKEN", ""},   {"ICEWARDEN_OPERATOR_TOKEN", ""},
      {"ICEWARDEN_APPROVER_TOKEN", ""}, {"ICEWARDEN_ADMIN_TOKEN", ""},
      {"ICEWARDEN_WEBHOOK_TOKEN", ""},  {"CI_WEBHOOK_SECRET", ""}};
  // The line that names the viewer's token, wherever comments above it put it.
  std::string at;
  {
    std::ifstream in(path);
    std::string line;
    for (int n = 1; std::getline(in, line); ++n)
      if (line.find("token_env: ICEWARDEN_VIEWER_TOKEN") != std::string::npos) {
        at = path + ":" + std::to_string(n) + ":";
        break;
      }
  }
  ASSERT_FALSE(at.empty());
  auto lenient = RunCommand({IcewardenBinary(), "config", "validate", path}, no_tokens);
  EXPECT_EQ(lenient.exit_code, 0) << lenient.err;
  EXPECT_NE(lenient.err.find(at), std::string::npos) << lenient.err;
  EXPECT_NE(lenient.err.find(": warning: api.tokens[0].token_env: environment variable "
                             "ICEWARDEN_VIEWER_TOKEN is not set"),
            std::string::npos)
      << lenient.err;
  EXPECT_NE(lenient.out.find(": ok ("), std::string::npos) << lenient.out;
  EXPECT_NE(lenient.out.find("6 warnings"), std::string::npos) << lenient.out;

  auto strict = RunCommand({IcewardenBinary(), "config", "validate", "--strict", path}, no_tokens);
  EXPECT_EQ(strict.exit_code, 2) << strict.err;
  EXPECT_NE(strict.err.find(at), std::string::npos) << strict.err;
  EXPECT_EQ(strict.err.find("warning:"), std::string::npos) << strict.err;
  EXPECT_NE(strict.err.find("6 errors"), std::string::npos) << strict.err;
  EXPECT_TRUE(strict.out.empty()) << strict.out;

  std::string dir = testing::MakeTempDir("icewarden-validate");
  auto serve = RunCommand({IcewardenBinary(), "serve", "--config", path, "--listen", "127.0.0.1:0",
                           "--state", dir + "/state.db"},
                          no_tokens, std::chrono::seconds(10));
  EXPECT_EQ(serve.exit_code, 2) << serve.err;
  EXPECT_NE(serve.err.find("ICEWARDEN_VIEWER_TOKEN is not set"), std::string::npos) << serve.err;
  std::filesystem::remove_all(dir);
}

TEST(CliUsage, UnknownCommandsAndMissingArgumentsExitTwo) {
  EXPECT_EQ(RunCommand({IcewardenBinary(), "frobnicate"}).exit_code, 2);
  EXPECT_EQ(RunCommand({IcewardenBinary(), "failover", "show"}).exit_code, 2);
  EXPECT_EQ(RunCommand({IcewardenBinary(), "status", "--output", "yaml"}).exit_code, 2);
  auto help = RunCommand({IcewardenBinary(), "ownership", "list", "--help"});
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_NE(help.out.find("--owner"), std::string::npos);
}

}  // namespace
}  // namespace icewarden

namespace icewarden {
namespace {

// A probe that cannot be built from its settings is a config error: exit 2 with the reason,
// before anything listens.
TEST(ServeProbeConfig, ATcpProbeWithoutAUsablePortIsRefusedAtStart) {
  std::string dir = testing::MakeTempDir("icewarden-probe-config");
  std::ofstream(dir + "/c.yaml") << R"(api:
  listen: 127.0.0.1:0
state:
  path: state.db
regions:
  - name: us-east-1
    catalog_uri: http://127.0.0.1:notaport/catalog
    probe: {kinds: [tcp]}
ownership:
  default_owner: us-east-1
)";
  auto r = testing::RunCommand({testing::IcewardenBinary(), "serve", "--config", dir + "/c.yaml"},
                               {}, std::chrono::seconds(20));
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("cannot derive tcp target"), std::string::npos) << r.err;
  EXPECT_EQ(r.out.find("serving"), std::string::npos);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace icewarden
