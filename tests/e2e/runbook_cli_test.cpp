// `icewarden runbook validate|plan` with the real action kinds, as an operator runs them.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "tests/fakes/subprocess.h"
#include "tests/fakes/test_paths.h"

namespace icewarden {
namespace {

using testing::IcewardenBinary;
using testing::RunCommand;
using testing::SourceDir;

TEST(RunbookCli, EveryExampleRunbookValidatesAgainstTheRealActions) {
  int seen = 0;
  for (const auto& entry :
       std::filesystem::directory_iterator(SourceDir() + "/examples/runbooks")) {
    if (entry.path().extension() != ".yaml") continue;
    ++seen;
    auto r = RunCommand({IcewardenBinary(), "runbook", "validate", entry.path().string()});
    EXPECT_EQ(r.exit_code, 0) << entry.path() << "\n" << r.err;
    EXPECT_NE(r.out.find(": ok ("), std::string::npos) << r.out;
  }
  EXPECT_GE(seen, 4);
}

TEST(RunbookCli, ABrokenRunbookGetsItsPositionAndExitTwo) {
  auto r = RunCommand({IcewardenBinary(), "runbook", "validate",
                       SourceDir() + "/tests/unit/runbooks/corpus/unknown_action_kind.yaml"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(
      r.err.find(
          "unknown_action_kind.yaml:5:13: promote[0].action: unknown action kind 'dns.rfc2163'"),
      std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("ownership.transfer"), std::string::npos)
      << "lists the real kinds: " << r.err;
}

// A runbook whose text is not UTF-8 (a Latin-1 description) plans as JSON with U+FFFD in its
// place; the JSON writer threw and the CLI died in std::terminate (found by tests/fuzz).
TEST(RunbookCli, ANonUtf8RunbookPlansAsJson) {
  const std::string dir = testing::MakeTempDir("icewarden-plan-latin1");
  const std::string file = dir + "/latin1.yaml";
  std::ofstream(file) << "name: caf\xe9\ndescription: \"d\xe9placer\"\n"
                      << "promote:\n  - {id: settle, action: wait, params: {duration: 1s}}\n";
  auto out = RunCommand({IcewardenBinary(), "runbook", "plan", file, "--from", "us-east-1", "--to",
                         "eu-central-1", "--scope", "owner:us-east-1", "--output", "json"},
                        {});
  ASSERT_EQ(out.exit_code, 0) << out.err;
  auto parsed = nlohmann::json::parse(out.out, nullptr, false);
  ASSERT_FALSE(parsed.is_discarded()) << out.out;
  EXPECT_NE(out.out.find("caf\xef\xbf\xbd"), std::string::npos) << out.out;
}

TEST(RunbookCli, PlanResolvesEverythingAndMasksSecrets) {
  // A copy beside its ${file:secrets/...} secret, as an operator would lay it out.
  const std::string dir = testing::MakeTempDir("icewarden-plan");
  const std::string file = dir + "/single-writer-failover.yaml";
  std::filesystem::copy_file(SourceDir() + "/examples/runbooks/single-writer-failover.yaml", file);
  std::filesystem::create_directories(dir + "/secrets");
  std::ofstream(dir + "/secrets/webhook-hmac") << "hmac-secret-789\n";
  std::map<std::string, std::string> env{{"FENCE_TOKEN", "fence-secret-123"},
                                         {"DNS_TSIG_SECRET", "dHNpZy1zZWNyZXQtNDU2"}};
  auto text = RunCommand({IcewardenBinary(), "runbook", "plan", file, "--from", "us-east-1", "--to",
                          "eu-central-1", "--scope", "owner:us-east-1"},
                         env);
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("eu-central-1"), std::string::npos);
  EXPECT_EQ(text.out.find("fence-secret-123"), std::string::npos) << "secret leaked";
  EXPECT_EQ(text.out.find("dHNpZy1zZWNyZXQtNDU2"), std::string::npos) << "secret leaked";
  EXPECT_EQ(text.out.find("hmac-secret-789"), std::string::npos) << "secret leaked";
  EXPECT_NE(text.out.find("***"), std::string::npos);

  auto json = RunCommand({IcewardenBinary(), "runbook", "plan", file, "--from", "us-east-1", "--to",
                          "eu-central-1", "--scope", "owner:us-east-1", "--output", "json"},
                         env);
  ASSERT_EQ(json.exit_code, 0) << json.err;
  EXPECT_EQ(json.out.find("fence-secret-123"), std::string::npos);
  auto parsed = nlohmann::json::parse(json.out);
  EXPECT_EQ(parsed["failover"]["to"], "eu-central-1");
  ASSERT_TRUE(parsed["steps"].is_array());
  ASSERT_FALSE(parsed["steps"].empty());
  const nlohmann::json& first = parsed["steps"][0];
  EXPECT_EQ(first["id"], "stop-old-writers");
  EXPECT_EQ(first["action"], "fence.http");
  EXPECT_EQ(first["params"]["headers"]["Authorization"], "Bearer ***") << first.dump();

  auto missing = RunCommand({IcewardenBinary(), "runbook", "plan", file, "--from", "us-east-1",
                             "--to", "eu-central-1", "--scope", "owner:us-east-1"});
  EXPECT_EQ(missing.exit_code, 2) << "unset secrets are an error, not an empty string";
  EXPECT_NE(missing.err.find("FENCE_TOKEN"), std::string::npos) << missing.err;
  std::filesystem::remove_all(dir);
}

// The lab's runbook moves the writers' name and fences the old owner in either direction,
// with the TSIG secret masked (what `runbook plan` in docs/runbooks.md promises).
TEST(RunbookCli, TheLabRunbookPlansBothDirections) {
  const std::string file = SourceDir() + "/examples/runbooks/lab-failover.yaml";
  for (auto [from, to] :
       {std::pair{"us-east-1", "eu-central-1"}, std::pair{"eu-central-1", "us-east-1"}}) {
    auto r = RunCommand({IcewardenBinary(), "runbook", "plan", file, "--from", from, "--to", to,
                         "--scope", std::string("owner:") + from, "--output", "json"},
                        {{"DNS_TSIG_SECRET", "bGFiLXRzaWctc2VjcmV0"}});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.out.find("bGFiLXRzaWctc2VjcmV0"), std::string::npos) << "secret leaked";
    auto plan = nlohmann::json::parse(r.out);
    std::map<std::string, nlohmann::json> params_of;  // by action kind
    for (const auto& step : plan["steps"]) params_of[step["action"]] = step["params"];
    EXPECT_EQ(params_of["fence.catalog_quiet"]["region"], from) << r.out;
    EXPECT_EQ(params_of["ownership.transfer"]["scope"], std::string("owner:") + from);
    const nlohmann::json& dns = params_of["dns.rfc2136"];
    EXPECT_EQ(dns["server"], "127.0.0.1:18153");
    EXPECT_EQ(dns["tsig_secret"], "***");
    ASSERT_EQ(dns["records"].size(), 1u) << dns.dump();
    EXPECT_EQ(dns["records"][0]["name"], "writer.lake.lab.");
    EXPECT_EQ(dns["records"][0]["value"], std::string("catalog.") + to + ".lake.lab.");
    EXPECT_EQ(params_of["verify.dns"]["expect"], std::string("catalog.") + to + ".lake.lab.");
    EXPECT_EQ(params_of["verify.catalog_healthy"]["region"], to);
    EXPECT_EQ(params_of["alert.alertmanager"]["url"], "http://127.0.0.1:19093");
  }
}

}  // namespace
}  // namespace icewarden
