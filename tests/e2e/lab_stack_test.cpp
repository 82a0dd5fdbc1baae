// The lab stack of scripts/run-lab.sh (tests/e2e/lab_stack.h) comes up whole: the writers'
// name in BIND, Alertmanager, both catalogs behind `icewarden serve`, and a config with the
// failover routes that `icewarden config validate` accepts. Failover tests build on it.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <set>

#include "tests/e2e/lab_stack.h"

namespace icewarden::testing {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

// The region names GET /api/v1/regions lists, and whether all of them are healthy.
std::set<std::string> RegionNames(const HttpReply& reply, bool* all_healthy = nullptr) {
  std::set<std::string> names;
  if (all_healthy) *all_healthy = reply.status == 200;
  if (!reply.body.is_object() || !reply.body.contains("regions") ||
      !reply.body["regions"].is_array())
    return names;
  for (const auto& r : reply.body["regions"]) {
    names.insert(r.value("name", ""));
    if (all_healthy) *all_healthy = *all_healthy && r.value("health", "") == "healthy";
  }
  return names;
}

// nsupdate with the commands in `script`, signed with `key` unless it is null.
CommandResult NsUpdate(const LabStack& stack, const std::string& script, const BindKey* key) {
  const std::string file = stack.dir() + "/nsupdate.txt";
  const std::string host = stack.dns_server().substr(0, stack.dns_server().find(':'));
  const std::string port = stack.dns_server().substr(stack.dns_server().find(':') + 1);
  std::ofstream(file) << "server " << host << " " << port << "\nzone " << kLabZone << ".\n"
                      << script << "send\n";
  std::vector<std::string> argv{"/usr/bin/nsupdate"};
  if (key) argv.push_back("-y" + key->algorithm + ":" + key->name + ":" + key->secret);
  argv.push_back(file);
  return RunCommand(argv);
}

class LabStackSmokeTest : public LabStackTest {};

TEST_F(LabStackSmokeTest, EveryServerOfTheLabAnswersAndTheConfigValidates) {
  // DNS: writers go to the default owner's catalog; both catalog names resolve to loopback.
  EXPECT_THAT(stack_->Dig("writer.lake.lab", "CNAME"), ElementsAre("catalog.us-east-1.lake.lab."));
  EXPECT_THAT(stack_->Dig("catalog.eu-central-1.lake.lab", "A"), ElementsAre("127.0.0.1"));
  EXPECT_THAT(stack_->Dig("catalog.us-east-1.lake.lab", "A"), ElementsAre("127.0.0.1"));

  // Only an update signed with the stack's TSIG key (the one serve has) changes the zone.
  auto unsigned_update =
      NsUpdate(*stack_, "update add probe.lake.lab. 5 TXT \"anyone\"\n", nullptr);
  EXPECT_NE(unsigned_update.exit_code, 0) << unsigned_update.out << unsigned_update.err;
  EXPECT_THAT(stack_->Dig("probe.lake.lab", "TXT"), IsEmpty());
  const BindKey key = LabStack::tsig_key();
  auto signed_update = NsUpdate(*stack_, "update add probe.lake.lab. 5 TXT \"signed\"\n", &key);
  EXPECT_EQ(signed_update.exit_code, 0) << signed_update.out << signed_update.err;
  EXPECT_THAT(stack_->Dig("probe.lake.lab", "TXT"), ElementsAre("\"signed\""));

  // Alertmanager takes alerts and has none yet.
  EXPECT_TRUE(stack_->AlertmanagerAlerts().is_array());
  EXPECT_THAT(stack_->AlertmanagerAlerts(), IsEmpty());

  // serve knows both regions and sees both catalogs healthy.
  const std::set<std::string> both{kLabUs, kLabEu};
  EXPECT_EQ(RegionNames(stack_->Api("GET", "/api/v1/regions", "", "viewer")), both);
  bool healthy = false;
  EXPECT_TRUE(Eventually([&] {
    RegionNames(stack_->Api("GET", "/api/v1/regions"), &healthy);
    return healthy;
  })) << stack_->Api("GET", "/api/v1/regions").text;

  // The lab's admin API drives the same catalogs serve watches.
  auto state = stack_->LabAdmin("GET", "/lab/state");
  ASSERT_EQ(state.status, 200) << state.text;
  EXPECT_EQ(state.body["regions"].size(), 2u) << state.text;

  // The generated config, failovers routes included, is one `config validate` accepts.
  auto validate = RunCommand({IcewardenBinary(), "config", "validate", stack_->config_path()},
                             stack_->ServeEnv());
  EXPECT_EQ(validate.exit_code, 0) << validate.err;
  EXPECT_THAT(validate.out, HasSubstr(": ok"));

  // After a SIGKILL serve comes back on the same address with the same view.
  const std::string url = stack_->serve_url();
  stack_->KillServe(SIGKILL);
  EXPECT_EQ(stack_->Api("GET", "/api/v1/regions").status, -1) << "serve is down";
  ASSERT_EQ(stack_->RestartServe(), "");
  EXPECT_EQ(stack_->serve_url(), url);
  EXPECT_EQ(RegionNames(stack_->Api("GET", "/api/v1/regions")), both);
  auto status = stack_->Cli({"status"}, "viewer");
  EXPECT_EQ(status.exit_code, 0) << status.err;
  EXPECT_THAT(status.out, HasSubstr(kLabEu));
}

}  // namespace
}  // namespace icewarden::testing
